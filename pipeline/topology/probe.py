"""Is each server up, and how fast? A probe checks health, then runs one real short streamed generation and
reads the server's own decode and prompt-processing speeds.

- llama.cpp: ``GET /health`` (503 "Loading model" means loading), ``GET /props`` (context size, model, the
  build, ``build_info``, and the chat template, stored with the probe for the build check),
  ``GET /slots`` (each slot's ``is_processing``), then the generation; speeds from
  ``timings.predicted_per_second`` and ``timings.prompt_per_second``.
- Ollama: ``GET /api/tags`` (is the model there?), ``GET /api/ps`` (is it resident?), names compared as Ollama
  resolves them (:mod:`pipeline.llm.ollama_names`: ``qwen3`` is ``qwen3:latest``), then the generation;
  speeds from ``eval_count / eval_duration`` and ``prompt_eval_count / prompt_eval_duration`` (ns). Ollama shows
  no request in flight, so its slots (``OLLAMA_NUM_PARALLEL``, the record's parallel slots) are taken by
  LawDesk's own requests in flight on it.
- vLLM and other OpenAI-compatible servers: ``GET /v1/models``, then the generation; they report no timings,
  so the speed is the client's own measurement. A reachable ``/v1/models`` alone is never "up".
- A server holding only the embedder (or reranker) role generates nothing: after the same checks the probe
  embeds one short text (``/v1/embeddings``, Ollama ``/api/embed``); it is ``up`` when vectors come back, with
  the prompt-processing speed that request measured.
Busy is not down. The slots (llama.cpp ``/slots``; elsewhere LawDesk's own requests in flight, from the stage runs
of every worker and this process's slot gate) are recorded with the probe. When every slot is busy the probe is
skipped, never queued (status ``busy``). When its generation times out while every other slot was busy (before it
started or when it gave up), the server was busy serving, not dead: ``busy`` again, never ``down``.
Status (docs/glossary.md): ``up``, ``slow`` (decode below the server's floor), ``busy`` (every slot in use: speed
not measured), ``loading``, ``down`` (with the error).
"""

from collections.abc import Callable
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
    StreamTimeout,
)
from pipeline.llm.client import LLAMA_CPP, OLLAMA, ServerConfig, http_client
from pipeline.llm.ollama_names import ollama_find
from pipeline.llm.slots import slots_for
from pipeline.models import RETRIEVAL_ROLES, ModelServer, ProbeResult, StageRun, StageStatus
from pipeline.tasks import probe_servers as probe_servers_task

from .builds import build_number, unchecked_message
from .foresight import build_warnings
from .selectors import server_foresight
from .snapshot import server_view

PROBE_PROMPT = "Count from one to twenty in words, separated by commas."
PROBE_TOKENS = 32


SLOTS_FROM_SERVER = "llama.cpp /slots"
SLOTS_FROM_LAWDESK = "LawDesk's requests in flight"


@dataclass
class ProbeOutcome:
    """One probe's result. ``decode_tok_s``/``prompt_tok_s`` in tokens per second; ``skipped`` when every slot
    was busy (nothing generated); ``context_tokens``, ``model``, ``build_info`` and ``chat_template`` as the
    server reported them (llama.cpp ``/props``). ``slots``: busy (True) or idle per slot when the probe began,
    read from ``slots_source``; ``timed_out``: the probe's own request timed out."""

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
    slots: list[bool] | None = None
    slots_source: str = ""
    timed_out: bool = False


class _Stop(Exception):
    """Internal: the probe has its outcome before generating."""

    def __init__(self, outcome: ProbeOutcome) -> None:
        self.outcome = outcome


def probe(config: ServerConfig, *, floor_tok_s: float, connect_timeout_s: float = 5.0,
          read_timeout_s: float = 60.0, embeddings: bool = False,
          in_flight: int | Callable[[], int] = 0) -> ProbeOutcome:
    """Probe the server of ``config`` and return its outcome; never raises for a server's failure. An address
    outside LAWDESK_MODEL_HOSTS is ``down`` with the reason, and nothing (no API key either) is sent to it.
    ``embeddings``: the server holds only retrieval roles (embedder, reranker) and generates no text; the probe
    embeds a short text instead and measures prompt processing, the only speed an embedding has.
    ``in_flight``: LawDesk's requests in flight on the server (every worker's), or a function counting them when
    called, for a server whose slots cannot be read (busy and idle in the module docstring)."""
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

    def lawdesk_in_flight() -> int:
        return max(in_flight() if callable(in_flight) else in_flight, gate.busy)

    if outcome.slots is None:
        outcome.slots = _lawdesk_slots(config.parallel_slots, lawdesk_in_flight())
        outcome.slots_source = SLOTS_FROM_LAWDESK
    if all(outcome.slots):
        return _skipped(outcome, f"all {len(outcome.slots)} slot(s) are busy ({outcome.slots_source})")
    if embeddings:
        _embed(config, outcome, connect_timeout_s, read_timeout_s)
    else:
        _generate(config, outcome, floor_tok_s, connect_timeout_s, read_timeout_s)
    if outcome.timed_out:
        _busy_not_down(config, outcome, lawdesk_in_flight, connect_timeout_s, read_timeout_s)
    return outcome


def _lawdesk_slots(parallel_slots: int, in_flight: int) -> list[bool]:
    slots = max(1, parallel_slots)
    return [index < in_flight for index in range(slots)]


def _busy_not_down(config: ServerConfig, outcome: ProbeOutcome, in_flight: Callable[[], int],
                   connect_timeout_s: float, read_timeout_s: float) -> None:
    """After the probe's own request timed out: ``busy`` when the other requests filled every slot but the
    probe's own, when it began or when it gave up (then counted again: llama.cpp's slots, which hold the probe's
    abandoned request too, hence one less; or LawDesk's requests in flight); otherwise it stays ``down``."""
    total = len(outcome.slots)
    others = sum(outcome.slots)
    if outcome.slots_source == SLOTS_FROM_SERVER:
        after = _slots_now(config, connect_timeout_s, read_timeout_s)
        others = max(others, sum(after) - 1) if after else others
    else:
        others = max(others, in_flight())
    if total < 2 or others < total - 1:
        return
    outcome.status = ProbeResult.Status.BUSY
    outcome.error = (f"busy, not down: the probe timed out after {read_timeout_s:g} s while the other {others} of "
                     f"{total} slot(s) were busy ({outcome.slots_source}); speed not measured")


def _slots_now(config: ServerConfig, connect_timeout_s: float, read_timeout_s: float) -> list[bool] | None:
    try:
        with http_client(config, timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s)) as http:
            return _read_slots(http)
    except (httpx.TransportError, HostNotAllowed):
        return None


def _read_slots(http: httpx.Client) -> list[bool] | None:
    """Busy (``is_processing``; ``state`` 1 in older builds) per slot of a llama-server, or None when it cannot
    tell (started with ``--no-slots`` it answers 501)."""
    response = http.get("/slots")
    try:
        states = response.json() if response.status_code == 200 else None
    except ValueError:
        return None
    if not isinstance(states, list) or not states:
        return None
    return [bool(isinstance(slot, dict) and (slot.get("is_processing") or slot.get("state") == 1))
            for slot in states]


def _ask(config: ServerConfig, outcome: ProbeOutcome, connect_timeout_s: float, read_timeout_s: float, call):
    """``call(client)`` on a client that does not wait out a loading model (the probe reports ``loading`` at
    once); its answer, or None with ``outcome`` set ``loading`` or ``down`` and the error."""
    client = ModelClient(config, connect_timeout_s=connect_timeout_s, read_timeout_s=read_timeout_s,
                         loading_wait_s=0)
    try:
        return call(client)
    except ServerLoading as error:
        outcome.status, outcome.error = "loading", str(error)
    except StreamTimeout as error:
        outcome.status, outcome.error, outcome.timed_out = "down", str(error), True
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
    # llama-server started with --no-slots cannot tell; LawDesk's own requests in flight stand in.
    if (states := _read_slots(http)) is not None:
        outcome.slots, outcome.slots_source = states, SLOTS_FROM_SERVER


def _check_ollama(http: httpx.Client, config: ServerConfig, outcome: ProbeOutcome) -> None:
    tags = _get(http, "/api/tags", config).json().get("models") or []
    if config.model and ollama_find(tags, config.model) is None:
        outcome.error = f"{config.model} is not on this Ollama server (ollama pull {config.model})."
        raise _Stop(outcome)
    loaded = _get(http, "/api/ps", config).json().get("models") or []
    resident = ollama_find(loaded, config.model) if config.model else None
    outcome.model = str(resident.get("name") or resident.get("model")) if resident else config.model
    if config.model and resident is None:
        # The generation below loads it; the outcome then reflects a cold start, so say so.
        outcome.error = f"{config.model} was not resident (not in /api/ps) before the probe."


def _skipped(outcome: ProbeOutcome, why: str) -> ProbeOutcome:
    outcome.status, outcome.skipped = ProbeResult.Status.BUSY, True
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
    running = StageRun.objects.filter(server=server, status=StageStatus.RUNNING)
    outcome = probe(server.client_config(), floor_tok_s=server.decode_floor,
                    embeddings=bool(roles) and roles <= RETRIEVAL_ROLES, in_flight=running.count)
    if outcome.status == ProbeResult.Status.BUSY:
        outcome.error += f"; {last_measured(server)}"
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
        slots={"source": outcome.slots_source, "busy": outcome.slots} if outcome.slots is not None else {},
        ceiling_tok_s=foresight.forecast.ceiling_tok_s if foresight.forecast else None,
        forecast_tok_s=foresight.forecast.forecast_tok_s if foresight.forecast else None,
        efficiency_key=foresight.efficiency_key,
    )


def last_measured(server) -> str:
    """When ``server``'s speed was last measured, in words: "last measured 45.0 tok/s at 2026-12-03 14:02 UTC"
    (with "slow" and the floor when under it), or "never measured"."""
    measured = server.probes.filter(skipped=False, decode_tok_s__isnull=False).order_by("-at", "-pk").first()
    if measured is None:
        return "never measured"
    text = f"last measured {measured.decode_tok_s:.1f} tok/s at {measured.at:%Y-%m-%d %H:%M} UTC"
    if measured.decode_tok_s < server.decode_floor:
        text += f" (slow: under its floor of {server.decode_floor:g} tok/s)"
    return text


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
