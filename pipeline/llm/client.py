"""Talk to one model server over httpx: streamed chat completions, context checks, JSON-schema output.

Wire formats, as the servers document them:
- llama.cpp ``llama-server`` (tools/server/README.md): ``POST /v1/chat/completions`` with ``stream: true`` sends
  SSE ``data:`` chunks; the last chunk carries ``timings`` (``prompt_n``, ``prompt_per_second``, ``predicted_n``,
  ``predicted_per_second``), then ``data: [DONE]``. ``GET /health`` answers 503 ``{"error": {"code": 503,
  "message": "Loading model"}}`` while loading; ``GET /props`` gives ``default_generation_settings.n_ctx``
  (per slot); ``POST /apply-template`` and ``POST /tokenize`` count a chat prompt exactly.
  ``response_format: {"type": "json_schema", "json_schema": {"schema": ...}}`` constrains the output.
- Ollama (docs/api.md): ``POST /api/chat`` streams NDJSON; the final line has ``done: true``, ``eval_count``,
  ``eval_duration`` (ns), ``prompt_eval_count``, ``prompt_eval_duration``; ``format`` takes a JSON schema;
  ``options.num_ctx`` sets the context (always sent, always the same, since a new value reloads the model and
  Ollama silently truncates a prompt that does not fit).
- Any OpenAI-compatible server: the chat-completions stream without ``timings``.
"""

import json
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx
import jsonschema
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_exponential

from .errors import (
    ContextOverflow,
    ModelServerError,
    SchemaError,
    ServerLoading,
    ServerUnavailable,
    StreamBroken,
    StreamTimeout,
)
from .hosts import HostAllowlist, check_server_address
from .readers import Accumulator, TokenCallback, cancellable, read_ollama, read_openai
from .slots import slots_for
from .stream import crlf_lines
from .types import Embeddings, Generation, Message, Sampling

LLAMA_CPP = "llama.cpp"
OLLAMA = "ollama"
OPENAI = "openai"
BACKENDS = (LLAMA_CPP, OLLAMA, OPENAI)

# Where a server cannot count tokens for us (Ollama), assume 3 characters per token (English prose runs near 4)
# plus 8 tokens of chat template per message: an overestimate, so a prompt we accept fits.
ESTIMATE_CHARS_PER_TOKEN = 3
ESTIMATE_TEMPLATE_TOKENS_PER_MESSAGE = 8
# Ollama cuts a prompt longer than num_ctx without an error (its runner only logs "truncating input prompt"
# and answers with status 200); its final line's
# prompt_eval_count (plus prompt_eval_cached_count, where the server reports it) then counts only what it read.
# Our estimate runs high (about 0.75 of it is real for English prose), so a count under half of it means the
# server read well under what we sent: the answer is marked truncated.
OLLAMA_TRUNCATED_BELOW = 0.5

@dataclass(frozen=True)
class ServerConfig:
    """How to reach one model server. ``context_tokens`` is required for Ollama (sent as ``num_ctx``) and
    optional elsewhere (llama.cpp reports its own); ``parallel_slots`` bounds simultaneous requests.
    ``allowed_hosts`` is where requests may go (LAWDESK_MODEL_HOSTS, :mod:`pipeline.llm.hosts`); left empty it
    allows loopback only."""

    base_url: str
    backend: str = LLAMA_CPP
    model: str = ""
    api_key: str = ""
    parallel_slots: int = 1
    context_tokens: int | None = None
    name: str = ""
    allowed_hosts: HostAllowlist = HostAllowlist()

    def check_address(self) -> None:
        """Raise :class:`~pipeline.llm.hosts.HostNotAllowed` when ``base_url`` is outside ``allowed_hosts``."""
        check_server_address(self.base_url, self.allowed_hosts, label=self.name)

    @property
    def label(self) -> str:
        return self.name or self.base_url


class _Loading(Exception):
    """Internal: the server answered 503 while loading; tenacity retries on it."""


class ModelClient:
    """A client for one server. Thread-safe; one instance may serve many stages.

    Timeouts in seconds: ``connect_timeout_s`` to open a connection, ``read_timeout_s`` between two reads of a
    stream (a stalled generation), ``loading_wait_s`` in total for a server that is still loading its model.
    """

    def __init__(
        self,
        server: ServerConfig,
        *,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 120.0,
        loading_wait_s: float = 300.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if server.backend not in BACKENDS:
            raise ValueError(f"unknown backend {server.backend!r}; expected one of {BACKENDS}")
        if server.backend == OLLAMA and not server.context_tokens:
            raise ValueError("an Ollama server needs context_tokens: it is sent as num_ctx with every request")
        # Before any request, and before the API key goes into a header: evidence goes only where the installer
        # allowed (HostNotAllowed otherwise).
        server.check_address()
        self.server = server
        self.loading_wait_s = loading_wait_s
        headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
        self._http = httpx.Client(
            base_url=server.base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s),
            transport=transport,
        )
        self._context_tokens: int | None = server.context_tokens

    def close(self) -> None:
        self._http.close()

    # ---- health and context -------------------------------------------------------------------------------

    def health(self) -> str:
        """Return ``up``, ``loading`` or ``down`` (reachability only; speed is the topology probe's job)."""
        path = {LLAMA_CPP: "/health", OLLAMA: "/api/tags", OPENAI: "/v1/models"}[self.server.backend]
        try:
            response = self._http.get(path, timeout=5)
        except httpx.TransportError:
            return "down"
        if response.status_code == 503:
            return "loading"
        return "up" if response.status_code == 200 else "down"

    def context_tokens(self) -> int | None:
        """The per-slot context size in tokens: llama.cpp's ``/props``, else the configured value."""
        if self._context_tokens is None and self.server.backend == LLAMA_CPP:
            props = self._request_json("GET", "/props")
            settings = props.get("default_generation_settings") or {}
            self._context_tokens = int(settings.get("n_ctx") or props.get("n_ctx") or 0) or None
        return self._context_tokens

    def count_prompt_tokens(self, messages: list[Message]) -> tuple[int, bool]:
        """Return (tokens, exact). llama.cpp counts exactly, chat template included (``/apply-template`` then
        ``/tokenize``); other servers get the stated conservative estimate."""
        payload = [{"role": m.role, "content": m.content} for m in messages]
        if self.server.backend == LLAMA_CPP:
            prompt = self._request_json("POST", "/apply-template", json={"messages": payload})["prompt"]
            tokens = self._request_json(
                "POST", "/tokenize", json={"content": prompt, "add_special": True, "parse_special": True}
            )["tokens"]
            return len(tokens), True
        estimate = sum(
            math.ceil(len(m.content) / ESTIMATE_CHARS_PER_TOKEN) + ESTIMATE_TEMPLATE_TOKENS_PER_MESSAGE
            for m in messages
        )
        return estimate, False

    def check_fits(self, messages: list[Message], sampling: Sampling) -> int | None:
        """Raise ContextOverflow if the prompt plus ``sampling.max_tokens`` exceeds the context; return the
        prompt's token count (None where the server's context is unknown)."""
        context = self.context_tokens()
        if not context:
            return None
        prompt_tokens, exact = self.count_prompt_tokens(messages)
        needed = prompt_tokens + sampling.max_tokens
        if needed > context:
            how = "" if exact else " (estimated)"
            raise ContextOverflow(
                f"The prompt is {prompt_tokens} tokens{how} and the answer may take {sampling.max_tokens}: "
                f"{needed} in all, but {self.server.label} holds {context} per request. Over by "
                f"{needed - context} tokens; send fewer pages or a shorter instruction.",
                needed_tokens=needed,
                context_tokens=context,
            )
        return prompt_tokens

    # ---- generation ---------------------------------------------------------------------------------------

    def generate(
        self,
        messages: list[Message],
        *,
        sampling: Sampling = Sampling(),
        schema: dict[str, Any] | None = None,
        on_token: TokenCallback | None = None,
        cancel: threading.Event | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> Generation:
        """Stream one chat completion and return it.

        ``extra_body`` adds backend-specific request fields (for llama.cpp, e.g. ``{"ignore_eos": true}``).

        With ``schema``, the server is asked to constrain its output to that JSON schema, the result is parsed and
        validated (``Generation.parsed``), and one repair request follows a failure; a second failure raises
        SchemaError with the raw text. ``on_token`` gets each piece of text as it arrives; setting ``cancel``
        closes the stream (the server stops generating) and raises Cancelled.
        A truncated answer (``Generation.truncated``, Ollama only) is returned as it is, neither validated nor
        repaired: the caller decides, and a stage fails it (:class:`~pipeline.llm.errors.PromptTruncated`).
        Raises ContextOverflow before sending a prompt that does not fit, and the other ModelServerError
        subclasses for each failure of the server or the stream.
        """
        self.check_fits(messages, sampling)
        generation = self._generate_once(messages, sampling, schema, on_token, cancel, extra_body)
        self._mark_truncated(generation, messages)
        if schema is None or generation.truncated:
            return generation
        problem = _schema_problem(generation.text, schema)
        if problem is None:
            generation.parsed = json.loads(generation.text)
            return generation
        repair = [
            *messages,
            Message("assistant", generation.text),
            Message("user", f"That answer is not valid JSON for the required schema ({problem}). "
                            "Answer again with only the corrected JSON."),
        ]
        repaired = self._generate_once(repair, sampling, schema, on_token, cancel, extra_body)
        self._mark_truncated(repaired, repair)
        if repaired.truncated:
            return repaired
        problem = _schema_problem(repaired.text, schema)
        if problem is not None:
            raise SchemaError(
                f"{self.server.label} gave output that does not match the schema twice: {problem}",
                raw_text=repaired.text,
            )
        repaired.parsed = json.loads(repaired.text)
        repaired.repaired = True
        return repaired

    def _mark_truncated(self, generation: Generation, messages: list[Message]) -> None:
        """Set ``generation.truncated`` when an Ollama server read far fewer prompt tokens than we sent.

        llama.cpp counts exactly and ContextOverflow refuses a prompt before it is sent; an OpenAI-compatible
        server rejects an over-long prompt. Ollama alone cuts silently, so its answers are checked against
        :data:`OLLAMA_TRUNCATED_BELOW`. A final line without ``prompt_eval_count`` cannot be checked and is left
        unmarked (``prompt_tokens`` stays None).
        """
        if self.server.backend != OLLAMA or generation.prompt_tokens is None:
            return
        counted, _ = self.count_prompt_tokens(messages)
        generation.prompt_tokens_counted = counted
        read = generation.prompt_tokens + (generation.prompt_tokens_cached or 0)
        generation.truncated = read < counted * OLLAMA_TRUNCATED_BELOW

    def _generate_once(self, messages, sampling, schema, on_token, cancel, extra_body=None) -> Generation:
        gate = slots_for(self.server.base_url, self.server.parallel_slots)
        with gate.hold(cancel):
            retrying = Retrying(
                retry=retry_if_exception_type(_Loading),
                wait=wait_exponential(multiplier=0.5, max=5),
                stop=stop_after_delay(self.loading_wait_s),
                reraise=True,
            )
            try:
                for attempt in retrying:
                    with attempt:
                        return self._stream(messages, sampling, schema, on_token, cancel, extra_body)
            except _Loading as loading:
                raise ServerLoading(
                    f"{self.server.label} was still loading its model after {self.loading_wait_s:.0f} s "
                    f"({loading})."
                ) from None
        raise AssertionError("unreachable")

    def _request_body(self, messages, sampling: Sampling, schema) -> tuple[str, dict]:
        chat = [{"role": m.role, "content": m.content} for m in messages]
        if self.server.backend == OLLAMA:
            options = {
                "temperature": sampling.temperature,
                "seed": sampling.seed,
                "top_k": sampling.top_k,
                "top_p": sampling.top_p,
                "num_predict": sampling.max_tokens,
                "num_ctx": self.server.context_tokens,
            }
            if sampling.repeat_penalty is not None:
                options["repeat_penalty"] = sampling.repeat_penalty
            body = {"model": self.server.model, "messages": chat, "stream": True, "options": options}
            if schema is not None:
                body["format"] = schema
            return "/api/chat", body
        body = {
            "model": self.server.model or "default",
            "messages": chat,
            "stream": True,
            "temperature": sampling.temperature,
            "seed": sampling.seed,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
            "stream_options": {"include_usage": True},
        }
        if self.server.backend == LLAMA_CPP:
            body["top_k"] = sampling.top_k
            if sampling.repeat_penalty is not None:
                body["repeat_penalty"] = sampling.repeat_penalty
        if schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "stage", "schema": schema}}
        return "/v1/chat/completions", body

    def _stream(self, messages, sampling: Sampling, schema, on_token, cancel, extra_body=None) -> Generation:
        path, body = self._request_body(messages, sampling, schema)
        body.update(extra_body or {})
        accumulator = Accumulator(on_token)
        started = time.perf_counter()
        try:
            with self._http.stream("POST", path, json=body) as response:
                if response.status_code == 503:
                    response.read()
                    raise _Loading(_error_message(response))
                if response.status_code != 200:
                    response.read()
                    raise ModelServerError(
                        f"{self.server.label} refused the request: HTTP {response.status_code} "
                        f"{_error_message(response)}"
                    )
                lines = cancellable(crlf_lines(response.iter_text()), cancel, accumulator)
                if self.server.backend == OLLAMA:
                    result = read_ollama(lines, accumulator, self.server.label)
                else:
                    result = read_openai(lines, accumulator, self.server.label)
        except httpx.ConnectError as error:
            raise ServerUnavailable(f"Could not connect to {self.server.label}: {error}.") from error
        except httpx.ReadTimeout as error:
            raise StreamTimeout(
                f"{self.server.label} sent nothing for {self._http.timeout.read:.0f} s in the middle of a "
                "generation.",
                partial_text=accumulator.text,
            ) from error
        except (httpx.RemoteProtocolError, httpx.ReadError) as error:
            raise StreamBroken(
                f"The connection to {self.server.label} broke during the generation: {error}.",
                partial_text=accumulator.text,
            ) from error
        result.duration_ms = (time.perf_counter() - started) * 1000
        result.first_token_ms = (
            (accumulator.first_at - started) * 1000 if accumulator.first_at is not None else None
        )
        result.sampling = sampling.as_dict()
        result.model = result.model or self.server.model
        return result

    # ---- retrieval: embeddings and reranking -----------------------------------------------------------

    def embed(self, texts: list[str], *, batch_size: int = 32) -> Embeddings:
        """Embed ``texts`` (one vector each, in order), ``batch_size`` inputs a request: llama.cpp, vLLM and other
        OpenAI-compatible servers ``POST /v1/embeddings`` (answers sorted by their ``index``); Ollama
        ``POST /api/embed``. Raises ServerUnavailable (cannot connect), ServerLoading (503), or ModelServerError
        for any other failure, including an answer whose count of vectors is not the count of inputs."""
        vectors: list[list[float]] = []
        tokens: int | None = 0
        model = self.server.model
        started = time.monotonic()
        for first in range(0, len(texts), max(1, batch_size)):
            batch = texts[first:first + batch_size]
            if self.server.backend == OLLAMA:
                body = self._request_json("POST", "/api/embed", json={"model": self.server.model, "input": batch})
                got = body.get("embeddings") if isinstance(body, dict) else None
                counted = body.get("prompt_eval_count") if isinstance(body, dict) else None
            else:
                payload = {"input": batch, **({"model": self.server.model} if self.server.model else {})}
                body = self._request_json("POST", "/v1/embeddings", json=payload)
                data = body.get("data") if isinstance(body, dict) else None
                got = None
                if isinstance(data, list) and all(isinstance(d, dict) for d in data):
                    got = [d.get("embedding") for d in sorted(data, key=lambda d: d.get("index", 0))]
                counted = (body.get("usage") or {}).get("prompt_tokens") if isinstance(body, dict) else None
                model = body.get("model") or model if isinstance(body, dict) else model
            if not isinstance(got, list) or not all(
                    isinstance(v, list) and v and all(isinstance(x, int | float) for x in v) for v in got):
                raise ModelServerError(f"{self.server.label} answered embeddings that are not lists of numbers.")
            if len(got) != len(batch):
                raise ModelServerError(f"{self.server.label} answered {len(got)} embeddings for {len(batch)} "
                                       "inputs.")
            vectors.extend(got)
            tokens = tokens + counted if tokens is not None and isinstance(counted, int) else None
        return Embeddings(vectors=vectors, model=str(model or ""), prompt_tokens=tokens or None,
                          duration_ms=(time.monotonic() - started) * 1000)

    def rerank(self, query: str, documents: list[str]) -> list[float]:
        """Relevance scores of ``documents`` for ``query``, in document order: llama.cpp ``POST /v1/rerank``
        (a server started with ``--reranking``). Ollama has no reranking endpoint: ModelServerError says so."""
        if self.server.backend == OLLAMA:
            raise ModelServerError(f"{self.server.label} is an Ollama server, which has no reranking endpoint.")
        body = self._request_json("POST", "/v1/rerank", json={
            "query": query, "documents": documents, "top_n": len(documents),
            **({"model": self.server.model} if self.server.model else {})})
        results = body.get("results") if isinstance(body, dict) else None
        scores: dict[int, float] = {}
        for result in results if isinstance(results, list) else []:
            if isinstance(result, dict) and isinstance(result.get("index"), int) and isinstance(
                    result.get("relevance_score"), int | float):
                scores[result["index"]] = float(result["relevance_score"])
        if sorted(scores) != list(range(len(documents))):
            raise ModelServerError(f"{self.server.label} did not score every document it was sent to rerank.")
        return [scores[i] for i in range(len(documents))]

    def _request_json(self, method: str, path: str, **kwargs) -> dict:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.ConnectError as error:
            raise ServerUnavailable(f"Could not connect to {self.server.label}: {error}.") from error
        except httpx.TransportError as error:
            raise ModelServerError(f"{self.server.label} did not answer {path}: {error}.") from error
        if response.status_code == 503:
            raise ServerLoading(f"{self.server.label} is loading its model ({_error_message(response)}).")
        if response.status_code != 200:
            raise ModelServerError(f"{self.server.label} answered {path} with HTTP {response.status_code}.")
        try:
            return response.json()
        except ValueError as error:
            raise ModelServerError(f"{self.server.label} answered {path} with something that is not JSON.") from error


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message", error))
    return str(error or body)[:300]


def _schema_problem(text: str, schema: dict) -> str | None:
    """Return why ``text`` is not a JSON document valid against ``schema``, or None if it is."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        return f"not JSON: {error.msg} at character {error.pos}"
    try:
        jsonschema.validate(document, schema)
    except jsonschema.ValidationError as error:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        return f"at {where}: {error.message}"
    return None
