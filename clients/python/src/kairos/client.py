"""Client: the calls of the Kairos HTTP API (server/openapi.json), each returning the
dataclasses of kairos.models or raising a kairos.errors.KairosError."""

from __future__ import annotations

import json
import socket
import urllib.parse
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from ._version import __version__
from ._decode import Obj, list_of
from ._http import Transport, wrap_protocol
from ._sse import events
from .errors import ProtocolError, Timeout, Unreachable, error_for_status
from .models import (
    ChatResponse,
    CollectionInfo,
    Conversation,
    Filters,
    Health,
    Passage,
    Query,
    QueryResult,
    SearchResponse,
    Stats,
    WikiChatBlock,
    WikiChatFilter,
    WikiChatV1Result,
    WikiChatV20Result,
)

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for a search, passage or stats answer (the server's own --timeout is 10 s)."""

DEFAULT_CHAT_TIMEOUT = 150.0
"""Seconds to wait for a chat turn, or between two events of a stream: past the server's
--chat-timeout of 2 minutes, so that the server's own 504 arrives first."""

SESSION_HEADER = "X-Kairos-Session"


class Client:
    """A client of one `kairos serve`.

    Args:
        base_url: the server, e.g. "http://127.0.0.1:8080".
        api_key: sent as ``Authorization: Bearer KEY`` (serve's --api-key-file); None: none.
        timeout: seconds to wait for a retrieval answer (DEFAULT_TIMEOUT).
        chat_timeout: seconds to wait for a chat turn (DEFAULT_CHAT_TIMEOUT).
        collection: on a server of several collections (serve --index NAME=DIR ...), the one
            searched, read and counted; None: the server's default collection.
        session_token: a session token a previous chat answer returned; the client keeps the
            one the server issues with the first turn of a session, and sends it back
            (X-Kairos-Session) with every chat call.

    A Client holds no connection; it can be shared by threads, except that the session token
    is one per Client: give each end user of a gateway a Client of their own.
    """

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        chat_timeout: float = DEFAULT_CHAT_TIMEOUT,
        collection: Optional[str] = None,
        session_token: Optional[str] = None,
    ) -> None:
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise ValueError(f"base_url {base_url!r}: want http://HOST:PORT or https://HOST:PORT")
        if timeout <= 0 or chat_timeout <= 0:
            raise ValueError("timeout and chat_timeout must be positive seconds")
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.chat_timeout = float(chat_timeout)
        self.collection = collection
        self.session_token = session_token
        headers = {"Accept": "application/json", "User-Agent": f"kairos-python/{__version__}"}
        if api_key is not None:
            if not api_key or any(c.isspace() for c in api_key):
                raise ValueError("api_key: want the key, one word without spaces")
            headers["Authorization"] = f"Bearer {api_key}"
        self._t = Transport(self.base_url, headers)

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, collection={self.collection!r})"

    # --- routes -----------------------------------------------------------------------------

    def _native(self, rest: str) -> str:
        if self.collection is None:
            return "/v1/" + rest
        return f"/v1/collections/{_seg(self.collection)}/{rest}"

    def _wikichat(self, rest: str) -> str:
        return ("" if self.collection is None else "/" + _seg(self.collection)) + rest

    def _call(self, method: str, path: str, body: Any, parse: Callable[[Any], T], *,
              headers: Optional[Mapping[str, str]] = None, answer_status: Tuple[int, ...] = ()) -> T:
        value, hdrs = self._t.json(method, path, body, timeout=self.timeout, headers=headers,
                                   answer_status=answer_status)
        try:
            return parse(value)
        except ProtocolError as e:
            raise wrap_protocol(e, f"{method} {path}", hdrs.get("X-Request-Id")) from None

    def _session_headers(self) -> Dict[str, str]:
        return {SESSION_HEADER: self.session_token} if self.session_token else {}

    # --- search -----------------------------------------------------------------------------

    def search(
        self,
        text: str,
        *,
        k: Optional[int] = None,
        mode: Optional[str] = None,
        time: Optional[str] = None,
        rerank: Optional[Union[str, Sequence[str]]] = None,
        candidates: Optional[int] = None,
        explain: Optional[bool] = None,
        exact: Optional[bool] = None,
        per_doc: Optional[int] = None,
        min_score: Optional[float] = None,
        fusion: Optional[str] = None,
        alpha: Optional[float] = None,
        rrf_k: Optional[int] = None,
        now: Optional[str] = None,
        recent_half_life_years: Optional[float] = None,
        filters: Optional[Union[Filters, Mapping[str, Any]]] = None,
    ) -> QueryResult:
        """Searches one query (POST /v1/search); the fields are Query's, each left to the
        server's default when None (k 10, the index's mode: hybrid when dense, else bm25)."""
        q = Query(text=text, k=k, mode=mode, time=time, rerank=rerank, candidates=candidates, explain=explain,
                  exact=exact, per_doc=per_doc, min_score=min_score, fusion=fusion, alpha=alpha, rrf_k=rrf_k,
                  now=now, recent_half_life_years=recent_half_life_years, filters=filters)
        def parse(v: Any) -> QueryResult:
            r = SearchResponse.from_json(Obj(v, ""))
            if len(r.results) != 1:
                raise ProtocolError(f"results: {len(r.results)} results for one query")
            return r.results[0]

        return self._call("POST", self._native("search"), q.to_json(), parse)

    def search_batch(self, queries: Sequence[Union[Query, Mapping[str, Any]]]) -> SearchResponse:
        """Searches up to 100 queries in one request; one result per query, in order."""
        body = {"queries": [q.to_json() if isinstance(q, Query) else dict(q) for q in queries]}
        path = self._native("search")

        def parse(v: Any) -> SearchResponse:
            r = SearchResponse.from_json(Obj(v, ""))
            if len(r.results) != len(queries):
                raise ProtocolError(f"results: {len(r.results)} results for {len(queries)} queries")
            return r

        return self._call("POST", path, body, parse)

    def wikichat_search(
        self,
        query: Union[str, Sequence[str]],
        num_blocks: int,
        *,
        rerank: Optional[bool] = None,
        num_blocks_to_rerank: Optional[int] = None,
        search_filters: Optional[Sequence[Union[WikiChatFilter, Mapping[str, Any]]]] = None,
    ) -> List[List[WikiChatBlock]]:
        """WikiChat 2.1's search (POST /search): the blocks of each query, one list per query."""
        body: Dict[str, Any] = {"query": query if isinstance(query, str) else list(query), "num_blocks": num_blocks}
        if rerank is not None:
            body["rerank"] = rerank
        if num_blocks_to_rerank is not None:
            body["num_blocks_to_rerank"] = num_blocks_to_rerank
        if search_filters is not None:
            body["search_filters"] = [f.to_json() if isinstance(f, WikiChatFilter) else dict(f) for f in search_filters]
        want = 1 if isinstance(query, str) else len(query)

        def parse(v: Any) -> List[List[WikiChatBlock]]:
            out = list_of(v, "", lambda o: o.objs("results", WikiChatBlock.from_json) or [])
            if len(out) != want:
                raise ProtocolError(f"{len(out)} results for {want} queries")
            return out

        return self._call("POST", self._wikichat("/search"), body, parse)

    def wikichat_search_v20(
        self,
        query: Union[str, Sequence[str]],
        num_blocks: int,
        *,
        languages: Optional[Union[str, Sequence[str]]] = None,
        rerank: Optional[bool] = None,
        num_blocks_to_rerank: Optional[int] = None,
        search_filters: Optional[Sequence[Union[WikiChatFilter, Mapping[str, Any]]]] = None,
    ) -> List[WikiChatV20Result]:
        """WikiChat 2.0's search (POST /v2/search): parallel lists for each query."""
        body: Dict[str, Any] = {"query": query if isinstance(query, str) else list(query), "num_blocks": num_blocks}
        if languages is not None:
            body["languages"] = languages if isinstance(languages, str) else list(languages)
        if rerank is not None:
            body["rerank"] = rerank
        if num_blocks_to_rerank is not None:
            body["num_blocks_to_rerank"] = num_blocks_to_rerank
        if search_filters is not None:
            body["search_filters"] = [f.to_json() if isinstance(f, WikiChatFilter) else dict(f) for f in search_filters]
        return self._call("POST", self._wikichat("/v2/search"), body, lambda v: list_of(v, "", WikiChatV20Result.from_json))

    def wikichat_search_v1(self, query: str, evi_num: int) -> WikiChatV1Result:
        """WikiChat 1.0's (ColBERT server's) search: POST /search with evi_num."""
        body = {"query": query, "evi_num": evi_num}
        return self._call("POST", self._wikichat("/search"), body, lambda v: WikiChatV1Result.from_json(Obj(v, "")))

    def passage(self, passage_id: str) -> Passage:
        """One passage by id (DOCUMENT#N), GET /v1/passages/{id}; NotFound when there is none."""
        path = self._native("passages/" + _seg(passage_id))
        return self._call("GET", path, None, lambda v: Passage.from_json(Obj(v, "")))

    # --- chat -------------------------------------------------------------------------------

    def _chat_body(self, message: str, conversation_id: Optional[str], pipeline: Optional[str], time: Optional[str],
                   new_session: Optional[bool], stream: bool) -> Dict[str, Any]:
        body: Dict[str, Any] = {"message": message}
        for key, v in (("conversation_id", conversation_id), ("pipeline", pipeline), ("time", time),
                       ("new_session", new_session)):
            if v is not None:
                body[key] = v
        if stream:
            body["stream"] = True
        return body

    def _keep_session(self, resp: ChatResponse, hdrs: Mapping[str, str]) -> None:
        token = resp.session_token or hdrs.get(SESSION_HEADER)
        if token:
            self.session_token = token

    def chat(
        self,
        message: str,
        *,
        conversation_id: Optional[str] = None,
        pipeline: Optional[str] = None,
        time: Optional[str] = None,
        new_session: Optional[bool] = None,
    ) -> ChatResponse:
        """One chat turn (POST /v1/chat): conversation_id continues a conversation, None starts
        one; pipeline None is the server's default (the first of stats().server.chat_pipelines)."""
        body = self._chat_body(message, conversation_id, pipeline, time, new_session, stream=False)
        value, hdrs = self._t.json("POST", "/v1/chat", body, timeout=self.chat_timeout, headers=self._session_headers())
        try:
            resp = ChatResponse.from_json(Obj(value, ""))
        except ProtocolError as e:
            raise wrap_protocol(e, "POST /v1/chat", hdrs.get("X-Request-Id")) from None
        self._keep_session(resp, hdrs)
        return resp

    def chat_stream(
        self,
        message: str,
        *,
        conversation_id: Optional[str] = None,
        pipeline: Optional[str] = None,
        time: Optional[str] = None,
        new_session: Optional[bool] = None,
    ) -> "ChatStream":
        """One chat turn as server-sent events ("stream": true): iterate the ChatStream for the
        reply's sentences as the server checks them (they concatenate to the reply), then read
        its response. A turn refused or failed before its first sentence raises here; one that
        fails later raises from the iteration, with the status the server's error event names."""
        body = self._chat_body(message, conversation_id, pipeline, time, new_session, stream=True)
        resp = self._t.open("POST", "/v1/chat", body, timeout=self.chat_timeout, headers=self._session_headers())
        return ChatStream(self, resp)

    def conversation(self, conversation_id: str) -> Conversation:
        """A conversation of this caller (GET /v1/chat/{id}); NotFound for an unknown, expired,
        deleted or another caller's one (the server does not tell them apart)."""
        path = "/v1/chat/" + _seg(conversation_id)
        return self._call("GET", path, None, lambda v: Conversation.from_json(Obj(v, "")), headers=self._session_headers())

    def delete_conversation(self, conversation_id: str) -> bool:
        """Deletes a conversation of this caller (DELETE /v1/chat/{id}); NotFound as conversation()."""
        path = "/v1/chat/" + _seg(conversation_id)

        def parse(v: Any) -> bool:
            o = Obj(v, "")
            o.req("conversation_id", "string")
            return bool(o.req("deleted", "boolean"))

        return self._call("DELETE", path, None, parse, headers=self._session_headers())

    # --- operations -------------------------------------------------------------------------

    def stats(self) -> Stats:
        """Index and server statistics (GET /v1/stats)."""
        return self._call("GET", self._native("stats"), None, lambda v: Stats.from_json(Obj(v, "")))

    def collections(self) -> List[CollectionInfo]:
        """The server's collections, the default one first (GET /v1/collections)."""
        return self._call("GET", "/v1/collections", None,
                          lambda v: Obj(v, "").objs("collections", CollectionInfo.from_json) or [])

    def health(self) -> Health:
        """Liveness (GET /healthz)."""
        return self._call("GET", "/healthz", None, lambda v: Health.from_json(Obj(v, "")))

    def ready(self) -> Health:
        """Readiness (GET /readyz, or /readyz/{collection}): a server that is not ready answers
        503 with its reason, returned here as Health(status="not ready") rather than raised."""
        path = "/readyz" if self.collection is None else "/readyz/" + _seg(self.collection)
        return self._call("GET", path, None, lambda v: Health.from_json(Obj(v, "")), answer_status=(503,))


class ChatStream:
    """A streamed chat turn: iterating it yields the reply's sentences (str) as they arrive;
    once it is exhausted, response holds the turn's ChatResponse. Close it (or use it in a
    with block) to stop reading early."""

    def __init__(self, client: Client, resp: Any) -> None:
        self._client = client
        self._resp = resp
        self._endpoint = "POST /v1/chat"
        self._request_id = resp.headers.get("X-Request-Id")
        self._headers = {k: v for k, v in resp.headers.items()}
        self.tokens: List[str] = []
        self.response: Optional[ChatResponse] = None
        self._iter: Optional[Iterator[str]] = None
        ctype = resp.headers.get("Content-Type", "")
        if not ctype.startswith("text/event-stream"):
            resp.close()
            raise ProtocolError(f"a stream was asked for, the answer is {ctype or 'untyped'}",
                                status=resp.status, request_id=self._request_id, endpoint=self._endpoint)

    def __enter__(self) -> "ChatStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._resp.close()

    def __iter__(self) -> Iterator[str]:
        if self._iter is None:
            self._iter = self._run()
        return self._iter

    def reply(self) -> ChatResponse:
        """Reads the stream to its end and returns the response."""
        for _ in self:
            pass
        assert self.response is not None
        return self.response

    def _chunks(self) -> Iterator[bytes]:
        timeout = self._client.chat_timeout
        while True:
            try:
                b = self._resp.read1(65536)
            except (socket.timeout, TimeoutError) as e:
                raise Timeout(f"no event for {timeout:g} s (chat_timeout)", endpoint=self._endpoint,
                              request_id=self._request_id) from e
            except OSError as e:
                raise Unreachable(f"the stream broke: {e}", endpoint=self._endpoint, request_id=self._request_id) from e
            if not b:
                return
            yield b

    def _fail(self, msg: str) -> ProtocolError:
        return ProtocolError(msg, status=200, endpoint=self._endpoint, request_id=self._request_id)

    def _run(self) -> Iterator[str]:
        try:
            for ev in events(self._chunks()):
                try:
                    data = json.loads(ev.data)
                except ValueError:
                    raise self._fail(f"{ev.event} event: data is not JSON: {ev.data[:200]!r}") from None
                try:
                    if ev.event == "token":
                        tok = Obj(data, "token event").req("token", "string")
                        self.tokens.append(tok)
                        yield tok
                    elif ev.event == "done":
                        resp = ChatResponse.from_json(Obj(data, "done event"))
                        self._client._keep_session(resp, self._headers)
                        self.response = resp
                        return
                    elif ev.event == "error":
                        o = Obj(data, "error event")
                        status = o.req("status", "integer")
                        raise error_for_status(status, o.req("error", "string"),
                                               retry_after=o.opt("retry_after", "number"),
                                               request_id=self._request_id, endpoint=self._endpoint)
                    # Another event is one a later server added: not this client's to read.
                except ProtocolError as e:
                    raise self._fail(e.message) from None
            raise self._fail("the stream ended before its done or error event")
        except UnicodeDecodeError as e:
            raise self._fail(f"the stream is not UTF-8: {e}") from None
        finally:
            self._resp.close()


def _seg(s: str) -> str:
    """A path segment: every reserved character escaped ('#' as %23, '/' as %2F)."""
    if not isinstance(s, str) or s == "":
        raise ValueError(f"want a non-empty string, got {s!r}")
    return urllib.parse.quote(s, safe="")
