"""Writes to the model-server records: registering the embedded server for every role."""

import logging
from pathlib import Path

from django.db import transaction

from .embedded import EMBEDDED_CONTEXT_TOKENS, EmbeddedServer
from .models import RETRIEVAL_ROLES, ModelServer, Role, RoleAssignment
from .own_servers import own_server_record
from .topology.gguf_header import GgufHeaderError, header_read

logger = logging.getLogger(__name__)

EMBEDDED_NAME = "embedded"
# The embedded embedding server: a second llama-server, started with --embeddings (a chat server refuses
# /v1/embeddings, and one started with --embeddings serves no chat).
EMBEDDED_EMBEDDER_NAME = "embedded-embedder"


def register_embedded(server: EmbeddedServer, *, context_tokens: int = EMBEDDED_CONTEXT_TOKENS) -> ModelServer:
    """Record the embedded server (enabled) with its model's alias and sampling settings (the repeat penalty
    SmolLM2 needs), and give it every role that generates text; return it."""
    with transaction.atomic():
        record = ModelServer.objects.filter(name=EMBEDDED_NAME).first() or ModelServer(name=EMBEDDED_NAME)
        fields = {
            "backend": ModelServer.Backend.LLAMA_CPP, "base_url": server.base_url, "model_name": server.model.alias,
            "sampling": dict(server.model.sampling),
            "context_tokens": context_tokens, "parallel_slots": 1, "enabled": True, "embedded": True,
            # What the starter ran, so the topology page's launch line is the command that is running.
            "started_command": [str(word) for word in server.process.args],
            "model_path": str(server.model_path), "gguf_header": _header(server.model_path),
        }
        for field, value in fields.items():
            setattr(record, field, value)
        # LawDesk started this server itself on a loopback port it chose: not an operator rerouting evidence.
        record.trusted_move = True
        record.save()
        own_server_record(name=EMBEDDED_NAME, base_url=server.base_url, pid=server.process.pid)
        for role in Role:
            if role not in RETRIEVAL_ROLES:
                RoleAssignment.objects.update_or_create(role=role, defaults={"server": record})
    return record


def register_embedded_embedder(server: EmbeddedServer, *, context_tokens: int) -> ModelServer:
    """Record the embedded embedding server (enabled, loopback, started by LawDesk) and give it the embedder
    role; return it. The reranker role is left as it is: the embedded models include no reranker."""
    with transaction.atomic():
        record = ModelServer.objects.filter(name=EMBEDDED_EMBEDDER_NAME).first() or ModelServer(
            name=EMBEDDED_EMBEDDER_NAME)
        fields = {
            "backend": ModelServer.Backend.LLAMA_CPP, "base_url": server.base_url, "model_name": server.model.alias,
            "sampling": {}, "context_tokens": context_tokens, "parallel_slots": 1, "enabled": True,
            "embedded": True, "started_command": [str(word) for word in server.process.args],
            "model_path": str(server.model_path), "gguf_header": _header(server.model_path),
        }
        for field, value in fields.items():
            setattr(record, field, value)
        record.trusted_move = True
        record.save()
        own_server_record(name=EMBEDDED_EMBEDDER_NAME, base_url=server.base_url, pid=server.process.pid)
        RoleAssignment.objects.update_or_create(role=Role.EMBEDDER, defaults={"server": record})
    return record


def _header(path: Path) -> dict:
    """The GGUF header of the embedded model (LawDesk installed the file, so it is on this machine), as stored on
    the server record; {} when it cannot be read, which leaves the forecast saying so rather than stopping the
    start."""
    try:
        return header_read(path).to_json()
    except (GgufHeaderError, OSError):
        logger.warning("The embedded model's GGUF header at %s could not be read; no forecast for it.", path)
        return {}


def needs_embedded() -> bool:
    """True when no enabled model server other than the embedded one is configured."""
    return not ModelServer.objects.filter(enabled=True, embedded=False).exists()


def needs_embedded_embedder() -> bool:
    """True when no enabled server other than LawDesk's own holds the embedder role."""
    return not RoleAssignment.objects.filter(role=Role.EMBEDDER, server__enabled=True,
                                             server__embedded=False).exists()
