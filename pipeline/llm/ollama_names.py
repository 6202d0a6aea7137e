"""Ollama model names as Ollama itself resolves them, so a model configured as ``qwen3`` is the ``qwen3:latest``
that ``/api/tags`` and ``/api/ps`` list.

Ollama's name grammar (ollama ``types/model/name.go``): ``[host/][namespace/]model[:tag]``; a part left out takes
its default (host ``registry.ollama.ai``, namespace ``library``, tag ``latest``), and two names are the same model
when their parts are equal ignoring case (``Name.EqualFold``). A ``@sha256:...`` digest suffix names the same
model and is ignored here. Every comparison of a configured name with a name Ollama reports goes through
:func:`ollama_same_model`.
"""

DEFAULT_HOST = "registry.ollama.ai"
DEFAULT_NAMESPACE = "library"
DEFAULT_TAG = "latest"


def ollama_name(name: str) -> str:
    """The full, lower-cased form of ``name``: ``host/namespace/model:tag`` (``qwen3`` ->
    ``registry.ollama.ai/library/qwen3:latest``). An empty name stays empty."""
    name = (name or "").strip().lower().partition("@")[0]
    if not name:
        return ""
    path, _, last = name.rpartition("/")
    model, _, tag = last.partition(":")
    parts = path.split("/") if path else []
    host = parts[0] if len(parts) >= 2 else DEFAULT_HOST
    namespace = parts[-1] if parts else DEFAULT_NAMESPACE
    return f"{host}/{namespace}/{model}:{tag or DEFAULT_TAG}"


def ollama_same_model(configured: str, reported: str) -> bool:
    """Whether ``reported`` (a name from ``/api/tags``, ``/api/ps`` or a chat answer) is the model ``configured``
    names, as Ollama resolves both."""
    return bool(configured) and ollama_name(configured) == ollama_name(reported)


def ollama_find(models: list[dict], configured: str) -> dict | None:
    """The entry of an Ollama model list (``/api/tags`` or ``/api/ps`` ``models``, each with ``name`` and
    ``model``) that is the model ``configured`` names, or None."""
    for entry in models:
        if not isinstance(entry, dict):
            continue
        if any(ollama_same_model(configured, str(entry.get(key) or "")) for key in ("name", "model")):
            return entry
    return None
