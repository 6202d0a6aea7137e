"""Is each server up, and how fast? A probe checks health, then runs one real short streamed generation and
reads the server's own decode and prompt-processing speeds.

- llama.cpp: ``GET /health`` (503 "Loading model" means loading), ``GET /props`` (context size, model, the
  build, ``build_info``, and the chat template, stored with the probe for the build check),
  ``GET /slots`` (a probe runs only when a slot is free: it is skipped, never queued, when all are busy), then
  the generation; speeds from ``timings.predicted_per_second`` and ``timings.prompt_per_second``.
- Ollama: ``GET /api/tags`` (is the model there?), ``GET /api/ps`` (is it resident?), then the generation;
  speeds from ``eval_count / eval_duration`` and ``prompt_eval_count / prompt_eval_duration`` (ns).
- vLLM and other OpenAI-compatible servers: ``GET /v1/models``, then the generation; they report no timings,
  so the speed is the client's own measurement. A reachable ``/v1/models`` alone is never "up".
- A server holding only the embedder (or reranker) role generates nothing: after the same checks the probe
  embeds one short text (``/v1/embeddings``, Ollama ``/api/embed``); it is ``up`` when vectors come back, with
  the prompt-processing speed that request measured.
Status (docs/glossary.md): ``up``, ``slow`` (decode below the server's floor), ``loading``, ``down`` (with the error).
"""

from dataclasses import dataclass

import httpx
from django.conf import settings

from matters.audit.services import audit_record
from matters.leases import enqueue_unless_waiting
from pipeline.embedded import server_build_info
from pipeline.llm import (
    HostNotAllowed,
    Message,
    ModelClient,
    ModelServerError,
    Sampling,
    ServerLoading,
    ServerUnavailable,
)
from pipeline.llm.client import LLAMA_CPP, OLLAMA, ServerConfig, http_client
from pipeline.llm.slots import slots_for
from pipeline.models import RETRIEVAL_ROLES, ModelServer, ProbeResult
from pipeline.tasks import probe_servers as probe_servers_task

from .builds import build_number, unchecked_message
from .foresight import build_warnings
from .selectors import server_foresight
from .snapshot import server_view

PROBE_PROMPT = "Count from one to twenty in words, separated by commas."
PROBE_TOKENS = 32


@dataclass
class ProbeOutcome:
    """One probe's result. ``decode_tok_s``/``prompt_tok_s`` in tokens per second; ``skipped`` when every slot
    was busy (nothing generated); ``context_tokens``, ``model``, ``build_info`` and ``chat_template`` as the
    server reported them (llama.cpp ``/props``)."""

    server: str
    status: str
    decode_tok_s: float | None = None
    prompt_tok_s: float | None = None
    error: str = ""
    skipped: bool = False
    context_tokens: int | None = None
    model: str = ""
    build_info: str = ""
    chat_template: str = ""


class _Stop(Exception):
    """Internal: the probe has its outcome before generating."""

    def __init__(self, outcome: ProbeOutcome) -> None:
        self.outcome = outcome


def probe(config: ServerConfig, *, floor_tok_s: float, connect_timeout_s: float = 5.0,
          read_timeout_s: float = 60.0, embeddings: bool = False) -> ProbeOutcome:
    """Probe the server of ``config`` and return its outcome; never raises for a server's failure. An address
    outside LAWDESK_MODEL_HOSTS is ``down`` with the reason, and nothing (no API key either) is sent to it.
    ``embeddings``: the server holds only retrieval roles (embedder, reranker) and generates no text; the probe
    embeds a short text instead and measures prompt processing, the only speed an embedding has."""
    try:
        http = http_client(config, timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s))
    except HostNotAllowed as refused:
        return ProbeOutcome(server=config.label, status="down", error=str(refused))
    outcome = ProbeOutcome(server=config.label, status="down", context_tokens=config.context_tokens)
    try:
        with http:
            if config.backend == LLAMA_CPP:
                _check_llama_cpp(http, config, outcome)
            elif config.backend == OLLAMA:
                _check_ollama(http, config, outcome)
            else:
                _get(http, "/v1/models", config)
    except _Stop as stop:
        return stop.outcome
    except httpx.TransportError as error:
        outcome.error = f"Could not reach {config.label}: {error}."
        return outcome
    gate = slots_for(config.base_url, config.parallel_slots)
    if gate.busy >= gate.slots:
        return _skipped(outcome, f"all {gate.slots} slot(s) are in use by this process's jobs")
    if embeddings:
        return _embed(config, outcome, connect_timeout_s, read_timeout_s)
    return _generate(config, outcome, floor_tok_s, connect_timeout_s, read_timeout_s)


def _ask(config: ServerConfig, outcome: ProbeOutcome, connect_timeout_s: float, read_timeout_s: float, call):
    """``call(client)`` on a client that does not wait out a loading model (the probe reports ``loading`` at
    once); its answer, or None with ``outcome`` set ``loading`` or ``down`` and the error."""
    client = ModelClient(config, connect_timeout_s=connect_timeout_s, read_timeout_s=read_timeout_s,
                         loading_wait_s=0)
    try:
        return call(client)
    except ServerLoading as error:
        outcome.status, outcome.error = "loading", str(error)
    except (ServerUnavailable, ModelServerError) as error:
        outcome.status, outcome.error = "down", str(error)
    finally:
        client.close()
    return None


def _embed(config: ServerConfig, outcome: ProbeOutcome, connect_timeout_s: float,
           read_timeout_s: float) -> ProbeOutcome:
    embedded = _ask(config, outcome, connect_timeout_s, read_timeout_s, lambda client: client.embed([PROBE_PROMPT]))
    if embedded is None:
        return outcome
    outcome.status = "up"
    outcome.model = embedded.model or outcome.model
    if embedded.prompt_tokens and embedded.duration_ms:
        outcome.prompt_tok_s = round(embedded.prompt_tokens / (embedded.duration_ms / 1000), 1)
    return outcome


def _get(http: httpx.Client, path: str, config: ServerConfig) -> httpx.Response:
    response = http.get(path)
    if response.status_code == 503:
        raise _Stop(ProbeOutcome(server=config.label, status="loading",
                                 error=f"{path} answered 503: {_message(response)}"))
    if response.status_code != 200:
        raise _Stop(ProbeOutcome(server=config.label, status="down",
                                 error=f"{path} answered HTTP {response.status_code}: {_message(response)}"))
    return response


def _check_llama_cpp(http: httpx.Client, config: ServerConfig, outcome: ProbeOutcome) -> None:
    _get(http, "/health", config)
    props = _get(http, "/props", config).json()
    settings = props.get("default_generation_settings") or {}
    outcome.context_tokens = int(settings.get("n_ctx") or props.get("n_ctx") or 0) or outcome.context_tokens
    outcome.model = str(props.get("model_alias") or props.get("model_path") or "")
    outcome.build_info = str(props.get("build_info") or "")[:100]
    outcome.chat_template = str(props.get("chat_template") or "")
    slots = http.get("/slots")
    # llama-server started with --no-slots answers 501; then nobody can tell, and the probe goes ahead.
    try:
        states = slots.json() if slots.status_code == 200 else None
    except ValueError:
        states = None
    if isinstance(states, list) and states:
        busy = sum(1 for slot in states if slot.get("is_processing") or slot.get("state") == 1)
        if busy >= len(states):
            raise _Stop(_skipped(outcome, f"all {len(states)} slot(s) are busy"))


def _check_ollama(http: httpx.Client, config: ServerConfig, outcome: ProbeOutcome) -> None:
    tags = _get(http, "/api/tags", config).json().get("models") or []
    names = {m.get("name") for m in tags} | {m.get("model") for m in tags}
    if config.model and config.model not in names and f"{config.model}:latest" not in names:
        outcome.error = f"{config.model} is not on this Ollama server (ollama pull {config.model})."
        raise _Stop(outcome)
    loaded = _get(http, "/api/ps", config).json().get("models") or []
    outcome.model = config.model
    if config.model and not any(m.get("name") == config.model or m.get("model") == config.model for m in loaded):
        # The generation below loads it; the outcome then reflects a cold start, so say so.
        outcome.error = f"{config.model} was not resident (not in /api/ps) before the probe."


def _skipped(outcome: ProbeOutcome, why: str) -> ProbeOutcome:
    outcome.status, outcome.skipped = "up", True
    outcome.error = f"skipped: {why}; speed not measured"
    return outcome


def _generate(config: ServerConfig, outcome: ProbeOutcome, floor_tok_s: float, connect_timeout_s: float,
              read_timeout_s: float) -> ProbeOutcome:
    # llama.cpp: always generate the full budget and evaluate the whole prompt (no prompt cache), so both
    # speeds are measured on real work, the same each time.
    extra = {"ignore_eos": True, "cache_prompt": False} if config.backend == LLAMA_CPP else None
    generation = _ask(config, outcome, connect_timeout_s, read_timeout_s, lambda client: client.generate(
        [Message("user", PROBE_PROMPT)], sampling=Sampling(max_tokens=PROBE_TOKENS), extra_body=extra))
    if generation is None:
        return outcome
    outcome.decode_tok_s = generation.decode_tok_s or generation.measured_decode_tok_s
    outcome.prompt_tok_s = generation.prompt_tok_s
    outcome.model = generation.model or outcome.model
    if outcome.decode_tok_s is not None and outcome.decode_tok_s < floor_tok_s:
        outcome.status = "slow"
        outcome.error = (f"decode {outcome.decode_tok_s:.1f} tok/s is below this server's floor of "
                         f"{floor_tok_s:g} tok/s")
    else:
        outcome.status = "up"
    return outcome


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message", error))
    return str(error or body)[:200]


def server_probe(*, server):
    """Probe one ModelServer and record the outcome as a ProbeResult, with what ``/props`` said and the forecast
    and bandwidth ceiling of that moment (:mod:`pipeline.topology.foresight`); return the ProbeResult. A server out
    of service (its address or backend changed) returns to service when the probe is ``up`` or ``slow``."""
    roles = set(server.roles.values_list("role", flat=True))
    outcome = probe(server.client_config(), floor_tok_s=server.decode_floor,
                    embeddings=bool(roles) and roles <= RETRIEVAL_ROLES)
    if server.out_of_service_reason and outcome.status in (ProbeResult.Status.UP, ProbeResult.Status.SLOW):
        # A real generation came back from the new address: the server may take stages again.
        ModelServer.objects.filter(pk=server.pk).update(out_of_service_reason="")
        audit_record(action="topology.in_service", obj=server, detail={
            "server": server.name, "changes": {"out_of_service": [server.out_of_service_reason, ""]},
            "probe": outcome.status})
        server.out_of_service_reason = ""
    if server.embedded and build_number(outcome.build_info) is None:
        # The embedded llama-server says b0-unknown; the package LawDesk installed it from knows the build.
        outcome.build_info = server_build_info() or outcome.build_info
    foresight = server_foresight(server)
    return ProbeResult.objects.create(
        server=server, status=outcome.status, decode_tok_s=outcome.decode_tok_s, prompt_tok_s=outcome.prompt_tok_s,
        error=outcome.error, skipped=outcome.skipped, context_tokens=outcome.context_tokens,
        model=outcome.model[:200], build_info=outcome.build_info, chat_template=outcome.chat_template,
        ceiling_tok_s=foresight.forecast.ceiling_tok_s if foresight.forecast else None,
        forecast_tok_s=foresight.forecast.forecast_tok_s if foresight.forecast else None,
        efficiency_key=foresight.efficiency_key,
    )


def servers_probe(*, server_ids=None) -> list:
    """Probe every enabled server (or those of ``server_ids``, enabled or not), one after another; return the
    ProbeResults in name order."""
    servers = ModelServer.objects.filter(enabled=True) if server_ids is None else \
        ModelServer.objects.filter(pk__in=server_ids)
    return [server_probe(server=server) for server in servers.order_by("name")]


def probe_schedule(*, interval_s: int | None = None) -> bool:
    """Queue the periodic probe to run ``interval_s`` seconds from now (default: LAWDESK_PROBE_INTERVAL_S),
    unless a run is already waiting in the queue; return True if one was queued. The task queues its own next
    run, so one call starts the cycle."""
    if interval_s is None:
        interval_s = settings.LAWDESK_PROBE_INTERVAL_S
    return enqueue_unless_waiting(probe_servers_task, after_s=interval_s, interval_s=interval_s)


def probe_line(result) -> dict:
    """The topology_probe JSON line of a ProbeResult (docs/glossary.md keys)."""
    return {"server": result.server.name, "status": result.status, "decode_tok_s": result.decode_tok_s,
            "prompt_tok_s": result.prompt_tok_s, "error": result.error or None,
            "forecast_tok_s": _rounded(result.forecast_tok_s), "ceiling_tok_s": _rounded(result.ceiling_tok_s),
            "build": result.build_info or None, "warnings": probe_warnings(result)}


def probe_summary(result) -> str:
    """One line for the operator: status, measured speed against the forecast, the error, build warnings."""
    text = f"{result.server.name}: {result.status}"
    if result.decode_tok_s is not None:
        text += f", {result.decode_tok_s:.1f} tok/s"
    if result.forecast_tok_s is not None:
        text += f" (forecast {result.forecast_tok_s:.1f}, ceiling {result.ceiling_tok_s:.1f} tok/s)"
    if result.error:
        text += f" ({result.error})"
    for warning in probe_warnings(result):
        text += f" Warning: {warning}"
    return text


def probe_warnings(result) -> list[str]:
    """Warnings about a probed server: known problems of the llama.cpp build it reported, or that its build could
    not be checked (a llama-server that answered without build_info, or with a build without a number)."""
    if result.server.backend == LLAMA_CPP and not result.build_info and result.status in ("up", "slow"):
        return [unchecked_message("")]
    return build_warnings(server_view(result.server, [], build_info=""), result.build_info, result.model)


def _rounded(value: float | None) -> float | None:
    return round(value, 1) if value is not None else None
