"""Writes to the model-server records: registering the embedded server for every role."""

from django.db import transaction

from .embedded import EMBEDDED_CONTEXT_TOKENS, EmbeddedServer
from .models import ModelServer, Role, RoleAssignment

EMBEDDED_NAME = "embedded"


def register_embedded(server: EmbeddedServer, *, context_tokens: int = EMBEDDED_CONTEXT_TOKENS) -> ModelServer:
    """Record the embedded server (enabled) with its model's alias and sampling settings (the repeat penalty
    SmolLM2 needs), and give it every role; return it."""
    with transaction.atomic():
        record = ModelServer.objects.filter(name=EMBEDDED_NAME).first() or ModelServer(name=EMBEDDED_NAME)
        fields = {
            "backend": ModelServer.Backend.LLAMA_CPP, "base_url": server.base_url, "model_name": server.model.alias,
            "sampling": dict(server.model.sampling),
            "context_tokens": context_tokens, "parallel_slots": 1, "enabled": True, "embedded": True,
        }
        for field, value in fields.items():
            setattr(record, field, value)
        # LawDesk started this server itself on a loopback port it chose: not an operator rerouting evidence.
        record.trusted_move = True
        record.save()
        for role in Role:
            RoleAssignment.objects.update_or_create(role=role, defaults={"server": record})
    return record


def needs_embedded() -> bool:
    """True when no enabled model server other than the embedded one is configured."""
    return not ModelServer.objects.filter(enabled=True, embedded=False).exists()
