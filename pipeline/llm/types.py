"""Requests and results shared by every backend."""

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Message:
    """A chat message; ``role`` is ``system``, ``user`` or ``assistant``."""

    role: str
    content: str


@dataclass(frozen=True)
class Sampling:
    """Sampling settings, recorded with every request. Stages default to greedy decoding with a fixed seed, so a
    re-run on the same server and evidence gives the same output. ``max_tokens`` is the completion budget.
    ``repeat_penalty`` (llama.cpp and Ollama ``repeat_penalty``; 1.0 is none) is sent only when set: a server's
    record may set it for a model that loops under greedy decoding (:attr:`ModelServer.sampling`)."""

    temperature: float = 0.0
    seed: int = 1234
    top_k: int = 1
    top_p: float = 1.0
    max_tokens: int = 512
    repeat_penalty: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Generation:
    """One completed generation, the same for every backend.

    Server figures are as the server reports them (llama.cpp ``timings``; Ollama ``eval_count``/``eval_duration``
    in ns); ``measured_decode_tok_s`` is ours: completion tokens after the first, over the time from the first to
    the last streamed token. ``first_token_ms`` counts from sending the request.

    ``truncated`` is True when the server read far fewer prompt tokens (``prompt_tokens`` plus
    ``prompt_tokens_cached``) than our own count of the prompt (``prompt_tokens_counted``): it cut the prompt,
    so the answer was not grounded on all the evidence sent (see ``ModelClient._mark_truncated``).
    """

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    decode_tok_s: float | None
    prompt_tok_s: float | None
    measured_decode_tok_s: float | None
    duration_ms: float
    first_token_ms: float | None
    model: str = ""
    sampling: dict[str, Any] = field(default_factory=dict)
    parsed: Any = None
    repaired: bool = False
    prompt_tokens_cached: int | None = None
    prompt_tokens_counted: int | None = None
    truncated: bool = False


@dataclass
class Embeddings:
    """The vectors of one :meth:`ModelClient.embed <pipeline.llm.client.ModelClient.embed>` call, one per input
    text and in input order, as the server gave them: llama.cpp normalises each to unit length (its default
    ``--embd-normalize 2``), other servers may not, so a caller comparing them normalises itself.
    ``prompt_tokens`` is the server's count over every batch (llama.cpp and OpenAI ``usage.prompt_tokens``,
    Ollama ``prompt_eval_count``), None where a batch's answer had none; ``duration_ms`` is ours, all batches."""

    vectors: list[list[float]]
    model: str
    prompt_tokens: int | None
    duration_ms: float
