"""Prompt templates (files in ``pipeline/prompts/``) rendered into chat messages."""

from pathlib import Path

from django.template import Context, Engine

from ..llm.types import Message

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_engine = Engine(dirs=[str(PROMPTS_DIR)], autoescape=False)
_SPLIT = "---user---"


def render(template: str, **context) -> list[Message]:
    """The system and user messages of ``template`` (``<stage>.v<N>.txt``) filled with ``context``.
    Raises TemplateDoesNotExist for an unknown file."""
    text = _engine.get_template(template).render(Context(context, autoescape=False))
    system, _, user = text.partition(_SPLIT)
    return [Message("system", system.strip()), Message("user", user.strip())]
