"""Server-sent events: parse the raw bytes of a response body into events (WHATWG rules)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event: its `event:` name (None when absent), joined `data:` and byte end."""

    event: str | None
    data: str
    end_offset: int

    def json(self) -> Any:
        """`data` parsed as JSON, or None when it is not JSON (e.g. `[DONE]`)."""
        try:
            return json.loads(self.data)
        except ValueError:
            return None


@dataclass
class SseStream:
    """A parsed stream: dispatched events, comment lines and any bytes left after the last event."""

    events: list[SseEvent] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    tail: str = ""
    invalid_utf8: bool = False

    def data_events(self) -> list[SseEvent]:
        """Events other than the `[DONE]` sentinel."""
        return [e for e in self.events if e.data != "[DONE]"]

    def payloads(self) -> list[Any]:
        """Parsed JSON of every non-sentinel event (None for data that is not JSON)."""
        return [e.json() for e in self.data_events()]

    @property
    def done(self) -> bool:
        """Whether a `data: [DONE]` sentinel was seen."""
        return any(e.data == "[DONE]" for e in self.events)


LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(text: str) -> list[tuple[str, int]]:
    """Split on CRLF, LF or CR; each line with the character offset just past its terminator.

    The last element is the unterminated remainder (possibly empty) with offset -1.
    """
    lines: list[tuple[str, int]] = []
    start = 0
    for match in LINE_BREAK.finditer(text):
        lines.append((text[start : match.start()], match.end()))
        start = match.end()
    lines.append((text[start:], -1))
    return lines


def parse_sse(raw: bytes) -> SseStream:
    """Parse an event stream; events are dispatched at blank lines, as a browser would."""
    stream = SseStream()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        stream.invalid_utf8 = True
        text = raw.decode("utf-8", errors="replace")
    text = text.removeprefix("\ufeff")
    event: str | None = None
    data: list[str] | None = None
    pending_start = 0
    *lines, (rest, _) = _lines(text)
    for line, end in lines:
        if line == "":
            if data is not None:
                byte_end = len(text[:end].encode("utf-8"))
                stream.events.append(SseEvent(event, "\n".join(data), byte_end))
            event, data = None, None
            pending_start = end
            continue
        if line.startswith(":"):
            stream.comments.append(line[1:].removeprefix(" "))
            continue
        name, colon, value = line.partition(":")
        if colon:
            value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data = [*(data or []), value]
    stream.tail = text[pending_start:] if (data is not None or rest) else ""
    return stream


def encode_sse(events: list[tuple[str | None, str]]) -> bytes:
    """Frame `(event name, data)` pairs as an event stream (single-line data only)."""
    out = []
    for name, data in events:
        prefix = f"event: {name}\n" if name is not None else ""
        out.append(f"{prefix}data: {data}\n\n")
    return "".join(out).encode("utf-8")
