"""The JSON a digest is written in, and the checks of its content that a schema cannot make.

The schema goes to the server to constrain the answer (as the stages' schemas do, :mod:`pipeline.stages.specs`)
and is validated on return, with one repair request on a mismatch (:meth:`pipeline.llm.client.ModelClient.generate`).
Caps keep a complete answer inside :data:`DIGEST_MAX_TOKENS` (about 3 characters a token), so a model that fills
every field to its limit still closes its JSON.
"""

from collections import Counter

from pipeline.stages.degenerate import ECHO_SHARE_FAIL, echo_share

# The answer budget of a digest request, in tokens: 8 facts of 240 characters and the short fields come to about
# 2,900 characters, under 1,000 tokens.
DIGEST_MAX_TOKENS = 1024
MAX_FACTS = 8


def digest_schema(pages_read: int) -> dict:
    """The digest's JSON Schema, its page cites bounded to the ``pages_read`` pages the model was given."""
    page = {"type": "integer", "minimum": 1, "maximum": max(1, pages_read)}
    return {
        "type": "object",
        "properties": {
            "document_type": {"type": "string", "maxLength": 80},
            "date": {"type": "string", "maxLength": 40},
            "author": {"type": "string", "maxLength": 120},
            "parties": {"type": "array", "maxItems": 6, "items": {"type": "string", "maxLength": 120}},
            "summary": {"type": "string", "maxLength": 400},
            "key_facts": {"type": "array", "maxItems": MAX_FACTS, "items": {
                "type": "object",
                "properties": {"fact": {"type": "string", "maxLength": 240},
                               "pages": {"type": "array", "maxItems": 3, "items": page}},
                "required": ["fact", "pages"]}},
        },
        "required": ["document_type", "date", "author", "parties", "summary", "key_facts"],
    }


# The schema as the docs show it (for an exhibit of any length).
DIGEST_SCHEMA = digest_schema(9999)

_PLACEHOLDERS = {"", "n/a", "na", "none", "null", "unknown", "tbd", "string", "example", "...", "-", "?", "x"}


def _plain(value) -> str:
    return " ".join(str(value or "").split()).lower()


def digest_problem(digest: dict, *, instructions: str) -> str:
    """Why a digest that matches the schema still cannot be used ('' when it can): it says nothing (no summary
    and no fact), its facts are one fact repeated or placeholders, or its summary is the prompt coming back.
    ``instructions``: the prompt's own words, without the exhibit's pages (which a digest may rightly quote)."""
    facts = [_plain(item.get("fact")) for item in digest.get("key_facts") or []]
    summary = _plain(digest.get("summary"))
    if summary in _PLACEHOLDERS and not [f for f in facts if f not in _PLACEHOLDERS]:
        return "The digest is degenerate: it has no summary and no key fact."
    if facts and all(f in _PLACEHOLDERS for f in facts):
        return f"The digest is degenerate: every one of its {len(facts)} key facts is a placeholder."
    if len(facts) >= 3:
        fact, count = Counter(facts).most_common(1)[0]
        if count / len(facts) >= 0.5:
            return (f"The digest is degenerate: it repeats one key fact {count} times out of {len(facts)} "
                    f"(“{fact[:60]}”).")
    share = echo_share(digest.get("summary") or "", instructions)
    if share >= ECHO_SHARE_FAIL:
        return f"The digest is degenerate: {share:.0%} of its summary repeats the instructions."
    return ""
