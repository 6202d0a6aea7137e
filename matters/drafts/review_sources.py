"""The source page beside a finding: which pages a finding used, the words on them to mark, where those words
are on the page image, and the page's text with the same words marked.

Word positions come from the exhibit's display PDF (``storage.display_pdf``, the file the page images are
rendered from) through PyMuPDF's ``Page.search_for``, so boxes line up with the viewer's image. A page whose
text came from OCR has no text layer in that PDF and LawDesk keeps no OCR word boxes, so such a page gets no
boxes; its words are still marked in the text shown under the image.
"""

import re
from dataclasses import dataclass, field
from datetime import date

import pymupdf
from django.utils.safestring import SafeString, mark_safe

from matters import storage
from matters.exhibits.reading import HYPHENATED, hyphen_forms, reading_form, reading_form_with_offsets
from matters.models import Exhibit, Finding, Matter, Page
from matters.templatetags.evidence import reveal_invisible

_QUOTE_MARKS = "\"“”'‘’«»„"
_ALTERATION = re.compile(r"\[[^\]]*\]|\.\s?\.\s?\.|…")
_TRAILING_PAREN = re.compile(r"\((?:emphasis|internal|alterations?|citations?|quotation)[^)]*\)\s*$", re.I)
_REPORTER_CITE = re.compile(r"\b\d{1,4}\s+[A-Z][A-Za-z0-9.' ]{0,25}?\s+\d{1,5}\b")
_SECTION = re.compile(r"§+\s*([0-9][\w.\-]*)")
_NUMBER = re.compile(r"\d[\d.,]*\d|\d")
_FACT_KINDS = {Finding.Kind.DATE, Finding.Kind.AMOUNT, Finding.Kind.QUOTATION}
_CITE_KINDS = {Finding.Kind.BATES_CITE, Finding.Kind.EXHIBIT_CITE}
# A record cite supports the sentence (or citation sentence) before it: look this far back for its facts.
_SUPPORT_WINDOW_CHARS = 400
_MIN_NEEDLE_CHARS = 3


@dataclass(frozen=True)
class SourceRef:
    """One page a finding used: the page (with its exhibit) and the Bates number it was cited by, if any."""

    page: Page
    bates: str = ""


def source_refs(matter: Matter, finding: Finding) -> list[SourceRef]:
    """The pages named in ``finding.sources`` (``{exhibit, label, page, bates}``) that still exist in ``matter``,
    in the order the verifier listed them. Pages of another matter are never returned."""
    wanted = [(s.get("exhibit"), s.get("page"), s.get("bates", "")) for s in finding.sources or []]
    exhibit_ids = {e for e, _, _ in wanted if isinstance(e, int)}
    pages = {(p.exhibit_id, p.number): p for p in Page.objects.filter(
        exhibit_id__in=exhibit_ids, exhibit__matter=matter).select_related("exhibit")}
    return [SourceRef(pages[(e, n)], b or "") for e, n, b in wanted if (e, n) in pages]


def _date_forms(iso: str) -> list[str]:
    try:
        day = date.fromisoformat(iso)
    except ValueError:
        return []
    month, short = day.strftime("%B"), day.strftime("%b")
    d, m, y = day.day, day.month, day.year
    return [f"{month} {d}, {y}", f"{d} {month} {y}", f"{short}. {d}, {y}", f"{short} {d}, {y}", iso,
            f"{m:02d}/{d:02d}/{y}", f"{m}/{d}/{y}", f"{d:02d}/{m:02d}/{y}", f"{d}/{m}/{y}", f"{d:02d}.{m:02d}.{y}"]


def _amount_forms(finding: Finding) -> list[str]:
    numbers = sorted(_NUMBER.findall(finding.text), key=len, reverse=True)
    forms = numbers[:1]
    value = str(finding.detail.get("value", "")).split(":")[-1]
    try:
        amount = float(value)
    except ValueError:
        return forms
    forms += [f"{amount:,.2f}", f"{amount:.2f}", f"{amount:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")]
    if amount == int(amount):
        forms.append(f"{int(amount):,}")
    return forms


def _quotation_pieces(text: str) -> list[str]:
    inner = _TRAILING_PAREN.sub("", text.strip()).strip().strip(_QUOTE_MARKS).strip()
    pieces = [p.strip(" ,;:.!?" + _QUOTE_MARKS) for p in _ALTERATION.split(inner)]
    return [p for p in pieces if len(p.split()) >= 2 or len(pieces) == 1]


def needles_for(finding: Finding, others: list[Finding] = ()) -> list[str]:
    """The strings to look for on a source page of ``finding``, most specific first. A Bates or exhibit cite
    marks the facts (dates, amounts, quotations) of the sentence it supports, found among ``others`` (the
    version's other findings that used the same pages)."""
    kind = finding.kind
    if kind == Finding.Kind.QUOTATION:
        needles = _quotation_pieces(finding.text)
    elif kind == Finding.Kind.DATE:
        needles = [form for iso in finding.detail.get("readings", []) for form in _date_forms(iso)]
        needles += [finding.text]
        if finding.detail.get("nearest"):
            needles += _date_forms(finding.detail["nearest"])
    elif kind == Finding.Kind.AMOUNT:
        needles = _amount_forms(finding)
    elif kind == Finding.Kind.CASE_CITATION:
        needles = _REPORTER_CITE.findall(finding.text)
        name = finding.text.split(" v. ")[0].split(",")[0].strip()
        if " v. " in finding.text and len(name) >= 4:
            needles.append(name)
    elif kind == Finding.Kind.STATUTE_CITATION:
        needles = [finding.text, *(f"§ {s}" for s in _SECTION.findall(finding.text)), *_SECTION.findall(finding.text)]
    elif kind in _CITE_KINDS:
        needles = []
        for other in others:
            if other.kind in _FACT_KINDS and other.start < finding.end and \
                    other.start >= finding.start - _SUPPORT_WINDOW_CHARS:
                needles += needles_for(other)
    else:
        needles = [finding.text]
    seen: dict[str, None] = {}
    for needle in needles:
        needle = " ".join(needle.split())
        if len(needle) >= _MIN_NEEDLE_CHARS:
            seen.setdefault(needle, None)
    return list(seen)


@dataclass(frozen=True)
class Box:
    """A marked area of the page image, in percent of the image's width and height (so it scales with it)."""

    left: float
    top: float
    width: float
    height: float


@dataclass
class SourceView:
    """A source page prepared for the panel: boxes over its image, its text with the same words marked (escaped,
    hidden characters shown), and whether the display PDF had a text layer to search at all."""

    ref: SourceRef
    needles: list[str]
    boxes: list[Box] = field(default_factory=list)
    text_html: SafeString = mark_safe("")
    searchable: bool = False
    marked_in_text: int = 0


def page_boxes(exhibit: Exhibit, number: int, needles: list[str]) -> tuple[list[Box], bool]:
    """Where ``needles`` are on page ``number`` (1-based) of ``exhibit``'s display PDF, as boxes in percent of
    the page as shown (after its /Rotate). Returns (boxes, searchable); searchable is False when the page has no
    text layer (a scan) or the file cannot be opened. Never raises for a bad file."""
    path = storage.display_pdf(exhibit)
    if not path.exists():
        return [], False
    try:
        with pymupdf.open(path) as doc:
            if not 1 <= number <= doc.page_count:
                return [], False
            page = doc[number - 1]
            if not page.get_text("text").strip():
                return [], False
            width, height = page.rect.width or 1, page.rect.height or 1
            boxes: list[Box] = []
            for needle in needles:
                for rect in page.search_for(needle):
                    shown = rect * page.rotation_matrix
                    shown.normalize()
                    boxes.append(Box(round(100 * shown.x0 / width, 3), round(100 * shown.y0 / height, 3),
                                     round(100 * shown.width / width, 3), round(100 * shown.height / height, 3)))
            return boxes, True
    except (RuntimeError, ValueError):  # PyMuPDF's FileDataError is a RuntimeError
        return [], False


def _needle_pattern(needle: str) -> str:
    """A needle in reading form as a pattern over the page's reading form: words separated by any whitespace, a
    hyphenated word in either of its forms (``non-compete`` or ``noncompete``)."""
    words = []
    for word in reading_form(needle).split():
        forms = hyphen_forms(word) if HYPHENATED.search(word) else [word]
        words.append("(?:" + "|".join(re.escape(f) for f in forms) + ")" if len(forms) > 1 else re.escape(word))
    return r"\s+".join(words)


def marked_text(text: str, needles: list[str]) -> tuple[SafeString, int]:
    """``text`` escaped (hidden characters shown as ``U+XXXX``) with every occurrence of ``needles`` wrapped in
    ``<mark>``, matching case-insensitively across line breaks in the page's reading form
    (:mod:`matters.exhibits.reading`: ligatures, curly quotes, dashes, line-end hyphenation, transcript line
    numbers), so what the verifier matched is what is marked; the marks are placed on the stored text. Returns the
    HTML and the number of marks."""
    spans: list[tuple[int, int]] = []
    needles = [n for n in needles if n.strip()]
    if needles:
        form, offsets = reading_form_with_offsets(text)
        pattern = re.compile("|".join(_needle_pattern(n) for n in sorted(needles, key=len, reverse=True)), re.I)
        for match in pattern.finditer(form):
            start, end = offsets[match.start()], offsets[match.end() - 1] + 1
            # Two matches of the reading form can fall in one original character (a ligature): mark it once.
            if match.end() > match.start() and (not spans or start >= spans[-1][1]):
                spans.append((start, end))
    out, position = [], 0
    for start, end in spans:
        out.append(reveal_invisible(text[position:start]))
        out.append(mark_safe('<mark class="source-match">') + reveal_invisible(text[start:end]) + mark_safe("</mark>"))
        position = end
    out.append(reveal_invisible(text[position:]))
    return mark_safe("".join(out)), len(spans)


def source_view(finding: Finding, ref: SourceRef, others: list[Finding]) -> SourceView:
    """Prepare ``ref`` (a source page of ``finding``) for the panel."""
    here = (ref.page.exhibit_id, ref.page.number)
    same_page = [o for o in others if o.pk != finding.pk
                 and any((s.get("exhibit"), s.get("page")) == here for s in o.sources or [])]
    needles = needles_for(finding, same_page)
    boxes, searchable = page_boxes(ref.page.exhibit, ref.page.number, needles)
    html, count = marked_text(ref.page.text, needles)
    return SourceView(ref=ref, needles=needles, boxes=boxes, text_html=html, searchable=searchable,
                      marked_in_text=count)
