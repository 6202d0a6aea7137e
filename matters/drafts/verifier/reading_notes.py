"""What a finding must add about how its source pages were read (docs/reading.md):

- a claim grounded only on pages whose text may be wrong (OCR mean confidence under
  ``LAWDESK_OCR_LOW_CONFIDENCE``, or marks read as no text) says so; it may still be grounded;
- a date, amount or quotation found nowhere in the evidence, but present in a Word exhibit's deleted text
  (a tracked change), a comment or hidden text, says where: such text never grounds a claim.

Called once per verification, after every claim is judged; two queries whatever the number of findings.
"""

from django.conf import settings

from matters.models import Exhibit, Page

from .dates import find_dates
from .money import find_amounts
from .quotes import find_quotations, prepare
from .text import match_words

_READ = {"grounded", "needs_record_cite", "ambiguous"}
_FACT_KINDS = {"date", "amount", "quotation"}
_WORD_PARTS = (("deleted_text", "deleted text (a tracked change)"), ("comment_text", "a comment"),
               ("hidden_text", "hidden text"))


def add_reading_notes(findings: list, matter, evidence) -> None:
    """Add to ``findings`` (FindingData, ``sources`` still page ids) what the reading of their pages requires:
    low OCR confidence on every source page of a supported claim; the Word change holding an unsupported one.
    ``evidence`` is the verification's :class:`matters.drafts.verifier.evidence.Evidence`."""
    _ocr_notes(findings)
    _word_notes(findings, matter, evidence)


def _ocr_notes(findings: list) -> None:
    page_ids = {p for f in findings if f.status in _READ for p in f.sources if isinstance(p, int)}
    if not page_ids:
        return
    threshold = settings.LAWDESK_OCR_LOW_CONFIDENCE
    weak: dict[int, float] = dict(Page.objects.filter(pk__in=page_ids, ocr_confidence__lt=threshold).values_list(
        "id", "ocr_confidence"))
    for finding in findings:
        sources = [p for p in finding.sources if isinstance(p, int)]
        if finding.status not in _READ or not sources or not all(p in weak for p in sources):
            continue
        lowest = min(weak[p] for p in sources)
        finding.message += (f" Every page it rests on was read by OCR with low confidence ({lowest:.0f}%, under "
                            f"{threshold:.0f}%): the text may be wrong; compare with the page image.")
        finding.detail["low_ocr_confidence"] = lowest


def _word_notes(findings: list, matter, evidence) -> None:
    unsupported = [f for f in findings if f.kind in _FACT_KINDS and f.status == "ungrounded" and not f.sources]
    if not unsupported:
        return
    documents = [(label, changes) for label, changes in Exhibit.objects.filter(
        pk__in=evidence.exhibit_ids, kind="docx").exclude(word_changes={}).values_list("label", "word_changes")]
    if not documents:
        return
    for finding in unsupported:
        for label, changes in documents:
            where = _where(finding, changes, matter)
            if where:
                finding.message += (f" It appears only in {where} of Exhibit {label}, which never grounds a claim: "
                                    "the document's text is read with its changes accepted.")
                finding.detail["only_in_word_change"] = {"exhibit": label, "where": where}
                break


def _where(finding, changes: dict, matter) -> str:
    for key, name in _WORD_PARTS:
        for item in changes.get(key, []):
            text = item["text"] if isinstance(item, dict) else item
            if _holds(finding, text, matter):
                return name
    return ""


def _holds(finding, text: str, matter) -> bool:
    if finding.kind == "date":
        readings = set(finding.detail.get("readings", []))
        return any(readings & set(d.readings) for d in find_dates(text, matter.date_order))
    if finding.kind == "amount":
        return any(a.key == finding.detail.get("value") for a in find_amounts(text, matter.number_format))
    quotes = find_quotations(finding.text)
    if not quotes:
        return False
    search = prepare(quotes[0].inner)
    return bool(search.segments) and search.find(match_words(text)) is not None
