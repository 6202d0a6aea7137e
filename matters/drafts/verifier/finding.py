"""What the verifier says about one claim, and the statuses and kinds it uses (``Finding.Status`` and
``Finding.Kind``, named in docs/glossary.md)."""

from dataclasses import dataclass, field
from typing import Any

from matters.models import Finding

from .authorities import AuthorityDoc

Status, Kind = Finding.Status, Finding.Kind
BLOCKING = set(Finding.BLOCKING_STATUSES)


@dataclass
class FindingData:
    """One claim as judged. ``sources`` are page ids until :meth:`Verification.run` turns them into
    ``{"exhibit", "label", "page", "bates"}`` dicts."""

    kind: str
    status: str
    start: int
    end: int
    text: str
    message: str
    sources: list = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def blocking(self) -> bool:
        return self.status in BLOCKING

    def as_json(self) -> dict[str, Any]:
        """The glossary's verify_draft keys."""
        return {"kind": self.kind, "status": self.status, "blocking": self.blocking, "start": self.start,
                "end": self.end, "text": self.text, "message": self.message, "sources": self.sources}


@dataclass
class Support:
    """What a sentence cites: evidence pages (from its record cites) and authorities (None for a cited authority
    that is not in the matter, with the citation's text)."""

    record_cites: list[str] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)
    authorities: list[tuple[AuthorityDoc | None, str]] = field(default_factory=list)

