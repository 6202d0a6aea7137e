"""Model servers and the roles they hold.

This is the part of the topology the pipeline needs to send a stage somewhere; hosts, GPUs and NVLink boards
join it with the topology admin. Vocabulary (roles, backends) as in GLOSSARY.md.
"""

from django.db import models

from .llm.client import LLAMA_CPP, OLLAMA, OPENAI, ServerConfig


class Role(models.TextChoices):
    ROUTER = "router", "Router"
    GATE = "gate", "Gate (are there grounds?)"
    DRAFTER = "drafter", "Drafter"
    REASONER = "reasoner", "Reasoner (heavy reasoning)"
    REVIEWER = "reviewer", "Adversarial reviewer"
    EXTRACTOR = "extractor", "Financial / extraction"
    SUMMARIZER = "summarizer", "Summarizer"


class ModelServer(models.Model):
    """One model server (llama.cpp ``llama-server``, Ollama, or another OpenAI-compatible server).

    ``context_tokens`` is the per-request context (llama.cpp reports its own through ``/props``; Ollama needs it,
    sent as ``num_ctx``); ``parallel_slots`` is llama-server's ``--parallel`` (or OLLAMA_NUM_PARALLEL).
    ``embedded`` marks the CPU server that LawDesk starts itself when no other server is enabled.
    """

    class Backend(models.TextChoices):
        LLAMA_CPP = LLAMA_CPP, "llama.cpp (llama-server)"
        OLLAMA = OLLAMA, "Ollama"
        OPENAI = OPENAI, "Other OpenAI-compatible"

    name = models.CharField(max_length=100, unique=True)
    backend = models.CharField(max_length=20, choices=Backend.choices, default=Backend.LLAMA_CPP)
    base_url = models.URLField("base URL")
    model_name = models.CharField(max_length=200, blank=True, help_text="model name or alias the server expects")
    context_tokens = models.PositiveIntegerField(null=True, blank=True)
    parallel_slots = models.PositiveSmallIntegerField(default=1)
    enabled = models.BooleanField(default=True)
    embedded = models.BooleanField(default=False, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def client_config(self) -> ServerConfig:
        return ServerConfig(
            base_url=self.base_url,
            backend=self.backend,
            model=self.model_name,
            parallel_slots=self.parallel_slots,
            context_tokens=self.context_tokens,
            name=self.name,
        )


class RoleAssignment(models.Model):
    """Which server holds a role. A role has one server; a server may hold several roles."""

    role = models.CharField(max_length=20, choices=Role.choices, unique=True)
    server = models.ForeignKey(ModelServer, on_delete=models.CASCADE, related_name="roles")

    def __str__(self) -> str:
        return f"{self.role} -> {self.server}"
