"""Reading a streamed completion: OpenAI-style SSE chunks (llama.cpp, OpenAI-compatible servers) and Ollama's
NDJSON lines, into one :class:`~pipeline.llm.types.Generation`, with the text received so far kept on error."""

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from .errors import Cancelled, StreamBroken
from .stream import ndjson_lines, sse_events
from .types import Generation

TokenCallback = Callable[[str], None]


class Accumulator:
    """Collects streamed text and the times of the first and last pieces."""

    def __init__(self, on_token: TokenCallback | None) -> None:
        self.parts: list[str] = []
        self.pieces = 0
        self.first_at: float | None = None
        self.last_at: float | None = None
        self.on_token = on_token

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def add(self, piece: str) -> None:
        if not piece:
            return
        now = time.perf_counter()
        if self.first_at is None:
            self.first_at = now
        self.last_at = now
        self.parts.append(piece)
        self.pieces += 1
        if self.on_token is not None:
            self.on_token(piece)

    def measured_tok_s(self, tokens: int | None) -> float | None:
        count = tokens or self.pieces
        if self.first_at is None or self.last_at is None or count < 2 or self.last_at <= self.first_at:
            return None
        return (count - 1) / (self.last_at - self.first_at)


def cancellable(lines: Iterator[str], cancel: threading.Event | None, accumulator: Accumulator) -> Iterator[str]:
    for line in lines:
        if cancel is not None and cancel.is_set():
            # Leaving the stream's with-block closes the connection; llama-server and Ollama stop on a closed
            # connection, so no slot keeps generating for nobody.
            raise Cancelled("The generation was cancelled.", partial_text=accumulator.text)
        yield line


def _chunk(payload: str, label: str, accumulator: Accumulator) -> dict:
    """Parse one streamed JSON chunk; raise StreamBroken if it is not JSON or reports an error."""
    try:
        chunk = json.loads(payload)
    except json.JSONDecodeError as error:
        raise StreamBroken(f"{label} sent a chunk that is not JSON: {payload[:200]!r}",
                           partial_text=accumulator.text) from error
    if isinstance(chunk, dict) and "error" in chunk:
        raise StreamBroken(f"{label} reported an error mid-stream: {_describe(chunk['error'])}",
                           partial_text=accumulator.text)
    return chunk if isinstance(chunk, dict) else {}


def read_openai(lines: Iterator[str], accumulator: Accumulator, label: str) -> Generation:
    finish_reason = None
    usage: dict = {}
    timings: dict = {}
    model = ""
    done = False
    for event in sse_events(lines):
        if event.kind == "error":
            raise StreamBroken(f"{label} reported an error mid-stream: {event.payload}", partial_text=accumulator.text)
        if event.payload.strip() == "[DONE]":
            done = True
            break
        chunk = _chunk(event.payload, label, accumulator)
        model = chunk.get("model") or model
        for choice in chunk.get("choices") or []:
            accumulator.add((choice.get("delta") or {}).get("content") or "")
            # Ollama's OpenAI endpoint sends finish_reason "" on intermediate chunks: only a value counts.
            finish_reason = choice.get("finish_reason") or finish_reason
        usage = chunk.get("usage") or usage
        timings = chunk.get("timings") or timings
    if not done and finish_reason is None:
        raise StreamBroken(f"The stream from {label} ended before the generation finished.",
                           partial_text=accumulator.text)
    completion = timings.get("predicted_n") or usage.get("completion_tokens")
    return Generation(
        text=accumulator.text,
        finish_reason=finish_reason,
        # timings.prompt_n counts only the prompt tokens evaluated, not those reused from llama.cpp's prompt cache.
        prompt_tokens=usage.get("prompt_tokens") or timings.get("prompt_n"),
        completion_tokens=completion,
        decode_tok_s=timings.get("predicted_per_second"),
        prompt_tok_s=timings.get("prompt_per_second"),
        measured_decode_tok_s=accumulator.measured_tok_s(completion),
        duration_ms=0.0,
        first_token_ms=None,
        model=model,
    )


def read_ollama(lines: Iterator[str], accumulator: Accumulator, label: str) -> Generation:
    final: dict | None = None
    for line in ndjson_lines(lines):
        chunk = _chunk(line, label, accumulator)
        accumulator.add((chunk.get("message") or {}).get("content") or "")
        if chunk.get("done"):
            final = chunk
            break
    if final is None:
        raise StreamBroken(f"The stream from {label} ended before the generation finished.",
                           partial_text=accumulator.text)
    eval_count = final.get("eval_count")
    prompt_count = final.get("prompt_eval_count")
    return Generation(
        text=accumulator.text,
        finish_reason=final.get("done_reason") or "stop",
        prompt_tokens=prompt_count,
        completion_tokens=eval_count,
        decode_tok_s=_per_second(eval_count, final.get("eval_duration")),
        prompt_tok_s=_per_second(prompt_count, final.get("prompt_eval_duration")),
        measured_decode_tok_s=accumulator.measured_tok_s(eval_count),
        duration_ms=0.0,
        first_token_ms=None,
        model=final.get("model", ""),
        prompt_tokens_cached=final.get("prompt_eval_cached_count"),
    )


def _per_second(count: int | None, duration_ns: int | None) -> float | None:
    return count / (duration_ns / 1e9) if count and duration_ns else None


def _describe(error: Any) -> str:
    return str(error.get("message", error)) if isinstance(error, dict) else str(error)
