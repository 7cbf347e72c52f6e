"""The server-sent events decoder on the cases of the WHATWG spec that a chat stream may meet
(a real stream's chunkings are in test_client: ChatTest)."""

from __future__ import annotations

import unittest

from kairos import _sse


def decode(text: str):
    return [tuple(e) for e in _sse.events([text.encode("utf-8")])]


class DecoderTest(unittest.TestCase):
    def test_events_as_the_spec_reads_them(self) -> None:
        cases = [
            ("one event", "event: token\ndata: {\"token\": \"a\"}\n\n", [("token", '{"token": "a"}')]),
            ("no event name is message", "data: x\n\n", [("message", "x")]),
            ("data lines join with newlines", "event: e\ndata: a\ndata:b\ndata:  c\n\n", [("e", "a\nb\n c")]),
            ("a comment is skipped", ": ping\nevent: e\n: keep-alive\ndata: x\n\n", [("e", "x")]),
            ("a blank line without data sends nothing", "event: e\n\n\ndata: x\n\n", [("message", "x")]),
            ("an event unended at the end is dropped", "event: e\ndata: x\n\nevent: f\ndata: y\n", [("e", "x")]),
            ("id and retry are ignored", "id: 7\nretry: 10\nevent: e\ndata: x\n\n", [("e", "x")]),
            ("a field without colon is a name", "data\n\n", [("message", "")]),
            ("CR and CRLF end lines", "event: e\r\ndata: x\r\rdata: y\n\n", [("e", "x"), ("message", "y")]),
            ("UTF-8 split across chunks", "data: é—☃\n\n", [("message", "é—☃")]),
        ]
        for name, text, want in cases:
            with self.subTest(name):
                self.assertEqual(decode(text), want)
                raw = text.encode("utf-8")
                self.assertEqual([tuple(e) for e in _sse.events(raw[i:i + 1] for i in range(len(raw)))], want,
                                 "byte by byte")

    def test_a_lone_cr_at_the_end_is_a_line_end_not_a_blank_line(self) -> None:
        self.assertEqual(decode("data: x\r"), [])
        self.assertEqual(decode("data: x\r\r"), [("message", "x")])


if __name__ == "__main__":
    unittest.main()
