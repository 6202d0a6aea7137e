"""The model topology: hosts, their GPUs, the NVLink boards the GPUs form, the model servers pinned to them, the
role each server holds, and the history of health-and-speed probes.

Vocabulary (roles, backends, probe statuses) as in docs/glossary.md. The rules that judge a configuration live in
:mod:`pipeline.topology.rules` and are checked where GPUs are chosen, in the admin forms
(:mod:`pipeline.admin_forms`): a model's ``clean()`` cannot see many-to-many values before they are saved.
"""

import re
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from .api_keys import key_clear, key_read
from .llm.client import LLAMA_CPP, OLLAMA, OPENAI, ServerConfig
from .llm.hosts import HostNotAllowed, check_server_address
from .llm.types import Sampling
from .own_servers import model_hosts_allowlist

VLLM = "vllm"

# Decode floors in tok/s: below them a probe reports `slow`. 40 is the deployment's floor for its GPU servers;
# the embedded CPU server (Gemma 3 270M on a few cores) is judged by its own, lower one.
DEFAULT_DECODE_FLOOR_TOK_S = 40.0
EMBEDDED_DECODE_FLOOR_TOK_S = 10.0
# What a server record's ``sampling`` may set (pipeline.llm.types.Sampling; max_tokens is each stage's own).
SAMPLING_KEYS = ("temperature", "seed", "top_k", "top_p", "repeat_penalty")


def validate_server_url(value: str) -> None:
    """Accept http(s)://host[:port][/path], where host may be a single-label office name ("threadripper"),
    which Django's URLValidator refuses."""
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as error:
        raise ValidationError(f"{value} is not a valid server address ({error}).") from error
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise ValidationError("Write the server's address as http://host:port, for example http://threadripper:8080.")


def sampling_valid(sampling) -> bool:
    """Whether a server record's ``sampling`` is an object of numbers (booleans excluded) under SAMPLING_KEYS."""
    return isinstance(sampling, dict) and not any(
        k not in SAMPLING_KEYS or isinstance(v, bool) or not isinstance(v, int | float) for k, v in sampling.items())


class Role(models.TextChoices):
    ROUTER = "router", "Router"
    GATE = "gate", "Gate (are there grounds?)"
    DRAFTER = "drafter", "Drafter"
    REASONER = "reasoner", "Reasoner (heavy reasoning)"
    REVIEWER = "reviewer", "Adversarial reviewer"
    EXTRACTOR = "extractor", "Financial / extraction"
    SUMMARIZER = "summarizer", "Summarizer"
    # Retrieval, not generation: embeddings of page chunks (/v1/embeddings) and, where the office has one, a
    # cross-encoder that reorders the best candidates (llama.cpp --reranking, /v1/rerank).
    EMBEDDER = "embedder", "Embedder (retrieval)"
    RERANKER = "reranker", "Reranker (retrieval)"


# Roles that generate text; the embedded chat server holds these, the embedded embedder the embedder role.
RETRIEVAL_ROLES = frozenset({Role.EMBEDDER, Role.RERANKER})


class Host(models.Model):
    """A machine that holds GPUs and runs model servers. ``address`` is how LawDesk reaches it (host name or IP)."""

    name = models.CharField(max_length=100, unique=True)
    address = models.CharField(max_length=255, blank=True, help_text="host name or IP address")
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Board(models.Model):
    """GPUs of one host that a model may span: an NVLink group, an NVLink pair, or GPUs joined only by PCIe.

    A model server's GPUs stay inside one board, since hops between boards go over PCIe/NUMA. A GPU belongs to
    one board at most; the admin forms check both against the rules table (:mod:`pipeline.topology.rules`).
    """

    class Kind(models.TextChoices):
        NVLINK_GROUP = "nvlink_group", "NVLink group"
        NVLINK_PAIR = "nvlink_pair", "NVLink pair"
        PCIE = "pcie", "PCIe"

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="boards")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.NVLINK_GROUP)
    gpus = models.ManyToManyField("GPU", related_name="boards", blank=True)

    class Meta:
        ordering = ["host__name", "name"]
        constraints = [models.UniqueConstraint(fields=["host", "name"], name="board_name_per_host")]

    def __str__(self) -> str:
        return f"{self.name} ({self.host})"


class GPU(models.Model):
    """One GPU as NVML reports it. ``index`` is the NVML index (PCI bus order, the order CUDA uses with
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID``); ``compute_capability`` is "major.minor", e.g. "7.0" for a V100."""

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="gpus")
    index = models.PositiveSmallIntegerField("NVML index")
    uuid = models.CharField("UUID", max_length=80, blank=True)
    pci_bus_id = models.CharField("PCI bus id", max_length=32, blank=True)
    name = models.CharField(max_length=100)
    memory_total_mib = models.PositiveIntegerField("memory (MiB)")
    compute_capability = models.CharField(max_length=8, blank=True, help_text='"major.minor", e.g. 7.0')
    memory_bandwidth_gbs = models.FloatField(
        "memory bandwidth (GB/s)", null=True, blank=True,
        help_text="from NVML at discovery (bus width x max memory clock x 2); used only for GPUs missing from the "
                  "bandwidth table (pipeline/topology/bandwidth.py)",
    )

    class Meta:
        ordering = ["host__name", "index"]
        verbose_name = "GPU"
        constraints = [models.UniqueConstraint(fields=["host", "index"], name="gpu_index_per_host")]

    def __str__(self) -> str:
        return f"GPU {self.index} ({self.host})"

    def clean(self) -> None:
        if self.compute_capability and not re.fullmatch(r"\d+\.\d+", self.compute_capability):
            raise ValidationError({"compute_capability": 'Write it as major.minor, for example "7.0".'})


class NVLink(models.Model):
    """NVLink between two GPUs of one host; ``links`` is how many NVLink lanes join them (NVML reports each)."""

    gpu_a = models.ForeignKey(GPU, on_delete=models.CASCADE, related_name="+")
    gpu_b = models.ForeignKey(GPU, on_delete=models.CASCADE, related_name="+")
    links = models.PositiveSmallIntegerField(default=1)

    class Meta:
        verbose_name = "NVLink connection"
        constraints = [models.UniqueConstraint(fields=["gpu_a", "gpu_b"], name="nvlink_pair_once")]

    def __str__(self) -> str:
        return f"GPU {self.gpu_a.index} <-> GPU {self.gpu_b.index}"


class ModelServer(models.Model):
    """One model server (llama.cpp ``llama-server``, Ollama, vLLM, or another OpenAI-compatible server).

    ``context_tokens`` is the per-request context (llama.cpp reports its own through ``/props``; Ollama needs it,
    sent as ``num_ctx``); ``parallel_slots`` is llama-server's ``--parallel`` (or OLLAMA_NUM_PARALLEL); the
    launch line passes ``-c`` as their product, since llama-server divides ``-c`` among its slots.
    ``embedded`` marks the CPU server that LawDesk starts itself when no other server is enabled.
    The API key is never stored here: see :mod:`pipeline.api_keys`.
    ``gguf_header`` is the model's shape read from its GGUF header (:class:`pipeline.topology.gguf_header.ModelShape`
    as JSON; read from ``model_path`` when the file is on this machine, or from an uploaded header): the memory-fit
    rule and the decode-speed forecast use it; empty skips both.
    """

    class Backend(models.TextChoices):
        LLAMA_CPP = LLAMA_CPP, "llama.cpp (llama-server)"
        OLLAMA = OLLAMA, "Ollama"
        VLLM = VLLM, "vLLM"
        OPENAI = OPENAI, "Other OpenAI-compatible"

    class Quantization(models.TextChoices):
        F16 = "f16", "F16 (GGUF)"
        BF16 = "bf16", "BF16 (GGUF)"
        Q8_0 = "q8_0", "Q8_0 (GGUF)"
        Q6_K = "q6_k", "Q6_K (GGUF)"
        Q5_K_M = "q5_k_m", "Q5_K_M (GGUF)"
        Q4_K_M = "q4_k_m", "Q4_K_M (GGUF)"
        FP8 = "fp8", "FP8 (vLLM)"
        AWQ = "awq", "AWQ (vLLM)"
        AWQ_MARLIN = "awq_marlin", "AWQ, Marlin kernels (vLLM)"
        GPTQ = "gptq", "GPTQ (vLLM)"
        GPTQ_MARLIN = "gptq_marlin", "GPTQ, Marlin kernels (vLLM)"

    class CacheType(models.TextChoices):
        F16 = "f16", "f16"
        BF16 = "bf16", "bf16"
        F32 = "f32", "f32"
        Q8_0 = "q8_0", "q8_0"
        Q5_1 = "q5_1", "q5_1"
        Q5_0 = "q5_0", "q5_0"
        Q4_1 = "q4_1", "q4_1"
        Q4_0 = "q4_0", "q4_0"
        IQ4_NL = "iq4_nl", "iq4_nl"

    name = models.CharField(max_length=100, unique=True)
    host = models.ForeignKey(Host, on_delete=models.SET_NULL, null=True, blank=True, related_name="servers")
    backend = models.CharField(max_length=20, choices=Backend.choices, default=Backend.LLAMA_CPP)
    base_url = models.CharField("base URL", max_length=300, validators=[validate_server_url])
    model_name = models.CharField(max_length=200, blank=True, help_text="model name or alias the server expects")
    model_path = models.CharField(
        max_length=500, blank=True, help_text="GGUF path on the model host (llama-server -m) or model id (vLLM)"
    )
    quantization = models.CharField(max_length=20, choices=Quantization.choices, blank=True)
    kv_cache_type = models.CharField(
        "KV cache type", max_length=10, choices=CacheType.choices, default=CacheType.F16,
        help_text="llama-server -ctk and -ctv",
    )
    flash_attention = models.BooleanField(default=True, help_text="llama-server -fa on")
    context_tokens = models.PositiveIntegerField(null=True, blank=True, help_text="per request (per slot)")
    parallel_slots = models.PositiveSmallIntegerField(default=1)
    gpu_layers = models.PositiveSmallIntegerField(
        "GPU layers", default=999, help_text="llama-server -ngl; 999 keeps every layer on the GPUs"
    )
    extra_args = models.CharField(max_length=500, blank=True, help_text="more launch arguments, as typed")
    gpus = models.ManyToManyField(GPU, blank=True, related_name="servers", verbose_name="pinned GPUs")
    decode_floor_tok_s = models.FloatField(
        "decode floor (tok/s)", null=True, blank=True,
        help_text=f"below it a probe says slow; blank: {DEFAULT_DECODE_FLOOR_TOK_S:g} for a GPU server, "
                  f"{EMBEDDED_DECODE_FLOOR_TOK_S:g} for the embedded CPU server",
    )
    gguf_header = models.JSONField("GGUF header", default=dict, blank=True, editable=False)
    sampling = models.JSONField(
        "sampling settings", default=dict, blank=True,
        help_text='sent with every request to this server, over the greedy defaults, e.g. {"repeat_penalty": 1.3}; '
                  "keys: temperature, seed, top_k, top_p, repeat_penalty",
    )
    enabled = models.BooleanField(default=True)
    embedded = models.BooleanField(default=False, editable=False)
    started_command = models.JSONField(
        default=list, blank=True, editable=False,
        help_text="the argument list LawDesk started this server with (the embedded server); its launch line",
    )
    out_of_service_reason = models.CharField(
        max_length=300, blank=True, editable=False,
        help_text="set when the address or backend changes; cleared by the next successful probe",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    # Where evidence goes is the address and the protocol spoken to it; a change to either re-opens the question.
    ROUTING_FIELDS = ("base_url", "backend")

    def save(self, *args, **kwargs) -> None:
        """Save; when a saved server's address or backend changes, clear its API key (a key is given for one
        address: it must be entered again for the new one) and put it out of service until its next successful
        probe. ``self.routing_change`` then holds ``{field: [old, new]}`` for the caller's audit entry.

        Only :func:`pipeline.servers.register_embedded` may move a server without this (``trusted_move``): LawDesk
        itself restarting its embedded server on a new loopback port."""
        self.routing_change: dict[str, list[str]] = {}
        if self.pk is not None and not getattr(self, "trusted_move", False):
            before = ModelServer.objects.filter(pk=self.pk).values(*self.ROUTING_FIELDS).first() or {}
            self.routing_change = {field: [before[field], getattr(self, field)] for field in self.ROUTING_FIELDS
                                   if field in before and before[field] != getattr(self, field)}
            if self.routing_change:
                key_clear(self)
                changed = " and ".join(f"{field} changed from {old} to {new}"
                                       for field, (old, new) in self.routing_change.items())
                self.out_of_service_reason = (
                    f"Out of service: {changed}; its API key was removed. It returns to service after the next "
                    "successful probe (enter the key for the new address first if it needs one)."
                )[:300]
        super().save(*args, **kwargs)

    @property
    def decode_floor(self) -> float:
        """The decode speed (tok/s) below which this server is ``slow``."""
        if self.decode_floor_tok_s is not None:
            return self.decode_floor_tok_s
        return EMBEDDED_DECODE_FLOOR_TOK_S if self.embedded else DEFAULT_DECODE_FLOOR_TOK_S

    @property
    def api_key_env(self) -> str:
        """The environment variable the launch line reads the API key from, e.g. ``LAWDESK_API_KEY_DRAFTER``."""
        return "LAWDESK_API_KEY_" + re.sub(r"[^A-Z0-9]+", "_", self.name.upper()).strip("_")

    @property
    def api_key(self) -> str:
        return key_read(self)

    def sampling_for(self, max_tokens: int) -> Sampling:
        """The sampling settings of a request of ``max_tokens`` to this server: the greedy defaults of
        :class:`Sampling` with this record's ``sampling`` over them."""
        return Sampling(max_tokens=max_tokens, **{k: v for k, v in (self.sampling or {}).items()
                                                   if k in SAMPLING_KEYS})

    def client_config(self) -> ServerConfig:
        # vLLM speaks the OpenAI-compatible protocol; the client needs nothing else from it.
        backend = OPENAI if self.backend == VLLM else self.backend
        return ServerConfig(
            base_url=self.base_url,
            backend=backend,
            model=self.model_name,
            api_key=self.api_key if self.pk else "",
            parallel_slots=self.parallel_slots,
            context_tokens=self.context_tokens,
            name=self.name,
            allowed_hosts=model_hosts_allowlist(),
        )

    def address_refusal(self) -> str:
        """Why evidence cannot be sent to this server's address (the client's own message: the address, the
        allowlist and the setting), or "" when it may. Shown in the admin and on the topology page; the client
        checks again before every request (:mod:`pipeline.llm.hosts`)."""
        try:
            check_server_address(self.base_url, model_hosts_allowlist(), label=self.name)
        except (HostNotAllowed, ValueError) as refused:
            return str(refused)
        return ""

    def clean(self) -> None:
        """Raise ValidationError for sampling settings other than numbers under SAMPLING_KEYS. The topology rules
        are checked by the admin forms, which know the GPUs chosen (:mod:`pipeline.admin_forms`)."""
        if not sampling_valid(self.sampling):
            raise ValidationError({"sampling": "Write an object of numbers with keys among "
                                               f"{', '.join(SAMPLING_KEYS)}, "
                                               'for example {"repeat_penalty": 1.3}.'})

    def delete(self, *args, **kwargs):
        key_clear(self)
        return super().delete(*args, **kwargs)


class RoleAssignment(models.Model):
    """Which server holds a role. A role has one server; a server may hold several roles."""

    role = models.CharField(max_length=20, choices=Role.choices, unique=True)
    server = models.ForeignKey(ModelServer, on_delete=models.CASCADE, related_name="roles")

    class Meta:
        ordering = ["role"]

    def __str__(self) -> str:
        return f"{self.role} -> {self.server}"


class ProbeResult(models.Model):
    """One health-and-speed probe of a server (docs/glossary.md topology_probe). ``decode_tok_s`` and ``prompt_tok_s``
    are the server's own figures (llama.cpp ``timings``; Ollama ``eval_count``/``eval_duration``), or the client's
    measurement where a server reports none. ``skipped``: every slot was busy, so nothing was generated.
    ``busy``: every slot was in use (skipped), or the probe timed out while every other slot was (busy, not down).
    ``slots``: ``{"source": where they were read, "busy": [true, false, ...]}`` per slot as the probe began.
    ``build_info``, ``chat_template``, ``model`` and ``context_tokens`` are what llama.cpp's ``/props`` said;
    ``ceiling_tok_s`` and ``forecast_tok_s`` the bandwidth ceiling and forecast at probe time (before this probe
    taught anything), so measured / ceiling is the efficiency this probe observed."""

    class Status(models.TextChoices):
        UP = "up", "up"
        SLOW = "slow", "slow"
        BUSY = "busy", "busy"
        LOADING = "loading", "loading"
        DOWN = "down", "down"

    server = models.ForeignKey(ModelServer, on_delete=models.CASCADE, related_name="probes")
    at = models.DateTimeField(default=timezone.now, db_index=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    decode_tok_s = models.FloatField(null=True, blank=True)
    prompt_tok_s = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    skipped = models.BooleanField(default=False)
    context_tokens = models.PositiveIntegerField(null=True, blank=True)
    model = models.CharField(max_length=200, blank=True)
    build_info = models.CharField("llama.cpp build", max_length=100, blank=True, help_text="/props build_info")
    chat_template = models.TextField(blank=True, help_text="/props chat_template")
    ceiling_tok_s = models.FloatField("bandwidth ceiling (tok/s)", null=True, blank=True)
    forecast_tok_s = models.FloatField("forecast (tok/s)", null=True, blank=True)
    efficiency_key = models.CharField(max_length=300, blank=True,
                                      help_text="backend | GPU model | dense or moe: probes that teach one factor")
    slots = models.JSONField(default=dict, blank=True,
                             help_text='busy or idle per slot as the probe began: {"source", "busy": [...]}')

    class Meta:
        ordering = ["-at"]
        indexes = [models.Index(fields=["server", "-at"], name="probe_server_latest")]

    def __str__(self) -> str:
        return f"{self.server} {self.status} at {self.at:%Y-%m-%d %H:%M}"


# Jobs and their stage runs live in their own module; Django finds models through this one.
from .digests.models import ExhibitDigest  # noqa: E402,F401
from .job_models import Job, JobKind, ServerSlot, StageRun, StageStatus  # noqa: E402,F401
from .retrieval.models import ChunkEmbedding, EmbeddingIndex  # noqa: E402,F401
