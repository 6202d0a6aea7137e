"""Server-sent events and NDJSON over httpx's line iterator.

httpx's ``iter_lines`` already does the hard part of streaming text: bytes split anywhere (inside a multi-byte
UTF-8 character such as ``§`` too) are decoded incrementally, and lines split across reads are joined. What
remains is SSE's field grammar (WHATWG HTML, "Server-sent events", 9.2.6), plus one llama.cpp quirk no SSE
library surfaces: older ``llama-server`` builds report a failure mid-stream as a bare ``error: {...}`` line,
a field the standard says to ignore.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    """``kind`` is ``data`` (a complete event's data, lines joined with newlines) or ``error`` (llama.cpp's
    bare ``error:`` field)."""

    kind: str
    payload: str


def sse_events(lines: Iterable[str]) -> Iterator[SseEvent]:
    """Yield events from decoded lines. Comment lines (``: ping``) and other fields (``event``, ``id``,
    ``retry``) are skipped; an unterminated last event is still dispatched when the lines end."""
    data: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if line == "":
            if data:
                yield SseEvent("data", "\n".join(data))
                data = []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "error":
            yield SseEvent("error", value)
    if data:
        yield SseEvent("data", "\n".join(data))


def ndjson_lines(lines: Iterable[str]) -> Iterator[str]:
    """Yield the non-blank lines of a newline-delimited JSON stream (Ollama's native API)."""
    for line in lines:
        if line.strip():
            yield line
