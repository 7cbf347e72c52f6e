"""The client against real `kairos serve` processes: two BM25 indexes of SciFact (its first 300
documents, collection "sci", and the next 100, "more"), chat on bin/fakellm with
fakellm-wikichat.json (a grounded two-sentence reply citing 4983#3 and 4983#2), and servers
set up for each refusal: an API key, a chat rate of one turn, and LLMs that fail."""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import tempfile
import time
import unittest
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import kairos
from kairos import _sse

import servers

QUESTION = "What does diffusion MRI show about newborn white matter?"
NEWBORN_DOC = "4983"  # SciFact's "Microstructural development of human newborn cerebral white matter ..."


class Env:
    """The indexes, the fake LLM and the main server, shared by every test of the module."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="kairos-pyclient-"))
        self.procs: List[servers.Process] = []
        try:
            self._start()
        except BaseException:
            self.close()  # what started before the failure
            raise

    def _start(self) -> None:
        sci_in = servers.scifact_slice(self.dir / "sci.jsonl", 0, 300)
        more_in = servers.scifact_slice(self.dir / "more.jsonl", 300, 400)
        self.sci = str(servers.build_index(sci_in, self.dir / "sci.idx"))
        self.more = str(servers.build_index(more_in, self.dir / "more.idx"))
        with open(more_in, encoding="utf-8") as f:
            self.more_first = json.loads(f.readline())  # a document only "more" holds
        self.fake = self.track(servers.FakeLLM(servers.HERE / "fakellm-wikichat.json", self.dir))
        self.main = self.serve("main", [f"sci={self.sci}", f"more={self.more}"], self.fake.url,
                               ["--chat-rate-limit", "-1"])

    def track(self, p):
        self.procs.append(p)
        return p

    def serve(self, name: str, indexes: List[str], llm_url: Optional[str] = None,
              flags: Optional[List[str]] = None) -> servers.Serve:
        return self.track(servers.Serve(indexes, self.dir, name, llm_url, flags))

    def close(self) -> None:
        for p in reversed(self.procs):
            p.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


ENV: Optional[Env] = None


def setUpModule() -> None:
    global ENV
    ENV = Env()


def tearDownModule() -> None:
    if ENV is not None:
        ENV.close()


def env() -> Env:
    assert ENV is not None
    return ENV


def raw(url: str, body: Optional[Dict[str, Any]] = None, method: Optional[str] = None):
    """The server's own answer, read without the client: (status, content type, bytes)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.status, r.headers.get("Content-Type"), r.read()


class SearchTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = kairos.Client(env().main.url)

    def test_search_answers_the_query_with_ranked_typed_hits(self) -> None:
        r = self.client.search("newborn white matter diffusion tensor", k=3)
        self.assertEqual(r.query, "newborn white matter diffusion tensor")
        self.assertEqual(r.mode, "bm25")
        self.assertEqual(r.time.kind, "none")
        self.assertEqual([h.rank for h in r.hits], [1, 2, 3])
        self.assertEqual(r.hits[0].doc_id, NEWBORN_DOC)
        scores = [h.score for h in r.hits]
        self.assertEqual(scores, sorted(scores, reverse=True))
        sources = self.client.stats().index.sources or {}
        for h in r.hits:
            self.assertIsInstance(h.score, float)
            self.assertTrue(h.passage_id.startswith(h.doc_id + "#"), h.passage_id)
            self.assertTrue(h.text.startswith(h.title + " | "), h.text[:80])
            self.assertEqual(h.block_type, "text")
            self.assertIn(h.source, sources)
            self.assertIn("bm25", h.scores or {})
            self.assertIsNone(h.explain)

    def test_search_sends_each_field_it_is_given(self) -> None:
        q = "newborn white matter diffusion tensor"
        cases: List[Tuple[str, Dict[str, Any], Callable[[kairos.QueryResult], bool]]] = [
            ("k", dict(k=1), lambda r: len(r.hits) == 1),
            ("per_doc", dict(k=5, per_doc=1), lambda r: len({h.doc_id for h in r.hits}) == len(r.hits) == 5),
            ("explain", dict(k=2, explain=True), lambda r: all(h.explain is not None and h.explain.final == h.score for h in r.hits)),
            ("min_score", dict(min_score=1000.0), lambda r: r.hits == []),
            ("time", dict(time="1994"), lambda r: (r.time.kind, r.time.from_, r.time.to) == ("range", 1994, 1994)),
            ("rerank", dict(rerank="time"), lambda r: r.rerank == ["time"]),
            ("filters as Filters", dict(filters=kairos.Filters(source=["sci", "other"])), lambda r: r.hits and all(h.source == "sci" for h in r.hits)),
            ("filters as a dict", dict(filters={"block_type": "table"}), lambda r: r.hits == []),
        ]
        for name, kw, ok in cases:
            with self.subTest(name):
                r = self.client.search(q, **kw)
                self.assertTrue(ok(r), f"{name}: {kw} gave {r}")

    def test_search_batch_answers_each_query_in_order(self) -> None:
        resp = self.client.search_batch([
            kairos.Query(text="newborn white matter", k=2),
            {"text": "bone mineral density", "k": 1},
        ])
        self.assertEqual([r.query for r in resp.results], ["newborn white matter", "bone mineral density"])
        self.assertEqual([len(r.hits) for r in resp.results], [2, 1])
        self.assertGreaterEqual(resp.took_ms, 0.0)

    def test_collection_routes_every_retrieval_call_to_its_index(self) -> None:
        cols = self.client.collections()
        self.assertEqual([(c.name, c.default) for c in cols], [("sci", True), ("more", False)])
        title = self.env_more_title()
        more = kairos.Client(env().main.url, collection="more")
        self.assertEqual(more.search(title, k=1).hits[0].doc_id, str(env().more_first["_id"]))
        self.assertNotIn(str(env().more_first["_id"]), [h.doc_id for h in self.client.search(title, k=10).hits])
        self.assertEqual(more.stats().server.collection, "more")
        self.assertEqual(more.stats().index.documents, 100)
        self.assertEqual(self.client.stats().index.documents, 300)
        self.assertEqual(more.wikichat_search(title, 1)[0][0].block_metadata["doc_id"], str(env().more_first["_id"]))
        self.assertEqual(more.passage(str(env().more_first["_id"]) + "#0").doc_id, str(env().more_first["_id"]))
        self.assertEqual(more.ready().status, "ready")
        with self.assertRaises(kairos.NotFound) as cm:
            kairos.Client(env().main.url, collection="nope").search("x")
        self.assertIn("collections: sci, more", cm.exception.message)

    def env_more_title(self) -> str:
        return env().more_first["title"]

    def test_stats_health_and_ready_describe_the_server(self) -> None:
        st = self.client.stats()
        self.assertEqual((st.index.documents, st.index.dense, st.index.default_mode), (300, False, "bm25"))
        self.assertEqual(st.index.passages, sum((st.index.sources or {}).values()))
        self.assertEqual((st.server.chat_pipelines or [])[0], "wikichat")
        self.assertEqual(self.client.health().status, "ok")
        ready = self.client.ready()
        self.assertTrue(ready.ready)
        self.assertEqual({c.collection for c in ready.collections or []}, {"sci", "more"})


class WikiChatSearchTest(unittest.TestCase):
    """WikiChat's shapes answer with the same passages, in the same order, as the native search."""

    def setUp(self) -> None:
        self.client = kairos.Client(env().main.url)
        self.queries = ["newborn white matter diffusion", "bone mineral density in women"]
        self.native = [self.client.search(q, k=4).hits for q in self.queries]

    def test_wikichat_21_blocks_are_the_native_hits(self) -> None:
        got = self.client.wikichat_search(self.queries, num_blocks=4)
        self.assertEqual(len(got), 2)
        for blocks, hits in zip(got, self.native):
            self.assertEqual([b.block_metadata["passage_id"] for b in blocks], [h.passage_id for h in hits])
            for b, h in zip(blocks, hits):
                self.assertEqual(b.document_title, h.title)
                self.assertEqual(h.title + " | " + b.content, h.text)
                self.assertIsNone(b.url)  # SciFact has no links: null, not ""
                self.assertIsNone(b.last_edit_date)
                self.assertAlmostEqual(b.similarity_score, round(h.score, 3), places=3)
            probs = [b.probability_score for b in blocks]
            self.assertEqual(probs, sorted(probs, reverse=True))

    def test_wikichat_21_one_string_query_and_filters(self) -> None:
        one = self.client.wikichat_search(self.queries[0], num_blocks=2)
        self.assertEqual([[b.block_metadata["passage_id"] for b in bs] for bs in one],
                         [[h.passage_id for h in self.native[0][:2]]])
        none = self.client.wikichat_search(self.queries[0], num_blocks=2, search_filters=[
            kairos.WikiChatFilter(field_name="block_type", filter_type="eq", field_value="table")])
        self.assertEqual(none, [[]])
        text = self.client.wikichat_search(self.queries[0], num_blocks=2, search_filters=[
            {"field_name": "block_type", "filter_type": "eq", "field_value": "text"}])
        self.assertEqual(len(text[0]), 2)

    def test_wikichat_20_parallel_lists_are_the_native_hits(self) -> None:
        got = self.client.wikichat_search_v20(self.queries, num_blocks=4, languages=["en"])
        for res, hits in zip(got, self.native):
            self.assertEqual(res.title, [h.title for h in hits])
            self.assertEqual([res.title[i] + " | " + res.text[i] for i in range(4)], [h.text for h in hits])
            self.assertEqual(res.language, ["en"] * 4)
            self.assertEqual(res.block_type, ["text"] * 4)
            self.assertEqual(res.last_edit_date, [None] * 4)
        none = self.client.wikichat_search_v20(self.queries[0], num_blocks=4, languages="de")
        self.assertEqual(none[0].text, [])

    def test_wikichat_10_lists_are_the_native_hits(self) -> None:
        got = self.client.wikichat_search_v1(self.queries[0], evi_num=4)
        self.assertEqual(got.passage_ids, [h.passage_id for h in self.native[0]])
        self.assertEqual(got.passages, [h.text for h in self.native[0]])
        self.assertEqual(got.passage_ranks, [1, 2, 3, 4])


class PassageTest(unittest.TestCase):
    def test_passage_by_id_is_the_hit_it_was_found_as(self) -> None:
        client = kairos.Client(env().main.url)
        for h in client.search("newborn white matter diffusion", k=3).hits:
            with self.subTest(h.passage_id):
                p = client.passage(h.passage_id)  # '#' must travel as %23
                self.assertEqual((p.passage_id, p.doc_id, p.title, p.text, p.block_type, p.source),
                                 (h.passage_id, h.doc_id, h.title, h.text, h.block_type, h.source))
                self.assertEqual(p.ordinal, int(h.passage_id.split("#")[1]))

    def test_unknown_passage_is_not_found_with_the_servers_hint(self) -> None:
        client = kairos.Client(env().main.url)
        for pid, hint in [(NEWBORN_DOC, "%23"), ("no-such-doc#0", "not found"), ("a/b#0", "not found")]:
            with self.subTest(pid):
                with self.assertRaises(kairos.NotFound) as cm:
                    client.passage(pid)
                self.assertIn(hint, cm.exception.message)
                self.assertEqual(cm.exception.status, 404)
                self.assertTrue(cm.exception.request_id)


class ChatTest(unittest.TestCase):
    def test_chat_answers_a_grounded_reply_with_citations_and_a_session(self) -> None:
        client = kairos.Client(env().main.url)
        r = client.chat(QUESTION)
        self.assertTrue(r.grounded)
        self.assertEqual(r.pipeline, "wikichat")
        self.assertIn("[1]", r.reply)
        self.assertIn("[2]", r.reply)
        self.assertEqual([(c.n, c.passage_id) for c in r.citations], [(1, NEWBORN_DOC + "#3"), (2, NEWBORN_DOC + "#2")])
        self.assertTrue(r.session_token)
        self.assertEqual(client.session_token, r.session_token)
        stages = [s.stage for s in r.trace or []]
        for stage in ("query", "retrieve", "claims", "verify", "draft", "refine"):
            self.assertIn(stage, stages)
        self.assertIsNotNone(r.usage)
        assert r.usage is not None
        self.assertGreater(r.usage.calls, 0)
        self.assertEqual(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens)

    def test_chat_stream_tokens_concatenate_to_the_reply(self) -> None:
        client = kairos.Client(env().main.url)
        with client.chat_stream(QUESTION) as stream:
            tokens = list(stream)
        self.assertGreaterEqual(len(tokens), 2, tokens)
        assert stream.response is not None
        self.assertEqual("".join(tokens), stream.response.reply)
        self.assertEqual(stream.tokens, tokens)
        self.assertEqual([c.passage_id for c in stream.response.citations], [NEWBORN_DOC + "#3", NEWBORN_DOC + "#2"])
        self.assertEqual(client.session_token, stream.response.session_token)
        self.assertTrue(client.session_token)

    def test_conversation_continues_reads_back_and_deletes(self) -> None:
        client = kairos.Client(env().main.url)
        first = client.chat_stream(QUESTION).reply()
        second = client.chat("And what about preterm infants?", conversation_id=first.conversation_id)
        self.assertEqual(second.conversation_id, first.conversation_id)
        self.assertIsNone(second.session_token)  # the session started with the first turn
        conv = client.conversation(first.conversation_id)
        self.assertEqual(conv.conversation_id, first.conversation_id)
        self.assertEqual([(t.index, t.user, t.reply) for t in conv.turns],
                         [(0, QUESTION, first.reply), (1, "And what about preterm infants?", second.reply)])
        self.assertEqual(conv.turns[0].citations, first.citations)
        self.assertTrue(all(t.grounded and t.pipeline == "wikichat" for t in conv.turns))
        self.assertTrue(client.delete_conversation(first.conversation_id))
        for call in (client.conversation, client.delete_conversation):
            with self.subTest(call.__name__):
                with self.assertRaises(kairos.NotFound):
                    call(first.conversation_id)
        with self.assertRaises(kairos.NotFound):
            client.chat("Still there?", conversation_id=first.conversation_id)

    def test_a_conversation_belongs_to_its_session(self) -> None:
        owner = kairos.Client(env().main.url)
        cid = owner.chat(QUESTION).conversation_id
        with self.assertRaises(kairos.NotFound):
            kairos.Client(env().main.url).conversation(cid)  # no token: owns nothing
        other = kairos.Client(env().main.url)
        other.chat(QUESTION)  # a session of its own
        with self.assertRaises(kairos.NotFound):
            other.conversation(cid)
        same = kairos.Client(env().main.url, session_token=owner.session_token)
        self.assertEqual(same.conversation(cid).conversation_id, cid)

    def test_stream_is_decoded_the_same_whatever_its_chunking(self) -> None:
        status, ctype, body = raw(env().main.url + "/v1/chat", {"message": QUESTION, "stream": True})
        self.assertEqual((status, ctype), (200, "text/event-stream"))
        want = list(_sse.events([body]))
        self.assertEqual([e.event for e in want], ["token", "token", "done"])
        rng = random.Random(54)
        variants = {"bytewise": [body[i:i + 1] for i in range(len(body))],
                    "crlf": [body.replace(b"\n", b"\r\n")],
                    "cr": [body.replace(b"\n", b"\r")]}
        for seed in range(20):
            cuts = sorted(rng.sample(range(1, len(body)), 12))
            variants[f"random {seed}"] = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)])]
        crlf = body.replace(b"\n", b"\r\n")
        variants["crlf split inside \\r\\n"] = [crlf[:crlf.index(b"\r\n") + 1], crlf[crlf.index(b"\r\n") + 1:]]
        for name, chunks in variants.items():
            with self.subTest(name):
                self.assertEqual(list(_sse.events(chunks)), want)


class ErrorTest(unittest.TestCase):
    """Each refusal of a real server raises its class, with the server's message and Retry-After."""

    failing: servers.FailingLLM
    keyed: servers.Serve
    limited: servers.Serve
    llm: Dict[str, servers.Serve]

    @classmethod
    def setUpClass(cls) -> None:
        e = env()
        cls.failing = servers.FailingLLM(upstream=e.fake.url)
        key = e.dir / "api.key"
        key.write_text("s3cret-key\n")
        os.chmod(key, 0o600)
        cls.keyed = e.serve("keyed", [e.sci], e.fake.url, ["--api-key-file", str(key)])
        cls.limited = e.serve("limited", [e.sci], e.fake.url, ["--chat-rate-limit", "1", "--chat-rate-burst", "1"])
        cls.llm = {}
        modes: List[Tuple[str, List[str]]] = [("fail500", []), ("ratelimit", []), ("hang", ["--llm-timeout", "300ms"]),
                                              ("partial", [])]
        for mode, flags in modes:
            cls.llm[mode] = e.serve("llm-" + mode, [e.sci], cls.failing.url(mode), ["--llm-retries", "0", *flags])

    @classmethod
    def tearDownClass(cls) -> None:
        cls.failing.stop()

    def test_bad_requests_raise_BadRequest_naming_the_field(self) -> None:
        client = kairos.Client(env().main.url)
        cases = [
            ("k of 0", lambda: client.search("newborn", k=0), 400, "k: 0: want a positive number of hits"),
            ("empty text", lambda: client.search(""), 400, "text"),
            ("a misspelt field", lambda: client.search_batch([{"txet": "newborn"}]), 400, 'did you mean "text"'),
            ("101 queries", lambda: client.search_batch([{"text": "a"}] * 101), 400, "max_queries"),
            ("mode dense on a BM25 index", lambda: client.search("newborn", mode="dense"), 400, "--model"),
            ("num_blocks of 0", lambda: client.wikichat_search(["newborn"], 0), 400, "num_blocks"),
            ("an empty chat message", lambda: client.chat(""), 400, "message"),
            ("new_session with a conversation", lambda: client.chat("hi", conversation_id="x", new_session=True),
             400, "new_session"),
            ("a body over 1 MiB", lambda: client.search("x" * 2_000_000), 413, "max_body_bytes"),
            ("a source the index lacks", lambda: client.search("newborn", filters=kairos.Filters(source="sc")), 400,
             "filters.source sc: no passage of the index has that source (did you mean filters.source sci?)"),
        ]
        for name, call, status, want in cases:
            with self.subTest(name):
                with self.assertRaises(kairos.BadRequest) as cm:
                    call()
                self.assertEqual(cm.exception.status, status)
                self.assertIn(want, cm.exception.message)
                self.assertIn(want, str(cm.exception))

    def test_api_key_server_refuses_without_the_key(self) -> None:
        url = self.keyed.url
        for name, client in [("no key", kairos.Client(url)), ("another key", kairos.Client(url, api_key="wrong"))]:
            for call in ("search", "chat", "stats", "passage"):
                with self.subTest(f"{name}: {call}"):
                    with self.assertRaises(kairos.Unauthorized) as cm:
                        {"search": lambda: client.search("newborn"), "chat": lambda: client.chat(QUESTION),
                         "stats": client.stats, "passage": lambda: client.passage(NEWBORN_DOC + "#0")}[call]()
                    self.assertEqual(cm.exception.status, 401)
        self.assertEqual(kairos.Client(url).health().status, "ok")  # probes stay open
        keyed = kairos.Client(url, api_key="s3cret-key")
        self.assertEqual(keyed.search("newborn white matter", k=1).hits[0].doc_id, NEWBORN_DOC)
        r = keyed.chat(QUESTION)
        self.assertIsNone(r.session_token)  # the key owns the conversation
        self.assertEqual(kairos.Client(url, api_key="s3cret-key").conversation(r.conversation_id).turns[0].user, QUESTION)
        user = kairos.Client(url, api_key="s3cret-key")
        own = user.chat(QUESTION, new_session=True)  # a gateway's user: a session under the key
        self.assertTrue(own.session_token)
        self.assertEqual(user.conversation(own.conversation_id).conversation_id, own.conversation_id)
        with self.assertRaises(kairos.NotFound):
            kairos.Client(url, api_key="s3cret-key").conversation(own.conversation_id)

    def test_unknown_conversation_is_NotFound(self) -> None:
        client = kairos.Client(env().main.url)
        client.chat(QUESTION)
        for call in (lambda: client.conversation("nosuchconversation"), lambda: client.delete_conversation("nosuch"),
                     lambda: client.chat("hello", conversation_id="nosuchconversation")):
            with self.assertRaises(kairos.NotFound) as cm:
                call()
            self.assertIn("no such conversation", cm.exception.message)

    def test_chat_rate_limit_is_RateLimited_with_retry_after(self) -> None:
        # --chat-rate-limit 1 --chat-rate-burst 1: one turn a minute per client address (the
        # server has no API key), whatever session the turn comes in.
        first = kairos.Client(self.limited.url)
        cid = first.chat(QUESTION).conversation_id
        cases = [
            ("a second new session from the address", lambda: kairos.Client(self.limited.url).chat(QUESTION)),
            ("the session's second turn", lambda: first.chat("And at term?", conversation_id=cid)),
            ("the session's second turn, streamed", lambda: first.chat_stream("And at term?", conversation_id=cid)),
        ]
        for name, call in cases:
            with self.subTest(name):
                with self.assertRaises(kairos.RateLimited) as cm:
                    call()
                self.assertEqual(cm.exception.status, 429)
                self.assertIn("--chat-rate-limit", cm.exception.message)
                self.assertIsNotNone(cm.exception.retry_after)
                self.assertGreater(cm.exception.retry_after or 0, 0)

    def test_llm_failures_raise_their_class_as_json_and_as_stream(self) -> None:
        cases = [
            ("fail500", kairos.UpstreamError, 502, "it answered HTTP 500", None),
            ("ratelimit", kairos.Unavailable, 503, "the LLM is rate limiting this server", 7.0),
            ("hang", kairos.Timeout, 504, "--llm-timeout", 1.0),
        ]
        for mode, cls, status, msg, retry in cases:
            client = kairos.Client(self.llm[mode].url)
            for name, call in [("json", lambda: client.chat(QUESTION)), ("stream", lambda: client.chat_stream(QUESTION))]:
                with self.subTest(f"{mode} {name}"):
                    with self.assertRaises(cls) as cm:
                        call()
                    self.assertEqual(cm.exception.status, status)
                    self.assertIn(msg, cm.exception.message)
                    self.assertEqual(cm.exception.retry_after, retry)

    def test_stream_failing_after_its_first_sentence_raises_from_the_iteration(self) -> None:
        client = kairos.Client(self.llm["partial"].url)
        stream = client.chat_stream(QUESTION)  # the answer started: 200 and a first event
        got: List[str] = []
        with self.assertRaises(kairos.UpstreamError) as cm:
            for tok in stream:
                got.append(tok)
        self.assertEqual(cm.exception.status, 502)
        self.assertEqual(got, ["Diffusion tensor MRI provides insight into microstructural development in "
                               "cerebral white matter in living infants [1]."])
        self.assertIsNone(stream.response)

    def test_no_server_is_Unreachable_and_a_silent_one_Timeout(self) -> None:
        with self.assertRaises(kairos.Unreachable) as cm:
            kairos.Client("http://127.0.0.1:9").search("newborn")  # nothing listens on the discard port
        self.assertIsNone(cm.exception.status)
        start = time.monotonic()
        with self.assertRaises(kairos.Timeout) as cm2:
            kairos.Client(self.failing.base + "/hang", timeout=0.5).search("newborn")
        self.assertIsNone(cm2.exception.status)
        self.assertLess(time.monotonic() - start, 10)


class ProtocolTest(unittest.TestCase):
    """Real answers of the server, each with one field broken, replayed to the client: the
    client raises ProtocolError naming the field, never fills in a default."""

    replay: servers.ReplayServer
    search: Dict[str, Any]
    chat: Dict[str, Any]
    passage: Dict[str, Any]
    wikichat: List[Any]
    stream: bytes

    @classmethod
    def setUpClass(cls) -> None:
        cls.replay = servers.ReplayServer()
        url = env().main.url
        cls.search = json.loads(raw(url + "/v1/search", {"text": "newborn white matter", "k": 2})[2])
        cls.chat = json.loads(raw(url + "/v1/chat", {"message": QUESTION})[2])
        cls.passage = json.loads(raw(url + "/v1/passages/" + NEWBORN_DOC + "%230")[2])
        cls.wikichat = json.loads(raw(url + "/search", {"query": ["newborn"], "num_blocks": 2})[2])
        cls.stream = raw(url + "/v1/chat", {"message": QUESTION, "stream": True})[2]

    @classmethod
    def tearDownClass(cls) -> None:
        cls.replay.stop()

    def answer(self, path: str, value: Any) -> None:
        self.replay.answers[path] = (200, "application/json", json.dumps(value).encode())

    def test_the_real_answers_replayed_decode(self) -> None:
        c = kairos.Client(self.replay.url)
        self.answer("/v1/search", self.search)
        self.answer("/v1/chat", self.chat)
        self.answer("/v1/passages/" + NEWBORN_DOC + "%230", self.passage)
        self.assertEqual(len(c.search("newborn white matter").hits), 2)
        self.assertTrue(c.chat(QUESTION).grounded)
        self.assertEqual(c.passage(NEWBORN_DOC + "#0").ordinal, 0)

    def test_a_broken_field_is_a_ProtocolError_naming_it(self) -> None:
        def broken(doc: Any, edit) -> Any:
            doc = copy.deepcopy(doc)
            edit(doc)
            return doc

        c = kairos.Client(self.replay.url)
        cases = [
            ("a hit without score", "/v1/search", broken(self.search, lambda d: d["results"][0]["hits"][1].pop("score")),
             lambda: c.search("x"), "results[0].hits[1].score: required field missing"),
            ("rank as a string", "/v1/search", broken(self.search, lambda d: d["results"][0]["hits"][0].update(rank="1")),
             lambda: c.search("x"), "results[0].hits[0].rank: want integer, got string"),
            ("took_ms renamed", "/v1/search", broken(self.search, lambda d: d.update(took=d.pop("took_ms"))),
             lambda: c.search("x"), "took_ms: required field missing"),
            ("two results for one query", "/v1/search", broken(self.search, lambda d: d["results"].append(d["results"][0])),
             lambda: c.search("x"), "2 results for one query"),
            ("a chat without reply", "/v1/chat", broken(self.chat, lambda d: d.pop("reply")),
             lambda: c.chat("x"), "reply: required field missing"),
            ("grounded as a string", "/v1/chat", broken(self.chat, lambda d: d.update(grounded="true")),
             lambda: c.chat("x"), "grounded: want boolean, got string"),
            ("a citation without passage_id", "/v1/chat", broken(self.chat, lambda d: d["citations"][0].pop("passage_id")),
             lambda: c.chat("x"), "citations[0].passage_id: required field missing"),
            ("a passage with block_type null", "/v1/passages/x%230", broken(self.passage, lambda d: d.update(block_type=None)),
             lambda: c.passage("x#0"), "block_type: want string, got null"),
            ("a block without content", "/search", broken(self.wikichat, lambda d: d[0]["results"][0].pop("content")),
             lambda: c.wikichat_search(["x"], 2), "[0].results[0].content: required field missing"),
        ]
        for name, path, doc, call, want in cases:
            with self.subTest(name):
                self.answer(path, doc)
                with self.assertRaises(kairos.ProtocolError) as cm:
                    call()
                self.assertIn(want, cm.exception.message)

    def test_a_stream_cut_before_done_is_a_ProtocolError(self) -> None:
        c = kairos.Client(self.replay.url)
        cut = self.stream[:self.stream.index(b"event: done")]
        for name, body, tokens in [("cut before done", cut, 2), ("not a stream", b'{"reply": "x"}', 0)]:
            with self.subTest(name):
                ctype = "text/event-stream" if tokens else "application/json"
                self.replay.answers["/v1/chat"] = (200, ctype, body)
                got: List[str] = []
                with self.assertRaises(kairos.ProtocolError):
                    for t in c.chat_stream("x"):
                        got.append(t)
                self.assertEqual(len(got), tokens)
        self.replay.answers["/v1/chat"] = (200, "text/event-stream", self.stream)
        self.assertEqual(c.chat_stream("x").reply().reply, self.chat["reply"])

    def test_ready_returns_a_not_ready_answer_rather_than_raising(self) -> None:
        c = kairos.Client(self.replay.url)
        body = {"status": "not ready", "reason": "no index loaded"}  # Health, as /readyz answers 503
        self.replay.answers["/readyz"] = (503, "application/json", json.dumps(body).encode())
        got = c.ready()
        self.assertEqual((got.status, got.reason, got.ready), ("not ready", "no index loaded", False))
        self.replay.answers["/readyz"] = (503, "text/plain", b"overloaded")
        with self.assertRaises(kairos.ProtocolError):
            c.ready()

    def test_an_error_answer_that_is_not_json_keeps_its_status_class(self) -> None:
        c = kairos.Client(self.replay.url)
        self.replay.answers["/v1/search"] = (502, "text/html", b"<html>Bad Gateway</html>")
        with self.assertRaises(kairos.UpstreamError) as cm:
            c.search("x")
        self.assertIn("Bad Gateway", cm.exception.message)


class DocsTest(unittest.TestCase):
    def test_the_three_line_retriever_of_the_docs_runs_as_written(self) -> None:
        page = (servers.REPO / "docs" / "python-client.md").read_text(encoding="utf-8")
        section = page.split("## The three-line retriever", 1)[1]
        code = section.split("```python\n", 1)[1].split("```", 1)[0]
        self.assertEqual(len(code.strip().splitlines()), 3, code)
        self.assertIn("http://127.0.0.1:8080", code)
        scope: Dict[str, Any] = {}
        exec(code.replace("http://127.0.0.1:8080", env().main.url), scope)
        got = scope["retrieve"]("newborn white matter diffusion")
        self.assertEqual(len(got), 5)
        text, score, pid = got[0]
        self.assertTrue(pid.startswith(NEWBORN_DOC + "#"))
        self.assertIn("newborn", text)
        self.assertIsInstance(score, float)


if __name__ == "__main__":
    unittest.main()
