"""The request and answer types of the Kairos HTTP API, one dataclass per schema of
server/openapi.json, with its field names. An optional field the server left out is None;
dates are the server's RFC 3339 strings."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._decode import Obj

StrOrList = Union[str, Sequence[str]]


def _wire(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_wire(x) for x in v]
    if hasattr(v, "to_json"):
        return v.to_json()
    return v


def _request_json(obj: Any) -> Dict[str, Any]:
    """The fields set (not None): an unset field is left to the server's default."""
    out: Dict[str, Any] = {}
    for f in fields(obj):
        v = getattr(obj, f.name)
        if v is not None:
            out[f.name] = _wire(v)
    return out


# --- requests -------------------------------------------------------------------------------


@dataclass
class Filters:
    """Filters of a query (Filters in openapi.json): dates inclusive, YYYY-MM-DD or RFC 3339;
    source, language and block_type (text, table, infobox) a name or a list of names."""

    date_from: Optional[str] = None
    date_to: Optional[str] = None
    source: Optional[StrOrList] = None
    language: Optional[StrOrList] = None
    block_type: Optional[StrOrList] = None

    def to_json(self) -> Dict[str, Any]:
        return _request_json(self)


@dataclass
class Query:
    """One query of POST /v1/search (Query in openapi.json). Fields left None are not sent,
    so the server's defaults apply (k 10, the index's mode, ...) and its checks refuse a bad
    value (BadRequest) rather than the client replacing it."""

    text: str
    k: Optional[int] = None
    mode: Optional[str] = None  # bm25, dense, hybrid
    time: Optional[str] = None
    rerank: Optional[StrOrList] = None  # none, time, cross, cross,time, wikichat
    candidates: Optional[int] = None
    explain: Optional[bool] = None
    exact: Optional[bool] = None
    per_doc: Optional[int] = None
    min_score: Optional[float] = None
    fusion: Optional[str] = None  # rrf, convex
    alpha: Optional[float] = None
    rrf_k: Optional[int] = None
    now: Optional[str] = None
    recent_half_life_years: Optional[float] = None
    filters: Optional[Union[Filters, Mapping[str, Any]]] = None

    def to_json(self) -> Dict[str, Any]:
        out = _request_json(self)
        if isinstance(self.filters, Mapping):
            out["filters"] = dict(self.filters)
        return out


@dataclass
class WikiChatFilter:
    """One of WikiChat's search_filters: field_name last_edit_date, source, language or
    block_type; filter_type eq, ne, lt, lte, gt or gte."""

    field_name: str
    filter_type: str
    field_value: Union[str, int, float, bool]

    def to_json(self) -> Dict[str, Any]:
        return _request_json(self)


# --- search answers -------------------------------------------------------------------------


@dataclass(frozen=True)
class TimeSpec:
    """The time need a query ran with: kind none, recent, range or auto; from_ and to are
    the years of a range ("from" and "to" in the JSON)."""

    kind: str
    from_: Optional[int] = None
    to: Optional[int] = None

    @classmethod
    def from_json(cls, o: Obj) -> "TimeSpec":
        return cls(kind=o.req("kind", "string"), from_=o.opt("from", "integer"), to=o.opt("to", "integer"))


@dataclass(frozen=True)
class Explain:
    """A hit's score breakdown (``explain=True``)."""

    retrieval: float
    relevance: float
    final: float
    formula: Optional[str] = None
    cross: Optional[float] = None
    time: Optional[float] = None
    notes: Optional[List[str]] = None
    unscored: Optional[bool] = None
    wikichat_key: Optional[int] = None

    @classmethod
    def from_json(cls, o: Obj) -> "Explain":
        return cls(
            retrieval=o.req("retrieval", "number"),
            relevance=o.req("relevance", "number"),
            final=o.req("final", "number"),
            formula=o.opt("formula", "string"),
            cross=o.opt("cross", "number"),
            time=o.opt("time", "number"),
            notes=o.items("notes", "string", required=False),
            unscored=o.opt("unscored", "boolean"),
            wikichat_key=o.opt("wikichat_key", "integer"),
        )


@dataclass(frozen=True)
class Hit:
    """One passage found (Hit): text is title-prefixed; url is empty when the passage has no
    http(s) link; scores holds the components (bm25, dense, doc_evidence, ...)."""

    rank: int
    score: float
    passage_id: str
    doc_id: str
    title: str
    section: str
    text: str
    url: str
    block_type: str
    date: Optional[str] = None
    source: Optional[str] = None
    scores: Optional[Dict[str, float]] = None
    explain: Optional[Explain] = None

    @classmethod
    def from_json(cls, o: Obj) -> "Hit":
        ex = o.obj("explain", required=False)
        return cls(
            rank=o.req("rank", "integer"),
            score=o.req("score", "number"),
            passage_id=o.req("passage_id", "string"),
            doc_id=o.req("doc_id", "string"),
            title=o.req("title", "string"),
            section=o.req("section", "string"),
            text=o.req("text", "string"),
            url=o.req("url", "string"),
            block_type=o.req("block_type", "string"),
            date=o.opt("date", "string"),
            source=o.opt("source", "string"),
            scores=o.mapping("scores", "number"),
            explain=None if ex is None else Explain.from_json(ex),
        )


@dataclass(frozen=True)
class QueryResult:
    """The answer to one query: the query, the mode that ran, the rerank stages, the time
    need read, and the hits, best first."""

    query: str
    mode: str
    rerank: List[str]
    time: TimeSpec
    hits: List[Hit]

    @classmethod
    def from_json(cls, o: Obj) -> "QueryResult":
        t = o.obj("time")
        assert t is not None
        return cls(
            query=o.req("query", "string"),
            mode=o.req("mode", "string"),
            rerank=o.items("rerank", "string") or [],
            time=TimeSpec.from_json(t),
            hits=o.objs("hits", Hit.from_json) or [],
        )


@dataclass(frozen=True)
class SearchResponse:
    """The answer of POST /v1/search: one result per query, in order, and the time taken."""

    results: List[QueryResult]
    took_ms: float

    @classmethod
    def from_json(cls, o: Obj) -> "SearchResponse":
        return cls(results=o.objs("results", QueryResult.from_json) or [], took_ms=o.req("took_ms", "number"))


@dataclass(frozen=True)
class YearSpan:
    """A year or range of years a passage mentions, at word position pos."""

    from_: Optional[int] = None
    to: Optional[int] = None
    pos: Optional[int] = None

    @classmethod
    def from_json(cls, o: Obj) -> "YearSpan":
        return cls(from_=o.opt("from", "integer"), to=o.opt("to", "integer"), pos=o.opt("pos", "integer"))


@dataclass(frozen=True)
class Passage:
    """One passage (GET /v1/passages/{id}); ordinal is its place in its document."""

    passage_id: str
    doc_id: str
    title: str
    section: str
    text: str
    url: str
    ordinal: int
    block_type: str
    date: Optional[str] = None
    source: Optional[str] = None
    years: Optional[List[YearSpan]] = None

    @classmethod
    def from_json(cls, o: Obj) -> "Passage":
        return cls(
            passage_id=o.req("passage_id", "string"),
            doc_id=o.req("doc_id", "string"),
            title=o.req("title", "string"),
            section=o.req("section", "string"),
            text=o.req("text", "string"),
            url=o.req("url", "string"),
            ordinal=o.req("ordinal", "integer"),
            block_type=o.req("block_type", "string"),
            date=o.opt("date", "string"),
            source=o.opt("source", "string"),
            years=o.objs("years", YearSpan.from_json, required=False),
        )


# --- WikiChat answers -----------------------------------------------------------------------


@dataclass(frozen=True)
class WikiChatBlock:
    """A block of WikiChat 2.1's answer: content without the title prefix; url and
    last_edit_date None when the passage has none; block_metadata holds passage_id, doc_id,
    rank, language, block_type and source."""

    document_title: str
    section_title: str
    content: str
    last_edit_date: Optional[str]
    url: Optional[str]
    block_metadata: Dict[str, Any]
    similarity_score: float
    probability_score: float

    @classmethod
    def from_json(cls, o: Obj) -> "WikiChatBlock":
        return cls(
            document_title=o.req("document_title", "string"),
            section_title=o.req("section_title", "string"),
            content=o.req("content", "string"),
            last_edit_date=o.req_nullable("last_edit_date", "string"),
            url=o.req_nullable("url", "string"),
            block_metadata=o.req("block_metadata", "object"),
            similarity_score=o.req("similarity_score", "number"),
            probability_score=o.req("probability_score", "number"),
        )


@dataclass(frozen=True)
class WikiChatV20Result:
    """WikiChat 2.0's answer to one query: parallel lists, one entry per block, best first."""

    text: List[str]
    title: List[str]
    full_section_title: List[str]
    block_type: List[str]
    language: List[str]
    prob: List[float]
    score: List[float]
    last_edit_date: List[Optional[str]]

    @classmethod
    def from_json(cls, o: Obj) -> "WikiChatV20Result":
        return cls(
            text=o.items("text", "string") or [],
            title=o.items("title", "string") or [],
            full_section_title=o.items("full_section_title", "string") or [],
            block_type=o.items("block_type", "string") or [],
            language=o.items("language", "string") or [],
            prob=o.items("prob", "number") or [],
            score=o.items("score", "number") or [],
            last_edit_date=o.items("last_edit_date", "string", nullable_items=True) or [],
        )


@dataclass(frozen=True)
class WikiChatV1Result:
    """WikiChat 1.0's (ColBERT server's) answer: parallel lists, best first; passages are
    title-prefixed, passage_ids Kairos's ids."""

    passages: List[str]
    passage_ids: List[str]
    passage_ranks: List[int]
    passage_scores: List[float]
    passage_probs: List[float]

    @classmethod
    def from_json(cls, o: Obj) -> "WikiChatV1Result":
        return cls(
            passages=o.items("passages", "string") or [],
            passage_ids=o.items("passage_ids", "string") or [],
            passage_ranks=o.items("passage_ranks", "integer") or [],
            passage_scores=o.items("passage_scores", "number") or [],
            passage_probs=o.items("passage_probs", "number") or [],
        )


# --- chat -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatUsage:
    """LLM tokens (as the LLM reported them, or estimated for estimated_calls) and cost."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    calls: int
    estimated_calls: Optional[int] = None
    cost: Optional[float] = None

    @classmethod
    def from_json(cls, o: Obj) -> "ChatUsage":
        return cls(
            prompt_tokens=o.req("prompt_tokens", "integer"),
            completion_tokens=o.req("completion_tokens", "integer"),
            total_tokens=o.req("total_tokens", "integer"),
            calls=o.req("calls", "integer"),
            estimated_calls=o.opt("estimated_calls", "integer"),
            cost=o.opt("cost", "number"),
        )


def _usage(o: Obj, key: str) -> Optional[ChatUsage]:
    u = o.obj(key, required=False)
    return None if u is None else ChatUsage.from_json(u)


@dataclass(frozen=True)
class ChatCitation:
    """A passage the reply cites: n is the number of its [n] marker (None when the reply has
    no marker and this is a passage it was built from); facts the verified facts drawn from it."""

    passage_id: str
    title: str
    n: Optional[int] = None
    section: Optional[str] = None
    url: Optional[str] = None
    facts: Optional[List[str]] = None

    @classmethod
    def from_json(cls, o: Obj) -> "ChatCitation":
        return cls(
            passage_id=o.req("passage_id", "string"),
            title=o.req("title", "string"),
            n=o.opt("n", "integer"),
            section=o.opt("section", "string"),
            url=o.opt("url", "string"),
            facts=o.items("facts", "string", required=False),
        )


@dataclass(frozen=True)
class StageTrace:
    """One stage of a chat turn, in the order the stages finished: timings in milliseconds,
    its LLM calls and usage, its parsed output, and the outputs it could not use (errors)."""

    stage: str
    start_ms: float
    duration_ms: float
    llm_ms: float
    calls: int
    usage: Optional[ChatUsage] = None
    output: Any = None
    errors: Optional[List[str]] = None

    @classmethod
    def from_json(cls, o: Obj) -> "StageTrace":
        return cls(
            stage=o.req("stage", "string"),
            start_ms=o.req("start_ms", "number"),
            duration_ms=o.req("duration_ms", "number"),
            llm_ms=o.req("llm_ms", "number"),
            calls=o.req("calls", "integer"),
            usage=_usage(o, "usage"),
            output=o.opt("output", "any"),
            errors=o.items("errors", "string", required=False),
        )


@dataclass(frozen=True)
class ChatResponse:
    """One chat turn's answer. grounded: every sentence was checked against the passages it
    cites (wikichat, commonsense); False: the pipeline answered from the LLM, a memory pool or
    an example bank, unchecked. session_token is set when this turn started a session (the
    Client keeps it and sends it back). stages and trace come only from a server started with
    --chat-trace: they hold the LLM's unchecked text."""

    conversation_id: str
    reply: str
    citations: List[ChatCitation]
    grounded: bool
    stages: Optional[Dict[str, Any]] = None
    trace: Optional[List[StageTrace]] = None
    session_token: Optional[str] = None
    pipeline: Optional[str] = None
    usage: Optional[ChatUsage] = None
    conversation_usage: Optional[ChatUsage] = None

    @classmethod
    def from_json(cls, o: Obj) -> "ChatResponse":
        return cls(
            conversation_id=o.req("conversation_id", "string"),
            reply=o.req("reply", "string"),
            citations=o.objs("citations", ChatCitation.from_json) or [],
            grounded=o.req("grounded", "boolean"),
            stages=o.opt("stages", "object"),
            trace=o.objs("trace", StageTrace.from_json, required=False),
            session_token=o.opt("session_token", "string"),
            pipeline=o.opt("pipeline", "string"),
            usage=_usage(o, "usage"),
            conversation_usage=_usage(o, "conversation_usage"),
        )


@dataclass(frozen=True)
class ChatTurn:
    """A turn kept in a conversation: index counts from 0 (turns the store dropped included)."""

    index: int
    time: str
    pipeline: str
    user: str
    reply: str
    citations: List[ChatCitation]
    grounded: bool

    @classmethod
    def from_json(cls, o: Obj) -> "ChatTurn":
        return cls(
            index=o.req("index", "integer"),
            time=o.req("time", "string"),
            pipeline=o.req("pipeline", "string"),
            user=o.req("user", "string"),
            reply=o.req("reply", "string"),
            citations=o.objs("citations", ChatCitation.from_json) or [],
            grounded=o.req("grounded", "boolean"),
        )


@dataclass(frozen=True)
class Conversation:
    """A conversation as GET /v1/chat/{id} returns it to its owner (ChatConversation)."""

    conversation_id: str
    created: str
    turns: List[ChatTurn]
    dropped_turns: Optional[int] = None
    usage: Optional[ChatUsage] = None

    @classmethod
    def from_json(cls, o: Obj) -> "Conversation":
        return cls(
            conversation_id=o.req("conversation_id", "string"),
            created=o.req("created", "string"),
            turns=o.objs("turns", ChatTurn.from_json) or [],
            dropped_turns=o.opt("dropped_turns", "integer"),
            usage=_usage(o, "usage"),
        )


# --- operations -----------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexStats:
    """The index part of GET /v1/stats."""

    documents: Optional[int] = None
    passages: Optional[int] = None
    sources: Optional[Dict[str, int]] = None
    languages: Optional[Dict[str, int]] = None
    date_from: Optional[str] = None
    date_to: Optional[str] = None
    dense: Optional[bool] = None
    model: Optional[str] = None
    created: Optional[str] = None
    format_version: Optional[int] = None
    size_bytes: Optional[int] = None
    default_mode: Optional[str] = None

    @classmethod
    def from_json(cls, o: Obj) -> "IndexStats":
        return cls(
            documents=o.opt("documents", "integer"),
            passages=o.opt("passages", "integer"),
            sources=o.mapping("sources", "integer"),
            languages=o.mapping("languages", "integer"),
            date_from=o.opt("date_from", "string"),
            date_to=o.opt("date_to", "string"),
            dense=o.opt("dense", "boolean"),
            model=o.opt("model", "string"),
            created=o.opt("created", "string"),
            format_version=o.opt("format_version", "integer"),
            size_bytes=o.opt("size_bytes", "integer"),
            default_mode=o.opt("default_mode", "string"),
        )


@dataclass(frozen=True)
class ServerStats:
    """The server part of GET /v1/stats; chat_pipelines is None when chat is not configured
    (default pipeline first otherwise); generation counts the loads of the index."""

    version: Optional[str] = None
    revision: Optional[str] = None
    go_version: Optional[str] = None
    started: Optional[str] = None
    generation: Optional[int] = None
    loaded_at: Optional[str] = None
    collection: Optional[str] = None
    chat_pipelines: Optional[List[str]] = None

    @classmethod
    def from_json(cls, o: Obj) -> "ServerStats":
        chat = o.obj("chat", required=False)
        return cls(
            version=o.opt("version", "string"),
            revision=o.opt("revision", "string"),
            go_version=o.opt("go_version", "string"),
            started=o.opt("started", "string"),
            generation=o.opt("generation", "integer"),
            loaded_at=o.opt("loaded_at", "string"),
            collection=o.opt("collection", "string"),
            chat_pipelines=None if chat is None else (chat.items("pipelines", "string", required=False) or []),
        )


@dataclass(frozen=True)
class Stats:
    """GET /v1/stats: the index and the server."""

    index: IndexStats
    server: ServerStats

    @classmethod
    def from_json(cls, o: Obj) -> "Stats":
        i, s = o.obj("index"), o.obj("server")
        assert i is not None and s is not None
        return cls(index=IndexStats.from_json(i), server=ServerStats.from_json(s))


@dataclass(frozen=True)
class Health:
    """GET /healthz or /readyz: status ("ok", "ready", "not ready"), why not, and on a
    server of several collections each one's."""

    status: str
    reason: Optional[str] = None
    generation: Optional[int] = None
    passages: Optional[int] = None
    took_ms: Optional[float] = None
    collection: Optional[str] = None
    collections: Optional[List["Health"]] = None

    @property
    def ready(self) -> bool:
        return self.status in ("ok", "ready")

    @classmethod
    def from_json(cls, o: Obj) -> "Health":
        return cls(
            status=o.req("status", "string"),
            reason=o.opt("reason", "string"),
            generation=o.opt("generation", "integer"),
            passages=o.opt("passages", "integer"),
            took_ms=o.opt("took_ms", "number"),
            collection=o.opt("collection", "string"),
            collections=o.objs("collections", Health.from_json, required=False),
        )


@dataclass(frozen=True)
class CollectionInfo:
    """One collection of GET /v1/collections; default: served by the routes naming none."""

    name: str
    default: bool
    status: str
    passages: int
    dense: bool
    generation: Optional[int] = None
    default_mode: Optional[str] = None
    loaded_at: Optional[str] = None

    @classmethod
    def from_json(cls, o: Obj) -> "CollectionInfo":
        return cls(
            name=o.req("name", "string"),
            default=o.req("default", "boolean"),
            status=o.req("status", "string"),
            passages=o.req("passages", "integer"),
            dense=o.req("dense", "boolean"),
            generation=o.opt("generation", "integer"),
            default_mode=o.opt("default_mode", "string"),
            loaded_at=o.opt("loaded_at", "string"),
        )

