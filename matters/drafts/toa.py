"""A draft's table of authorities, built from its citations as the verifier reads and grounds them.

Nothing here reads a citation: :class:`matters.drafts.verifier.check.Verification` reads every case citation (full,
short, ``Id.``, ``supra``; eyecite and LawDesk's own readings), statute, regulation and rule, resolves the short
forms to their full citation and matches each to the matter's authorities. This module takes those readings
(``Verification.cited``) and

- folds every citation into the authority it names: a case's short forms, ``Id.`` and ``supra`` into the full
  citation they refer to (one entry per authority exhibit, so parallel cites of one opinion are one entry); a
  statute, regulation or rule per section, its subdivisions and its short forms (``§ 1028A(c)``, ``Id. §
  1028A(c)``) folded in;
- puts each entry under one of :data:`HEADINGS`, the headings Fed. R. App. P. 28(a)(3) asks of a brief's table
  ("cases (alphabetically arranged), statutes, and other authorities") as courts' rules and briefs split them;
- refuses the whole table, listing them, when an entry is grounded by no stored authority (a citation the
  attorney confirmed from Westlaw, a case cited only inside a ``(quoting ...)`` parenthetical) or when the
  verifier blocks one of its citations (a pin outside the opinion, an unreadable rule) and no attorney waived
  it: a table of authorities never lists what is not in the matter.

Ordering (:func:`case_sort_key`, :func:`section_sort_key`): cases alphabetically by name, word by word (a space
sorts before a letter, as Word's table of authorities sorts), case and punctuation ignored, and a procedural phrase
opening the name (``In re``, ``Ex parte``, ``Matter of``, ``Application of``, ``Petition of``: procedural phrases
in The Bluebook rule 10.2.1(b)) passed over, so *In re Grand Jury Subpoena* sorts under G; "United States" and
"State" are names and sort as written. Rule 28(a)(3) requires the alphabetical order and says nothing of those
phrases; this is the practice LawDesk follows. Statutes, regulations and rules by code (the United States Code and
the Code of Federal Regulations first, then the others by name), then title and section numerically, a section's
number read as its parts (``1028A`` after ``1028``, ``78j(b)`` after ``78c``, ``2-619`` after ``2-101``).
Constitutional provisions (read as The Bluebook rule 11 cites them: ``U.S. Const. art. III, § 2``, ``U.S. Const.
amend. XIV, § 1``, ``Cal. Const. art. I, § 7``), one entry per section or clause: the United States Constitution
first, then the states' by name, the articles in order before the amendments, by the value of their numerals.

Pages are those of the brief as printed (:mod:`matters.drafts.toa_pages`); an entry cited on
``LAWDESK_TOA_PASSIM_PAGES`` pages or more (5 by default, as Word's "Use passim" does) is listed *passim*.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from eyecite.models import FullJournalCitation

from matters.drafts.markdown import Run
from matters.drafts.verifier.authorities import AuthorityDoc
from matters.drafts.verifier.check import Verification
from matters.drafts.verifier.citations import CaseMention
from matters.drafts.verifier.finding import BLOCKING, Kind, Status
from matters.drafts.verifier.statutes import StatuteMention, UnreadableCite
from matters.models import Matter

CASES, CONSTITUTION, STATUTES, RULES, REGULATIONS, OTHER = (
    "Cases", "Constitutional Provisions", "Statutes", "Rules", "Regulations", "Other Authorities")
HEADINGS = (CASES, CONSTITUTION, STATUTES, RULES, REGULATIONS, OTHER)

_PROCEDURAL = re.compile(r"^(?:in\s+re|ex\s+parte|in\s+the\s+matter\s+of|matter\s+of|application\s+of|"
                         r"petition\s+of)\s+", re.IGNORECASE)
_SIGNAL = re.compile(r"^(?:(?:see|also|cf\.?|accord|but|compare|contra|e\.g\.,?|and|with)\s+)+", re.IGNORECASE)
_PHRASE_BEFORE = re.compile(r"\b(?:In\s+re|Ex\s+parte|In\s+the\s+Matter\s+of|Matter\s+of|Application\s+of|"
                            r"Petition\s+of)\s+$")


@dataclass
class Entry:
    """One authority of the table: the heading it stands under, its name as listed (``italic``: the leading part
    printed in italics, a case's name), the authority exhibit that grounds it, and the offsets into the draft of
    every citation of it (full and short forms), in order. ``pages``: the printed pages those citations are on,
    once :mod:`matters.drafts.toa_pages` has laid the brief out."""

    heading: str
    name: str
    italic: str
    exhibit_id: int
    exhibit_label: str
    exhibit_title: str
    sort_key: tuple
    positions: list[int] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)

    def pages_text(self, passim_pages: int | None = None) -> str:
        """``1, 4, 7`` or ``passim`` (cited on at least ``passim_pages`` pages; the setting by default; 0 never)."""
        threshold = settings.LAWDESK_TOA_PASSIM_PAGES if passim_pages is None else passim_pages
        if threshold and len(self.pages) >= threshold:
            return "passim"
        return ", ".join(str(page) for page in self.pages)

    @property
    def pages_shown(self) -> str:
        """:meth:`pages_text` with the setting's threshold, for a template."""
        return self.pages_text()

    @property
    def italic_end(self) -> str:
        """The slice of ``name`` after its italic part (``"12:"``), for a template's ``slice`` filter."""
        return f"{len(self.italic)}:"

    @property
    def runs(self) -> list[Run]:
        """The name as the DOCX prints it: a case's name in italics (The Bluebook, rule B2 for court documents)."""
        rest = self.name[len(self.italic):]
        return [Run(self.italic, italic=True), Run(rest)] if self.italic else [Run(self.name)]


@dataclass
class Refused:
    """A citation the table cannot list: ``name`` as the draft cites it, ``why`` (the verifier's finding), and
    the offsets of its citations in the draft."""

    name: str
    why: str
    positions: list[int] = field(default_factory=list)


@dataclass
class TableOfAuthorities:
    """A draft's table: its ``entries`` in the order they are listed, and what keeps it from being built
    (``refused``, empty when it can be)."""

    entries: list[Entry]
    refused: list[Refused]

    @property
    def ok(self) -> bool:
        return not self.refused

    def sections(self) -> list[tuple[str, list[Entry]]]:
        """``(heading, entries)`` for each heading that has entries, in the order of :data:`HEADINGS`."""
        return [(heading, [e for e in self.entries if e.heading == heading]) for heading in HEADINGS
                if any(e.heading == heading for e in self.entries)]

    @property
    def positions(self) -> list[int]:
        """Every offset of the draft an entry is cited at, in order."""
        return sorted({p for entry in self.entries for p in entry.positions})

    def refusal(self) -> str:
        """The refusal as one message for an attorney."""
        listed = "; ".join(f"{r.name} ({r.why})" for r in self.refused)
        return (f"The table of authorities cannot be built: {len(self.refused)} cited "
                f"{'authority is' if len(self.refused) == 1 else 'authorities are'} not grounded by an authority "
                f"of the matter: {listed}. Add each to the matter as an authority (or correct the citation), then "
                "export again.")


def _words(text: str) -> str:
    return " ".join(re.findall(r"[0-9a-z]+", text.casefold()))


def case_sort_key(name: str) -> tuple[str, str]:
    """The order of a case in the table (see the module docstring): its name without a leading procedural phrase,
    folded to lower-case words; the whole name breaks ties."""
    return _words(_PROCEDURAL.sub("", name.strip())), _words(name)


def _number_parts(value: str) -> tuple:
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.lower())
                 for part in re.findall(r"\d+|[A-Za-z]+", value))


def section_sort_key(statute: StatuteMention) -> tuple:
    """The order of a section in the table: federal codes first, then by code name, title and section number. A
    constitutional provision: the United States Constitution first, then the states' by name; within one, the
    articles in order, then the amendments, each by its Roman numeral's value, then section and clause."""
    if statute.form == "constitution":
        kind, _, numeral = statute.section.partition(" ")
        rank = {"pmbl.": 0, "art.": 1, "amend.": 2}.get(kind, 3)
        return (0 if statute.code_key == "usconst" else 1, statute.code_key, rank, _roman_value(numeral),
                _number_parts(statute.clause))
    federal = 0 if statute.code_key in ("usc", "usca", "cfr") else 1
    return federal, statute.code_key, _number_parts(statute.title or statute.chapter), _number_parts(statute.section)


def _roman_value(numeral: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
    total = 0
    for i, letter in enumerate(numeral):
        value = values.get(letter, 0)
        total += -value if i + 1 < len(numeral) and values.get(numeral[i + 1], 0) > value else value
    return total


def _heading_of(statute: StatuteMention) -> str:
    key = statute.code_key
    if "const" in key:
        return CONSTITUTION
    if statute.form == "rule" or key.endswith("lr") or key in ("supctr",):
        return RULES
    if key == "cfr" or "regs" in key or "admin" in key:
        return REGULATIONS
    return STATUTES


def _case_name(mention: CaseMention, draft: str) -> tuple[str, str]:
    """A full citation as the table lists it, without signal and pin cite, and the case name within it. eyecite's
    case name leaves a procedural phrase before it out (``In re``): it is taken back from ``draft``, the text the
    mention's offsets are into."""
    phrase = _PHRASE_BEFORE.search(draft, max(0, mention.start - 24), mention.start)
    text = (phrase.group(0) if phrase else "") + _SIGNAL.sub("", mention.text.strip())
    text = " ".join(text.split())
    if mention.pin_cite:
        pin = " ".join(mention.pin_cite.split())
        text = re.sub(rf",\s*(?:at\s+)?{re.escape(pin)}", "", text, count=1)
    italic = ""
    match = re.match(r"(.+? v\. .+?),\s+(?=\d)", text)
    if match:
        italic = match.group(1)
    elif mention.name and text.startswith(mention.name):
        italic = mention.name
    return text, italic


def _section_name(statute: StatuteMention) -> str:
    return statute.cite


def toa_build(*, matter: Matter, text: str, waived: Iterable[tuple[int, int]] = ()) -> TableOfAuthorities:
    """The table of authorities of ``text`` (a draft of ``matter``), pages not yet set.

    Runs the verifier over the whole text (no paragraph kept from before, so every citation is judged now) and
    takes its readings and groundings. ``waived``: ``(start, end)`` spans of citation findings an attorney
    waived on the version (a pin cite the verifier could not accept, accepted by the attorney): those no longer
    refuse the table, though an entry still needs an authority of the matter that grounds it."""
    verification = Verification(matter, text)
    verification.run()
    waived = set(waived)
    verdicts = {(f.start, f.end): f for f in verification.findings
                if f.kind in (Kind.CASE_CITATION, Kind.STATUTE_CITATION)}
    cases = verification.cases
    entries: dict[tuple, Entry] = {}
    refused: dict[str, Refused] = {}

    def refuse(name: str, why: str, position: int) -> None:
        refused.setdefault(name, Refused(name, why)).positions.append(position)

    def blocked(mention) -> str:
        finding = verdicts.get((mention.start, mention.end))
        if finding is None or finding.status not in BLOCKING or (mention.start, mention.end) in waived:
            return ""
        return finding.message

    def full_of(mention: CaseMention) -> CaseMention:
        if mention.form in ("full", "unknown_reporter") or mention.antecedent is None:
            return mention
        return cases[mention.antecedent]

    for mention, doc in sorted(verification.cited, key=lambda item: item[0].start):
        if isinstance(mention, UnreadableCite):
            refuse(mention.text, verdicts[(mention.start, mention.end)].message if (mention.start, mention.end)
                   in verdicts else "LawDesk cannot tell what it cites", mention.start)
            continue
        if isinstance(mention, StatuteMention):
            name = _section_name(mention)
            problem = blocked(mention)
            if doc is None or problem:
                refuse(name, problem or "no authority of the matter holds it", mention.start)
                continue
            # A constitution's entries are its sections and clauses (U.S. Const. art. I, § 8, cl. 3), as tables list
            # them.
            key = ("section", mention.code_key, mention.title, mention.chapter, mention.section, mention.clause)
            _add(entries, key, doc, mention.start, lambda: (
                _heading_of(mention), name, "", section_sort_key(mention)))
            continue
        full = full_of(mention)
        name, italic = _case_name(full, text)
        problem = blocked(mention)
        if doc is None or problem:
            finding = verdicts.get((mention.start, mention.end))
            why = problem or (finding.message if finding is not None else "no authority of the matter is it")
            if finding is not None and finding.status == Status.GROUNDED:
                why = "not itself in the matter: " + why
            refuse(name if full is not mention or mention.form == "full" else mention.text, why, mention.start)
            continue
        source = full.source
        journal = (full.form == "full" and source is not None and source < len(verification.eyecite_citations)
                   and isinstance(verification.eyecite_citations[source], FullJournalCitation))
        heading = OTHER if journal else CASES
        _add(entries, ("authority", doc.exhibit_id), doc, mention.start, lambda: (
            heading, name, italic, case_sort_key(italic or name) + (_words(name),)))
    ordered = sorted(entries.values(), key=lambda e: (HEADINGS.index(e.heading), e.sort_key))
    return TableOfAuthorities(ordered, list(refused.values()))


def _add(entries: dict[tuple, Entry], key: tuple, doc: AuthorityDoc, position: int, describe) -> None:
    """Fold a citation at ``position`` into the entry ``key``, made from ``describe()`` (heading, name, italic part,
    sort key) at its first citation: a case's full citation comes before its short forms."""
    entry = entries.get(key)
    if entry is None:
        heading, name, italic, sort_key = describe()
        entry = entries[key] = Entry(heading, name, italic, doc.exhibit_id, doc.label, doc.title, sort_key)
    entry.positions.append(position)
