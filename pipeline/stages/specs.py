"""Each stage's role, prompt template, output schema and answer budget; each job kind's plan.

Plans (docs/glossary.md stages): a motion runs gate -> plan -> section (one run per section of the plan) -> revise
-> verify -> review -> extract; a summary
summarize -> verify; an extraction extract. A request nobody classified starts with the router, which picks
the plan. Schemas are JSON Schema, sent to the server to constrain its output (llama.cpp ``json_schema``,
Ollama ``format``) and validated on return; array lengths are capped so a small model cannot run on.
"""

from dataclasses import dataclass, field

from django.conf import settings

from ..models import Role


@dataclass(frozen=True)
class StageSpec:
    """``role`` is None for a stage that uses no model (verify). ``max_tokens`` is the answer budget."""

    name: str
    role: str | None
    template: str = ""
    schema: dict | None = None
    max_tokens: int = 512
    packet: bool = True
    # Whether the stage also receives the matter's authorities (the AUTHORITY section): those that write or attack
    # the draft's law.
    authorities: bool = False
    extra: dict = field(default_factory=dict)


# Caps keep a complete answer inside the stage's token budget (about 3 characters a token), so a model that fills
# every field to its limit still closes its JSON.
_STRING_LIST = {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 4}

ROUTER_SCHEMA = {
    "type": "object",
    "properties": {"kind": {"type": "string", "enum": ["motion", "summary", "extraction"]},
                   "reason": {"type": "string", "maxLength": 150}},
    "required": ["kind"],
}
# The gate also names the questions the request raises and a search query for each: later stages retrieve their
# evidence and law for every one of them, not for the request's words alone.
GATE_SCHEMA = {
    "type": "object",
    "properties": {"has_grounds": {"type": "boolean"}, "reasons": _STRING_LIST, "cited_pages": _STRING_LIST,
                   "questions": {"type": "array", "maxItems": 4, "items": {
                       "type": "object",
                       "properties": {"question": {"type": "string", "maxLength": 200},
                                      "query": {"type": "string", "maxLength": 120}},
                       "required": ["question", "query"]}}},
    # Not required: a gate that names no questions still decides; retrieval then uses the request alone.
    "required": ["has_grounds", "reasons", "cited_pages"],
}
REVIEW_SCHEMA = {
    "type": "object",
    "properties": {"attacks": {"type": "array", "maxItems": 4, "items": {
        "type": "object",
        "properties": {"quote": {"type": "string", "maxLength": 200}, "attack": {"type": "string", "maxLength": 300},
                       "severity": {"type": "string", "enum": ["low", "medium", "high"]},
                       "suggested_fix": {"type": "string", "maxLength": 200}},
        "required": ["quote", "attack", "severity", "suggested_fix"]}}},
    "required": ["attacks"],
}
EXTRACT_SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array", "maxItems": 12, "items": {
        "type": "object",
        "properties": {"type": {"type": "string", "enum": ["amount", "date", "party"]},
                       "value": {"type": "string", "maxLength": 100}, "source": {"type": "string", "maxLength": 40}},
        "required": ["type", "value", "source"]}}},
    "required": ["items"],
}

# The sections a court filing has (docs/jobs.md, "A motion, section by section"), in the order the plan may name
# them. Argument points may repeat. The caption, the signature block and the certificate of service are written by
# LawDesk from the matter record, never by a model (pipeline.stages.motion).
SECTION_KINDS = ["caption", "introduction", "statement_of_facts", "legal_standard", "argument", "conclusion",
                 "signature_block", "certificate_of_service"]
# A plan of at most 10 sections, each with 2 questions and 2 queries, closes its JSON within PLAN_MAX_TOKENS (about
# 10 x 700 characters at 3 characters a token).
PLAN_MAX_TOKENS = 2560
PLAN_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 150},
        "sections": {"type": "array", "maxItems": 10, "items": {
            "type": "object",
            "properties": {"kind": {"type": "string", "enum": SECTION_KINDS},
                           "heading": {"type": "string", "maxLength": 120},
                           "questions": {"type": "array", "maxItems": 2,
                                         "items": {"type": "string", "maxLength": 200}},
                           "queries": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 100}}},
            "required": ["kind", "heading", "questions", "queries"]}}},
    # Not minItems: a plan with no sections is refused by the plan stage with a reason an attorney can read.
    "required": ["title", "sections"],
}

STAGES: dict[str, StageSpec] = {
    "router": StageSpec("router", Role.ROUTER, "router.v1.txt", ROUTER_SCHEMA, 128, packet=False),
    "gate": StageSpec("gate", Role.GATE, "gate.v2.txt", GATE_SCHEMA, settings.LAWDESK_GATE_MAX_TOKENS),
    "plan": StageSpec("plan", Role.REASONER, "plan.v1.txt", PLAN_SCHEMA, PLAN_MAX_TOKENS, packet=False),
    # One section's answer budget: a section, not the whole document.
    "section": StageSpec("section", Role.DRAFTER, "section.v2.txt", None, settings.LAWDESK_DRAFT_MAX_TOKENS,
                         authorities=True),
    "draft": StageSpec("draft", Role.DRAFTER, "draft.v2.txt", None, settings.LAWDESK_DRAFT_MAX_TOKENS,
                       authorities=True),
    "revise": StageSpec("revise", Role.REASONER, "revise.v3.txt", None, settings.LAWDESK_DRAFT_MAX_TOKENS,
                        authorities=True),
    "verify": StageSpec("verify", None, packet=False),
    "review": StageSpec("review", Role.REVIEWER, "review.v2.txt", REVIEW_SCHEMA,
                        settings.LAWDESK_REVIEW_MAX_TOKENS, authorities=True),
    "extract": StageSpec("extract", Role.EXTRACTOR, "extract.v1.txt", EXTRACT_SCHEMA,
                         settings.LAWDESK_EXTRACT_MAX_TOKENS),
    "summarize": StageSpec("summarize", Role.SUMMARIZER, "summarize.v1.txt", None,
                           settings.LAWDESK_DRAFT_MAX_TOKENS),
}

PLANS: dict[str, list[str]] = {
    "motion": ["gate", "plan", "section", "revise", "verify", "review", "extract"],
    "summary": ["summarize", "verify"],
    "extraction": ["extract"],
}


def plan_for(kind: str) -> list[str]:
    """The stages of a job of ``kind``; a job without a kind starts with the router."""
    return PLANS[kind] if kind else ["router"]
