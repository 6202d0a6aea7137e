"""Lines, server-sent events and NDJSON from a streamed response.

Lines end only at CR, LF or CRLF (WHATWG HTML, "Server-sent events", 9.2.5 "Parsing an event stream":
``end-of-line = ( cr lf / cr / lf )``; NDJSON ends records at LF with an optional CR). httpx's ``iter_lines``
follows ``str.splitlines`` and also breaks at U+0085, U+2028, U+2029 and other Unicode line breaks, which a model's
text may hold inside one ``data:`` line: :func:`crlf_lines` is the one line reader every stream goes through.
It reads httpx's ``iter_text``, which decodes bytes split anywhere (inside a multi-byte UTF-8 character such as
``§`` too). httpx-sse 0.4.3 splits the same way, but its line decoder is private, its public API reads SSE only
(not Ollama's NDJSON), refuses a response not labelled ``text/event-stream`` and drops llama.cpp's quirk: older
``llama-server`` builds report a failure mid-stream as a bare ``error: {...}`` line, a field the standard says to
ignore and :func:`sse_events` surfaces.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


def crlf_lines(chunks: Iterable[str]) -> Iterator[str]:
    """Yield the lines of decoded text arriving in ``chunks`` of any size, without their line breaks.

    A line ends at CR, LF or CRLF only (also when the CR and the LF arrive in different chunks); every other
    character, U+0085, U+2028 and U+2029 included, stays inside its line. A last line without a break is yielded
    when the chunks end.
    """
    rest = ""
    lf_may_follow_cr = False
    for chunk in chunks:
        if not chunk:
            continue
        if lf_may_follow_cr and chunk[0] == "\n":
            chunk = chunk[1:]  # the second half of a CRLF whose CR ended the previous chunk
        lf_may_follow_cr = chunk.endswith("\r")
        if not chunk:
            continue
        text = rest + chunk
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        parts = text.split("\n")
        rest = parts.pop()
        yield from parts
    if rest:
        yield rest


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
