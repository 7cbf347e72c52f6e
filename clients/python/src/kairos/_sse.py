"""Server-sent events as the WHATWG spec reads them, line by line: ``event:`` names the event,
``data:`` lines (joined by newlines) carry its data, a blank line ends it, ``:`` starts a
comment. Kairos's chat stream sends token, done and error events, each one JSON data line."""

from __future__ import annotations

import re
from typing import Iterable, Iterator, List, NamedTuple, Optional


class Event(NamedTuple):
    event: str
    data: str


class Decoder:
    """Turns lines (with or without their line ending) into events."""

    def __init__(self) -> None:
        self._event = ""
        self._data: List[str] = []

    def line(self, line: str) -> Optional[Event]:
        """Reads one line; returns the event it completes, if any."""
        line = line.rstrip("\r\n")
        if line == "":
            if not self._data:
                self._event = ""
                return None
            ev = Event(self._event or "message", "\n".join(self._data))
            self._event, self._data = "", []
            return ev
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        # id and retry mean nothing to a one-shot chat stream; other fields are ignored, as the spec says.
        return None


def split_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Decodes a byte stream (UTF-8) into lines ending at \\n, \\r\\n or \\r, whatever the chunking."""
    buf = b""
    for chunk in chunks:
        buf += chunk
        start = 0
        while True:
            m = _EOL.search(buf, start)
            if m is None:
                break
            if m.group() == b"\r" and m.end() == len(buf):
                break  # a \r ending the chunk may be half of a \r\n: wait for the next chunk
            yield buf[start : m.start()].decode("utf-8")
            start = m.end()
        buf = buf[start:]
    if buf:  # the last line, unended, or ended by a lone \r the loop held back
        yield (buf[:-1] if buf.endswith(b"\r") else buf).decode("utf-8")


_EOL = re.compile(rb"\r\n|\r|\n")


def events(chunks: Iterable[bytes]) -> Iterator[Event]:
    """The events of a byte stream; an event not ended by a blank line is dropped, as the spec says."""
    d = Decoder()
    for line in split_lines(chunks):
        ev = d.line(line)
        if ev is not None:
            yield ev
