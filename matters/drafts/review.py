"""Reads for the draft review page: the draft's text cut into highlighted segments, the margin in reading order,
the counts at the top, the version history and the diff between two versions.

Findings and attacks carry character offsets into their version's text and may overlap (a quotation that holds
a date, an attack quoting a whole sentence with three cites in it). The text is therefore cut at every start
and end, and each segment lists every finding and attack that covers it; the page never nests or re-parses
markup. Segment texts are plain strings: the template escapes them.

The page reads its findings and attacks as tuples of the few columns it shows (:class:`FindingRow`,
:class:`AttackRow`), not as model instances: at 300 findings, building the instances and decoding their JSON
fields was a sixth of a request's time.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from fast_diff_match_patch import diff as _diff

from matters.models import Draft, DraftVersion, Finding, ReviewAttack

# Which status colours a segment covered by several findings: the one an attorney must act on first.
STATUS_RANK = {
    Finding.Status.UNGROUNDED: 0, Finding.Status.UNREADABLE: 1, Finding.Status.UNVERIFIED_AUTHORITY: 2,
    Finding.Status.AMBIGUOUS: 3, Finding.Status.NEEDS_RECORD_CITE: 4, Finding.Status.NOT_COMPUTED: 5,
    Finding.Status.PIN_UNCHECKED: 6, Finding.Status.WAIVED: 7, Finding.Status.CONFIRMED: 8, Finding.Status.GROUNDED: 9,
}
SEVERITY_RANK = {ReviewAttack.Severity.HIGH: 0, ReviewAttack.Severity.MEDIUM: 1, ReviewAttack.Severity.LOW: 2}
ATTACK_KIND = "attack"  # the filter's pseudo-kind for reviewer attacks


class FindingRow(NamedTuple):
    """The columns of a finding that the review page's text and margin show; ``start``/``end`` are character
    offsets into the version's text."""

    pk: int
    kind: str
    status: str
    start: int
    end: int
    text: str


class AttackRow(NamedTuple):
    """The columns of a reviewer attack that the review page's text and margin show; ``start`` is None for an
    outdated attack."""

    pk: int
    severity: str
    start: int | None
    end: int | None
    attack: str

    @property
    def outdated(self) -> bool:
        return self.start is None


@dataclass
class Segment:
    """A stretch of the draft's text covered by the same findings and attacks. ``status`` is the most urgent
    status among them ('' when none), ``severity`` the highest attack severity ('' when none); ``anchors`` are
    the margin keys (``f<id>``, ``a<id>``) of the items that start here, so the page can scroll to them."""

    text: str
    findings: list[int] = field(default_factory=list)
    attacks: list[int] = field(default_factory=list)
    status: str = ""
    severity: str = ""
    anchors: list[str] = field(default_factory=list)

    @property
    def keys(self) -> str:
        """Space-separated margin keys of everything covering this segment (for the page's data attribute)."""
        return " ".join([f"f{i}" for i in self.findings] + [f"a{i}" for i in self.attacks])


@dataclass
class MarginItem:
    """One finding or attack in the margin. ``key`` is ``f<id>`` or ``a<id>``; ``start`` is None for an outdated
    attack (listed last)."""

    key: str
    kind: str
    obj: FindingRow | AttackRow
    start: int | None

    @property
    def is_attack(self) -> bool:
        return self.kind == ATTACK_KIND


def _most_urgent(covering: list[tuple[int, int, str]], rank: dict[str, int]) -> str:
    """The status (or severity) of ``covering`` (pk, end, value) ranked first; the first in pk order among
    equals; '' for none."""
    if not covering:
        return ""
    if len(covering) == 1:
        return covering[0][2]
    return min((span[2] for span in covering), key=lambda value: rank.get(value, 9))


def segments(text: str, findings: list[FindingRow], attacks: list[AttackRow]) -> list[Segment]:
    """Cut ``text`` at every start and end of ``findings`` and anchored ``attacks`` (offsets into ``text``,
    clamped to it); return the segments in order. Their texts joined give ``text`` back exactly. An empty span
    (start == end) still gets its anchor, on the segment that starts there. Any objects with the rows'
    attributes will do (``pk``, ``start``, ``end``, and ``status`` or ``severity``), model instances too."""
    length = len(text)
    # (start, end, tag, pk, status or severity) of every span, clamped to the text.
    spans: list[tuple[int, int, str, int, str]] = []
    for finding in findings:
        spans.append((min(finding.start, length), min(max(finding.end, finding.start), length), "f", finding.pk,
                      finding.status))
    for attack in attacks:
        if attack.start is not None:
            spans.append((min(attack.start, length), min(max(attack.end or attack.start, attack.start), length),
                          "a", attack.pk, attack.severity))
    cuts = sorted({0, length, *(s[0] for s in spans), *(s[1] for s in spans)})
    starts_at: dict[int, list[str]] = {}
    for start, _end, tag, pk, _value in sorted(spans, key=lambda s: (s[0], s[2] != "f", s[3])):
        starts_at.setdefault(start, []).append(f"{tag}{pk}")
    bounds = list(zip(cuts, cuts[1:]))
    if starts_at.get(length) and (not bounds or bounds[-1][1] == length):
        bounds.append((length, length))  # an empty span at the very end still needs its anchor
    # Sweep from left to right keeping the findings and the attacks that cover the current cut, each as
    # (pk, end, status or severity) so that sorting them sorts by pk: linear in segments + spans for the usual
    # few overlaps, instead of testing every span against every segment.
    pending = sorted(spans, key=lambda s: s[0])
    found: list[tuple[int, int, str]] = []
    attacked: list[tuple[int, int, str]] = []
    cursor = 0
    out: list[Segment] = []
    for left, right in bounds:
        while cursor < len(pending) and pending[cursor][0] <= left:
            _start, end, tag, pk, value = pending[cursor]
            (found if tag == "f" else attacked).append((pk, end, value))
            cursor += 1
        # Most segments are covered by nothing or by one span: no sorting or ranking for those.
        if found:
            found = sorted(span for span in found if span[1] > left)
        if attacked:
            attacked = sorted(span for span in attacked if span[1] > left)
        out.append(Segment(
            text=text[left:right],
            findings=[span[0] for span in found],
            attacks=[span[0] for span in attacked],
            status=_most_urgent(found, STATUS_RANK),
            severity=_most_urgent(attacked, SEVERITY_RANK),
            anchors=starts_at.get(left, []),
        ))
    return out


def margin(findings: list[FindingRow], attacks: list[AttackRow]) -> list[MarginItem]:
    """Findings and attacks in reading order (by where their span starts; a finding before an attack at the same
    place); outdated attacks last."""
    items = [MarginItem(f"f{f.pk}", f.kind, f, f.start) for f in findings]
    items += [MarginItem(f"a{a.pk}", ATTACK_KIND, a, a.start) for a in attacks]
    return sorted(items, key=lambda i: (i.start is None, i.start or 0, i.is_attack, i.obj.pk))


@dataclass(frozen=True)
class ReviewCounts:
    """The numbers at the top of the page, over the whole version whatever the filter shows."""

    blocking_open: int
    ambiguous: int
    needs_record_cite: int
    not_computed: int  # deadlines the draft states that no saved deadline of the matter checks
    pin_unchecked: int  # citations of authorities the matter holds whose pin cites the exhibit cannot check
    resolved: int
    total: int
    attacks_high: int
    attacks_medium: int
    attacks_low: int
    attacks_outdated: int


def _counts(statuses: Counter, attacks: list[tuple[str, int | None]]) -> ReviewCounts:
    severities = Counter(severity for severity, _ in attacks)
    return ReviewCounts(
        blocking_open=sum(statuses[s] for s in Finding.BLOCKING_STATUSES),
        ambiguous=statuses[Finding.Status.AMBIGUOUS],
        needs_record_cite=statuses[Finding.Status.NEEDS_RECORD_CITE],
        not_computed=statuses[Finding.Status.NOT_COMPUTED],
        pin_unchecked=statuses[Finding.Status.PIN_UNCHECKED],
        resolved=statuses[Finding.Status.WAIVED] + statuses[Finding.Status.CONFIRMED],
        total=sum(statuses.values()),
        attacks_high=severities[ReviewAttack.Severity.HIGH],
        attacks_medium=severities[ReviewAttack.Severity.MEDIUM],
        attacks_low=severities[ReviewAttack.Severity.LOW],
        attacks_outdated=sum(1 for _, start in attacks if start is None),
    )


def review_counts(version: DraftVersion) -> ReviewCounts:
    """The counts of ``version``, read from the database (two queries)."""
    # order_by(): the models' default orderings go through the version to the draft, two joins for nothing.
    statuses = Counter(version.findings.order_by().values_list("status", flat=True))
    return _counts(statuses, list(version.attacks.order_by().values_list("severity", "start")))


def review_counts_of(findings: list[FindingRow], attacks: list[AttackRow]) -> ReviewCounts:
    """The counts of a version from rows already read: all of its findings and attacks (the rows of an
    unfiltered page), or the counts are of those rows only."""
    return _counts(Counter(f.status for f in findings), [(a.severity, a.start) for a in attacks])


@dataclass(frozen=True)
class ReviewFilter:
    """What the page shows: finding kinds (and ``attack`` for reviewer attacks) and finding statuses. An empty
    set means all."""

    kinds: frozenset[str] = frozenset()
    statuses: frozenset[str] = frozenset()

    @classmethod
    def from_query(cls, query) -> "ReviewFilter":
        """Read ``kind`` and ``status`` (repeatable) from a QueryDict; unknown values are ignored."""
        kinds = {k for k in query.getlist("kind") if k in Finding.Kind.values or k == ATTACK_KIND}
        statuses = {s for s in query.getlist("status") if s in Finding.Status.values}
        return cls(frozenset(kinds), frozenset(statuses))

    @property
    def active(self) -> bool:
        return bool(self.kinds or self.statuses)

    def findings(self, version: DraftVersion) -> list[FindingRow]:
        """The findings of ``version`` that the filter shows, in the order of their spans."""
        # An explicit order: the model's default one goes through the version to the draft, two joins per read.
        rows = version.findings.order_by("start", "end", "id")
        if self.kinds:
            rows = rows.filter(kind__in=self.kinds)
        if self.statuses:
            rows = rows.filter(status__in=self.statuses)
        return list(map(FindingRow._make, rows.values_list("id", "kind", "status", "start", "end", "text")))

    def attacks(self, version: DraftVersion) -> list[AttackRow]:
        """Attacks show when no kind is chosen or ``attack`` is; a status filter hides them (they have none)."""
        if (self.kinds and ATTACK_KIND not in self.kinds) or self.statuses:
            return []
        rows = version.attacks.order_by("start", "id").values_list("id", "severity", "start", "end", "attack")
        return list(map(AttackRow._make, rows))


@dataclass(frozen=True)
class VersionRow:
    """One line of the version history: who made the version (a person, or a model on a server) and its state."""

    version: DraftVersion
    blocking_open: int
    findings: int

    @property
    def made_by(self) -> str:
        version = self.version
        if version.author_kind == DraftVersion.AuthorKind.MODEL:
            where = f" on {version.server_name}" if version.server_name else ""
            return f"{version.model_name or 'a model'}{where}"
        return version.author.get_username() if version.author else "a person (account removed)"


def version_history(draft: Draft) -> list[VersionRow]:
    """Every version of ``draft``, newest first, with its finding counts: two queries however many versions."""
    statuses: dict[int, Counter] = {}
    for version_id, status in Finding.objects.filter(version__draft=draft).order_by().values_list("version_id",
                                                                                                   "status"):
        statuses.setdefault(version_id, Counter())[status] += 1
    rows = []
    for version in draft.versions.select_related("author", "approved_by").order_by("-number"):
        counted = statuses.get(version.pk, Counter())
        rows.append(VersionRow(version, sum(counted[s] for s in Finding.BLOCKING_STATUSES), counted.total()))
    return rows


@dataclass(frozen=True)
class DiffPiece:
    """A stretch of a diff: ``op`` is ``=`` (in both), ``-`` (only in the older version) or ``+`` (only in the
    newer one)."""

    op: str
    text: str


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def version_diff(older: str, newer: str) -> list[DiffPiece]:
    """The word diff of two texts: each word, run of spaces and punctuation mark is one unit (encoded as one
    character for diff-match-patch, as its line mode does with lines), so an edit reads as the words that
    changed, never as letters shared by chance between two different words."""
    codes: dict[str, str] = {}
    tokens: list[str] = []

    def encode(text: str) -> str:
        out = []
        for token in _TOKEN.findall(text):
            if token not in codes:
                codes[token] = chr(0x10000 + len(tokens))  # supplementary planes: no surrogates, room for 1M
                tokens.append(token)
            out.append(codes[token])
        return "".join(out)

    raw = [(op, "".join(tokens[ord(c) - 0x10000] for c in encoded))
           for op, encoded in _diff(encode(older), encode(newer), cleanup="No", counts_only=False)]
    # A space or a comma left equal between two changes splits one edit in two: fold it into the change.
    pieces: list[DiffPiece] = []
    removed, added = [], []
    for index, (op, text) in enumerate(raw):
        between_changes = 0 < index < len(raw) - 1 and raw[index - 1][0] != "=" and raw[index + 1][0] != "="
        if op == "=" and not (between_changes and len(text) <= 3 and not re.search(r"\w", text)):
            if removed:
                pieces.append(DiffPiece("-", "".join(removed)))
            if added:
                pieces.append(DiffPiece("+", "".join(added)))
            removed, added = [], []
            pieces.append(DiffPiece("=", text))
            continue
        if op in ("=", "-"):
            removed.append(text)
        if op in ("=", "+"):
            added.append(text)
    if removed:
        pieces.append(DiffPiece("-", "".join(removed)))
    if added:
        pieces.append(DiffPiece("+", "".join(added)))
    return pieces
