"""One client for every model server LawDesk talks to: llama.cpp ``llama-server``, Ollama, and any
OpenAI-compatible server. See :mod:`pipeline.llm.client`."""

from .client import ModelClient
from .errors import (
    Cancelled,
    ContextOverflow,
    ModelServerError,
    PromptTruncated,
    SchemaError,
    ServerLoading,
    ServerUnavailable,
    StreamBroken,
    StreamTimeout,
)
from .hosts import HostAllowlist, HostNotAllowed
from .types import Generation, Message, Sampling

__all__ = [
    "Cancelled",
    "ContextOverflow",
    "Generation",
    "HostAllowlist",
    "HostNotAllowed",
    "Message",
    "ModelClient",
    "ModelServerError",
    "PromptTruncated",
    "Sampling",
    "SchemaError",
    "ServerLoading",
    "ServerUnavailable",
    "StreamBroken",
    "StreamTimeout",
]
