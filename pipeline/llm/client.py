"""Talk to one model server over httpx: streamed chat completions, context checks, JSON-schema output, embeddings
and reranking.

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
- Embeddings: llama.cpp (a server started with ``--embeddings``) and OpenAI-compatible servers ``POST
  /v1/embeddings`` ``{"input": [...], "model"}`` -> ``data: [{"index", "embedding"}]``, ``usage.prompt_tokens``;
  Ollama ``POST /api/embed`` ``{"model", "input"}`` -> ``embeddings``, ``prompt_eval_count``. Reranking:
  llama.cpp (``--reranking``) and vLLM ``POST /v1/rerank`` ``{"query", "documents", "top_n"}`` -> ``results:
  [{"index", "relevance_score"}]``, best first; Ollama has none.
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


def http_client(server: ServerConfig, *, timeout: httpx.Timeout,
                transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """Return an HTTP client for ``server``, the one way LawDesk opens a connection to a model server (this
    module's :class:`ModelClient` and the topology probe). Raises :class:`~pipeline.llm.hosts.HostNotAllowed`
    before any request, and before the API key is put in a header, when the address is outside
    ``server.allowed_hosts``: evidence goes only where the installer allowed."""
    server.check_address()
    headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
    return httpx.Client(base_url=server.base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)


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
        self._http = http_client(server, timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s),
                                 transport=transport)
        self.server = server
        self.loading_wait_s = loading_wait_s
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
            return self._when_loaded(lambda: self._stream(messages, sampling, schema, on_token, cancel, extra_body))

    def _when_loaded(self, call):
        """Return ``call()``, called again while the server answers 503 (loading its model) for up to
        ``loading_wait_s`` in all; then raise ServerLoading."""
        retrying = Retrying(
            retry=retry_if_exception_type(_Loading),
            wait=wait_exponential(multiplier=0.5, max=5),
            stop=stop_after_delay(self.loading_wait_s),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return call()
        except _Loading as loading:
            raise ServerLoading(
                f"{self.server.label} was still loading its model after {self.loading_wait_s:.0f} s ({loading})."
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

    # ---- embeddings and reranking --------------------------------------------------------------------------

    def embed(self, texts: list[str], *, batch_size: int = 32) -> Embeddings:
        """Return the embedding of each of ``texts``, in their order, sending ``batch_size`` texts a request.

        llama.cpp and OpenAI-compatible servers (vLLM): ``POST /v1/embeddings`` with ``{"input": [...], "model":
        ...}``; each ``data`` item names its input by ``index`` (put in order here). Ollama: ``POST /api/embed``
        with ``{"model", "input", "options": {"num_ctx"}}``, answering ``embeddings`` in input order. An input
        longer than the server's per-slot context is refused by llama.cpp (ModelServerError: the whole batch
        fails; the embedded embedder holds 512 tokens) and cut by Ollama without a word.
        Raises ServerUnavailable, ServerLoading (503 for longer than ``loading_wait_s``), StreamTimeout, and
        ModelServerError for a refusal or an answer that is not one vector, all of one length, per input.
        """
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        started = time.perf_counter()
        vectors: list[list[float]] = []
        prompt_tokens: int | None = 0
        model = ""
        gate = slots_for(self.server.base_url, self.server.parallel_slots)
        for first in range(0, len(texts), batch_size):
            batch = list(texts[first:first + batch_size])
            with gate.hold():
                part, tokens, model = self._when_loaded(lambda batch=batch: self._embed_batch(batch))
            if vectors and part and len(part[0]) != len(vectors[0]):
                raise ModelServerError(f"{self.server.label} changed the embedding length between batches "
                                       f"({len(vectors[0])}, then {len(part[0])}).")
            vectors.extend(part)
            prompt_tokens = None if prompt_tokens is None or tokens is None else prompt_tokens + tokens
        return Embeddings(vectors=vectors, model=model or self.server.model, prompt_tokens=prompt_tokens,
                          duration_ms=(time.perf_counter() - started) * 1000)

    def _embed_batch(self, texts: list[str]) -> tuple[list[list[float]], int | None, str]:
        if self.server.backend == OLLAMA:
            path = "/api/embed"
            body = {"model": self.server.model, "input": texts, "options": {"num_ctx": self.server.context_tokens}}
        else:
            path = "/v1/embeddings"
            # No model named: llama.cpp answers with its own alias (it echoes a name it is sent).
            body = {"input": texts, **self._model_field(), "encoding_format": "float"}
        answer = self._answer_json(path, body)
        try:
            if self.server.backend == OLLAMA:
                vectors, tokens = answer["embeddings"], answer.get("prompt_eval_count")
            else:
                items = sorted(answer["data"], key=lambda item: item["index"])
                if [item["index"] for item in items] != list(range(len(items))):
                    raise ValueError(f"indices {[item['index'] for item in items]}")
                vectors, tokens = [item["embedding"] for item in items], (answer.get("usage") or {}).get(
                    "prompt_tokens")
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ModelServerError(f"{self.server.label} answered {path} without embeddings in the expected form "
                                   f"({type(error).__name__}: {error}).") from None
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            count = len(vectors) if isinstance(vectors, list) else "no list of"
            raise ModelServerError(f"{self.server.label} sent {count} vectors for {len(texts)} texts ({path}).")
        for number, vector in enumerate(vectors):
            problem = _vector_problem(vector, len(vectors[0]) if isinstance(vectors[0], list) else 0)
            if problem:
                raise ModelServerError(f"{self.server.label} sent a bad vector for text {number} ({path}): {problem}.")
        tokens = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None
        return [[float(x) for x in vector] for vector in vectors], tokens, str(answer.get("model") or "")

    def rerank(self, query: str, documents: list[str]) -> list[float]:
        """Return the relevance of each of ``documents`` to ``query``, in document order (higher is closer; the
        scale is the model's own).

        llama.cpp (a server started with ``--reranking`` and a reranker model) and OpenAI-compatible servers that
        have it (vLLM): ``POST /v1/rerank`` with ``{"query", "documents", "top_n"}`` (``top_n`` every document),
        answering ``results`` ``[{"index", "relevance_score"}]`` sorted by score. Ollama has no reranking
        endpoint: ModelServerError before any request. Other errors as :meth:`embed`.
        """
        if self.server.backend == OLLAMA:
            raise ModelServerError(f"{self.server.label} is an Ollama server, and Ollama has no reranking endpoint: "
                                   "give the reranker role to a llama.cpp server started with --reranking, or to "
                                   "a vLLM server.")
        if not documents:
            return []
        body = {**self._model_field(), "query": query, "documents": list(documents), "top_n": len(documents)}
        with slots_for(self.server.base_url, self.server.parallel_slots).hold():
            answer = self._when_loaded(lambda: self._answer_json("/v1/rerank", body))
        scores: dict[int, float] = {}
        try:
            for result in answer["results"]:
                index, score = result["index"], result["relevance_score"]
                if not isinstance(index, int) or not 0 <= index < len(documents) or index in scores:
                    raise ValueError(f"index {index!r}")
                if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                    raise ValueError(f"score {score!r}")
                scores[index] = float(score)
        except (KeyError, TypeError, ValueError) as error:
            raise ModelServerError(f"{self.server.label} answered /v1/rerank without scores in the expected form "
                                   f"({type(error).__name__}: {error}).") from None
        if len(scores) != len(documents):
            raise ModelServerError(f"{self.server.label} scored {len(scores)} of {len(documents)} documents "
                                   "(/v1/rerank).")
        return [scores[index] for index in range(len(documents))]

    def _model_field(self) -> dict:
        return {"model": self.server.model} if self.server.model else {}

    def _answer_json(self, path: str, body: dict) -> dict:
        """POST ``body`` to ``path`` and return the JSON object answered; raise _Loading for a 503 (the caller
        retries), ModelServerError for another status or an answer that is not a JSON object."""
        response = self._send("POST", path, json=body)
        if response.status_code == 503:
            raise _Loading(_error_message(response))
        if response.status_code != 200:
            raise ModelServerError(f"{self.server.label} refused {path}: HTTP {response.status_code} "
                                   f"{_error_message(response)}")
        try:
            answer = response.json()
        except ValueError:
            raise ModelServerError(f"{self.server.label} answered {path} with something that is not JSON: "
                                   f"{response.text[:200]!r}") from None
        if not isinstance(answer, dict):
            raise ModelServerError(f"{self.server.label} answered {path} with JSON that is not an object.")
        return answer

    def _send(self, method: str, path: str, **kwargs) -> httpx.Response:
        try:
            return self._http.request(method, path, **kwargs)
        except httpx.ConnectError as error:
            raise ServerUnavailable(f"Could not connect to {self.server.label}: {error}.") from error
        except httpx.ReadTimeout as error:
            raise StreamTimeout(f"{self.server.label} did not answer {path} within {self._http.timeout.read:.0f} s."
                                ) from error
        except httpx.TransportError as error:
            raise ModelServerError(f"{self.server.label} did not answer {path}: {error}.") from error

    def _request_json(self, method: str, path: str, **kwargs) -> dict:
        response = self._send(method, path, **kwargs)
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


def _vector_problem(vector, length: int) -> str | None:
    """Return what is wrong with one embedding (not a list of finite numbers of ``length``), or None."""
    if not isinstance(vector, list) or not vector:
        return "not a non-empty list of numbers"
    if len(vector) != length:
        return f"{len(vector)} numbers where the first vector has {length}"
    if not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in vector):
        return "not all finite numbers"
    return None


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
