"""Withholding, real redactions, the privilege log, and redactions that only look real (incoming and outgoing)."""

import csv
import io
import re
import subprocess
import time
import zipfile

import numpy
import pymupdf
import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from matters.models import BatesPage, ImproperRedaction, PrivilegeLogEntry, Production, Redaction
from matters.privilege.log import log_csv_bytes, log_pdf_bytes
from matters.privilege.redaction_search import compile_pattern, page_words, redactions_from_search
from matters.privilege.services import improper_open, improper_redaction_confirm, production_blockers, redaction_add
from matters.productions.delivery import production_files
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from tests.factories import PageFactory

pytestmark = pytest.mark.django_db

ATTORNEY_CLIENT = {"basis": "attorney_client", "description": "Letter from outside counsel to client re appeal"}


def produce(matter, exhibits, user, **options):
    production = production_create(matter=matter, exhibits=exhibits, prefix=options.pop("prefix", "SMITH"),
                                   created_by=user, enqueue=False, **options)
    return production_run(production_id=production.pk)


def words_under(pdf_path, page_index: int, rect) -> list[str]:
    """Words of the original page whose centre lies in ``rect`` (displayed coordinates)."""
    with pymupdf.open(pdf_path) as doc:
        page = doc[page_index]
        found = []
        for x0, y0, x1, y1, text, *_ in page.get_text("words"):
            centre = pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2) * page.rotation_matrix
            if centre in pymupdf.Rect(rect):
                found.append(text)
        return found


def box_is_black(page: pymupdf.Page, rect) -> bool:
    """Rendered at 72 dpi, at least 85% of the box's pixels are near black (the reason code is white)."""
    clip = pymupdf.Rect(rect) + (1, 1, -1, -1)
    pixmap = page.get_pixmap(dpi=72, clip=clip, colorspace=pymupdf.csGRAY, alpha=False)  # clip: displayed page
    samples = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8)
    return bool((samples < 60).mean() >= 0.85)


def assert_redactions_hold(production) -> int:
    """Open every produced page that had redaction boxes (in the volume's natives) and check that no word found
    under a box in the original survives in its text (a word also found outside every box on that page may),
    and that each box renders black. Returns the number of boxes checked."""
    from matters import storage

    checked = 0
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        for document in production.documents.select_related("exhibit"):
            exhibit = document.exhibit
            if not Redaction.objects.filter(page__exhibit=exhibit).exists():
                continue
            native = pymupdf.open("pdf", volume.read(f"{production.volume}/NATIVES/"
                                                     f"{production.bates(document.first_number)}.pdf"))
            original = storage.display_pdf(exhibit)
            for page in exhibit.pages.prefetch_related("redactions"):
                rects = [r.rect for r in page.redactions.all()]
                if not rects:
                    continue
                under = {w for rect in rects for w in words_under(original, page.number - 1, rect)}
                with pymupdf.open(original) as doc:
                    source_page = doc[page.number - 1]
                    outside = {w[4] for w in source_page.get_text("words")
                               if not any((pymupdf.Point((w[0] + w[2]) / 2, (w[1] + w[3]) / 2)
                                           * source_page.rotation_matrix) in pymupdf.Rect(r) for r in rects)}
                produced = native[page.number - 1]
                survivors = (under - outside) & {w[4] for w in produced.get_text("words")}
                assert not survivors, f"{exhibit.display_label} page {page.number} still has {survivors}"
                for rect in rects:
                    assert box_is_black(produced, rect), (page.number, rect)
                    checked += 1
    return checked


# --- improper redactions on ingest --------------------------------------------------------------------------

def test_improper_redaction_found_on_bad_redaction_and_not_on_a_clean_page(matter, corpus, ingest):
    bad = ingest(matter, corpus("odd/bad-redaction.pdf"))
    clean = ingest(matter, corpus("odd/no-redaction.pdf"))
    boxes = list(ImproperRedaction.objects.filter(page__exhibit=bad))
    assert len(boxes) == 3
    hidden = " | ".join(box.hidden_text for box in boxes)
    assert "did not disclose all relevant medical history." in hidden and "“No”." in hidden
    assert not ImproperRedaction.objects.filter(page__exhibit=clean).exists()
    entry = matter.audit_entries.get(action="page.improper_redaction")
    assert entry.detail == {"exhibit": bad.pk, "page": 1, "boxes": 3}
    assert bad.status == "ready"  # found, said, and the text is still searchable evidence


def test_white_text_on_a_black_band_is_readable_and_not_flagged(tmp_path):
    from matters.exhibits.ingest.redaction_check import find_hidden_text

    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(72, 72, 400, 100), color=None, fill=(0, 0, 0))
    page.insert_text((80, 92), "TABLE HEADER", color=(1, 1, 1))
    page.insert_text((80, 200), "Secret settlement figure 1,250,000")
    assert find_hidden_text(page) == []
    # a black-filled square annotation over text hides it as well as a drawn box
    annot = page.add_rect_annot(pymupdf.Rect(70, 185, 330, 205))
    annot.set_colors(stroke=(0, 0, 0), fill=(0, 0, 0))
    annot.update()
    found = find_hidden_text(page)
    assert len(found) == 1 and "settlement" in found[0].text


def test_a_short_line_under_a_box_is_found_on_a_page_with_almost_no_text(matter, tmp_path, ingest):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "SSN 123-45-6789")
    page.draw_rect(pymupdf.Rect(95, 88, 170, 104), color=None, fill=(0, 0, 0))
    path = tmp_path / "short.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    assert [box.hidden_text for box in ImproperRedaction.objects.filter(page__exhibit=exhibit)] == ["123-45-6789"]


def test_production_is_refused_until_the_box_is_redacted_for_real_or_confirmed(matter, attorney, make_user, corpus,
                                                                                ingest):
    assistant = make_user("bob", "assistant")
    matter.members.add(assistant)
    bad = ingest(matter, corpus("odd/bad-redaction.pdf"))
    with pytest.raises(ValidationError, match="improper redaction — text under a box is readable"):
        production_create(matter=matter, exhibits=[bad], prefix="SMITH", created_by=attorney, enqueue=False)
    assert not Production.objects.exists()  # no range reserved for a refused production
    page = bad.pages.get(number=1)
    with pytest.raises(PermissionDenied):
        improper_redaction_confirm(page=page, reason="not privileged", user=assistant)
    boxes = list(page.improper_redactions.all())
    for box in boxes[:2]:  # a real redaction over two boxes: the third still blocks
        redaction_add(page=page, rect=(box.x0 - 1, box.y0 - 1, box.x1 + 1, box.y1 + 1), reason="PHI", user=assistant)
    assert [b.pk for b in improper_open(page)] == [boxes[2].pk]
    assert len(production_blockers([bad], set())) == 1
    assert production_blockers([bad], {bad.pk}) == []  # withholding the document also answers it
    with pytest.raises(ValidationError, match="reason"):
        improper_redaction_confirm(page=page, reason="  ", user=attorney)
    assert improper_redaction_confirm(page=page, reason="Counsel's answer is public in the complaint",
                                      user=attorney) == 3
    assert improper_open(page) == []
    assert matter.audit_entries.filter(action="page.improper_redaction_confirm").count() == 1
    production = produce(matter, [bad], attorney)
    assert production.status == Production.Status.DONE, production.reason
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        text = pdf[-1].get_text()
    assert "medical history" not in text  # the two real redactions removed the text under their boxes
    assert "“No”." in text  # the confirmed box was produced as it is


# --- real redactions ------------------------------------------------------------------------------------------

def test_redaction_of_words_in_a_born_digital_filing_removes_them_for_real(matter, attorney, corpus, ingest):
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    original = corpus("court/ca7_3.pdf").read_bytes()
    added = redactions_from_search(exhibit=exhibit, query="TOFAUTE", reason="PII", user=attorney)
    added += redactions_from_search(exhibit=exhibit, query=r"No\. 3:05-cv-\d+-RLM-MGG", reason="AC", user=attorney,
                                    regex=True)
    assert len(added) >= 2 and all(r.found_by for r in added)
    page = exhibit.pages.get(number=1)
    drawn = redaction_add(page=page, rect=(72, 60, 300, 80), reason="WP", user=attorney)
    display = corpus("court/ca7_3.pdf")
    secret = set()
    for redaction in Redaction.objects.filter(page__exhibit=exhibit):
        secret.update(words_under(display, 0, redaction.rect))
    assert {"TOFAUTE,", "3:05-cv-00595-RLM-MGG"} <= secret
    production = produce(matter, [exhibit], attorney)
    assert production.status == Production.Status.DONE, production.reason
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        produced = pdf[1]  # after the index page
        produced_words = {w[4] for w in produced.get_text("words")}
        unique_secret = {w for w in secret if w not in {x for x in page.text.split() if page.text.count(x) > 1}}
        assert not unique_secret & produced_words
        for redaction in Redaction.objects.filter(page__exhibit=exhibit):
            assert box_is_black(produced, redaction.rect), redaction.rect
        assert produced.search_for("SMITH000001")  # stamped after redaction
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        text = volume.read("VOL001/TEXT/SMITH000001.txt").decode()
        native = pymupdf.open("pdf", volume.read("VOL001/NATIVES/SMITH000001.pdf"))
    assert "TOFAUTE" not in text and "3:05-cv-00595" not in text and "Seventh Circuit" in text
    assert "TOFAUTE" not in native[0].get_text() and not native.metadata.get("creationDate")
    assert corpus("court/ca7_3.pdf").read_bytes() == original
    assert exhibit.pages.get(number=1).text.count("TOFAUTE")  # the case file keeps the original text
    assert assert_redactions_hold(production) == len(added) + 1
    assert drawn.reason == "WP" and matter.audit_entries.filter(action="redaction.add").count() == len(added) + 1


def test_log_lists_the_redactions_the_worker_applied(matter, attorney, corpus, ingest):
    first = ingest(matter, corpus("court/ca7_3.pdf"))
    second = ingest(matter, corpus("court/cafc_3.pdf"))
    early = redaction_add(page=second.pages.get(number=1), rect=(72, 72, 200, 90), reason="NR", user=attorney)
    production = production_create(matter=matter, exhibits=[first, second], prefix="SMITH", created_by=attorney,
                                   enqueue=False)
    # between the start and the worker: a box added to the first, the second's only box removed
    redactions_from_search(exhibit=first, query="TOFAUTE", reason="PII", user=attorney)
    early.delete()
    production_run(production_id=production.pk)
    rows = list(csv.DictReader(io.StringIO(log_csv_bytes(production).decode("utf-8-sig"))))
    assert [(r["bates_begin"], r["treatment"], r["privilege_basis"]) for r in rows] == [
        ("SMITH000001", "redacted", "PII: personal identifying information (SSN, account, birth date)")]


def test_text_outside_the_boxes_stays_where_it_was(matter, attorney, corpus, ingest):
    """MuPDF moves the rest of a line left after a removed word on this filing (and cuts glyphs of the next line);
    the produced page must show every other word where the original has it."""
    exhibit = ingest(matter, corpus("court/ca2_1-1.pdf"))
    with pymupdf.open(corpus("court/ca2_1-1.pdf")) as original:
        words = original[0].get_text("words")
    court = next(w for w in words if w[4] == "Court")
    redaction_add(page=exhibit.pages.get(number=1), rect=court[:4], reason="AC", user=attorney)
    production = produce(matter, [exhibit], attorney)
    assert production.status == Production.Status.DONE, production.reason
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        native = pymupdf.open("pdf", volume.read("VOL001/NATIVES/SMITH000001.pdf"))
    produced = native[0].get_text("words")
    for text in ("Appeals", "Circuit", "Thurgood", "Marshall", "Foley"):
        before = next(w for w in words if w[4] == text)
        assert any(w[4] == text and abs(w[0] - before[0]) < 2
                   and abs((w[1] + w[3]) / 2 - (before[1] + before[3]) / 2) < 2
                   for w in produced), text
    assert assert_redactions_hold(production) == 1


def test_a_note_or_form_field_over_a_box_is_not_baked_back_in(matter, attorney, tmp_path, ingest):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Routine cover letter enclosing the insurance policy schedule for the claim.")
    page.insert_text((72, 200), "Account 4417-1234 balance owed by the claimant under the policy.")
    page.add_freetext_annot(pymupdf.Rect(70, 185, 300, 205), "Counsel note: settle below limits", fontsize=9)
    widget = pymupdf.Widget()
    widget.field_type = pymupdf.PDF_WIDGET_TYPE_TEXT
    widget.field_name = "ssn"
    widget.field_value = "123-45-6789"
    widget.rect = pymupdf.Rect(300, 185, 420, 205)
    page.add_widget(widget)
    path = tmp_path / "annotated.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    redaction_add(page=exhibit.pages.get(number=1), rect=(60, 180, 430, 210), reason="PII", user=attorney)
    production = produce(matter, [exhibit], attorney, keep_forms=True)
    assert production.status == Production.Status.DONE, production.reason
    assert_absent_from_volume(production, {"settle", "123-45-6789", "4417-1234"})
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        assert "Routine cover letter" in pdf[1].get_text()


def test_redaction_boxes_outside_the_page_or_without_a_reason_are_refused(matter, attorney):
    page = PageFactory(exhibit__matter=matter)  # US Letter, 612 x 792 points
    with pytest.raises(ValidationError, match="reason code"):
        redaction_add(page=page, rect=(10, 10, 50, 50), reason="SECRET", user=attorney)
    with pytest.raises(ValidationError, match="not on page 1"):
        redaction_add(page=page, rect=(900, 900, 950, 950), reason="AC", user=attorney)
    with pytest.raises(ValidationError, match="four numbers"):
        redaction_add(page=page, rect=("a", 1, 2, 3), reason="AC", user=attorney)


def test_social_security_numbers_are_found_by_pattern(matter, attorney, tmp_path, ingest):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Claimant SSN 123-45-6789 and spouse 987-65-4321; claim 12-345.")
    page.insert_text((72, 130), "Account ref 555-12-0000 is on file with the insurer of record.")
    path = tmp_path / "ssn.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    added = redactions_from_search(exhibit=exhibit, query=r"\b\d{3}-\d{2}-\d{4}\b", reason="PII", user=attorney,
                                   regex=True)
    assert len(added) == 3
    production = produce(matter, [exhibit], attorney)
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        text = volume.read("VOL001/TEXT/SMITH000001.txt").decode()
    assert not re.search(r"\d{3}-\d{2}-\d{4}", text) and "12-345" in text and "Claimant" in text
    assert assert_redactions_hold(production) == 3


def test_a_pattern_that_backtracks_without_end_is_stopped_with_a_reason(matter, attorney, tmp_path, ingest):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 100), "Ref " + "a" * 60 + " on file with the insurer of record.")
    path = tmp_path / "aaa.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    with pytest.raises(ValidationError, match="took more than .* seconds .* no box was added"):
        redactions_from_search(exhibit=exhibit, query=r"(?:(a+)\1)+b", reason="PII", user=attorney, regex=True)
    assert not Redaction.objects.filter(page__exhibit=exhibit).exists()
    assert len(redactions_from_search(exhibit=exhibit, query="insurer", reason="PII", user=attorney)) == 1


def test_the_pattern_budget_counts_matching_only_not_the_reading_of_pages_between_matches():
    # Reading a scanned page by OCR between two searches can take longer than the budget on a slow machine;
    # the pattern that then searches it in microseconds must not be reported as backtracking.
    pattern = compile_pattern("insurer", regex=False)
    pattern.budget_s = 0.2
    assert pattern.search("the insurer of record")
    time.sleep(0.3)
    assert [m.group(0) for m in pattern.finditer("insurer and insurer")] == ["insurer", "insurer"]
    assert pattern.spent_s < 0.2


def test_redaction_on_a_turned_page_covers_the_words_where_the_viewer_shows_them(matter, attorney, tmp_path,
                                                                                 ingest):
    doc = pymupdf.open()
    for rotation in (90, 270):
        page = doc.new_page()
        page.insert_text((72, 100), f"Turned page {rotation}: the mediation offer was confidential.")
        page.insert_text((72, 130), "The rest of this page is routine correspondence about scheduling.")
        page.set_rotation(rotation)
    path = tmp_path / "turned.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    added = redactions_from_search(exhibit=exhibit, query="mediation offer", reason="AC", user=attorney)
    assert len(added) == 2
    production = produce(matter, [exhibit], attorney, with_index=False)
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        for index, redaction in enumerate(added):
            produced = pdf[index]
            shown = produced.get_text().split()
            assert "mediation" not in shown and "correspondence" in shown
            assert box_is_black(produced, redaction.rect)
    assert assert_redactions_hold(production) == 2


@pytest.mark.ocr
def test_redaction_of_words_on_an_ocr_scan_removes_the_pixels(matter, attorney, corpus, ingest):
    exhibit = ingest(matter, corpus("odd/scan-1p.pdf"))
    page = exhibit.pages.get(number=1)
    assert page.source == "ocr"
    with pymupdf.open(corpus("odd/scan-1p.pdf")) as doc:
        words = page_words(page, doc[0])
    target = next(w.text for w in words if len(w.text) >= 7 and w.text.isalpha()
                  and page.text.count(w.text) == 1)
    added = redactions_from_search(exhibit=exhibit, query=target, reason="AC", user=attorney)
    assert len(added) == 1
    production = produce(matter, [exhibit], attorney, with_images=True)
    assert production.status == Production.Status.DONE, production.reason
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        assert box_is_black(pdf[1], added[0].rect)
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        text = volume.read("VOL001/TEXT/SMITH000001.txt").decode()
        image = volume.read("VOL001/IMAGES/SMITH000001.tif")
    assert target.lower() not in text.lower() and len(text) > 200  # the rest of the page was read again
    assert target.lower() not in ocr_tiff(image).lower()


# --- withholding and the log ----------------------------------------------------------------------------------

def ocr_tiff(data: bytes) -> str:
    return subprocess.run(["tesseract", "stdin", "stdout"], input=data, capture_output=True, check=True).stdout.decode()


def test_withheld_document_is_one_placeholder_page_with_its_bates_number(matter, attorney, make_user, corpus, ingest):
    kept = ingest(matter, corpus("court/ca7_3.pdf"))
    withheld = ingest(matter, corpus("court/cafc_3.pdf"))
    after = ingest(matter, corpus("court/ca9_19.pdf"))
    assistant = make_user("bob", "assistant")
    with pytest.raises(PermissionDenied):
        production_create(matter=matter, exhibits=[kept, withheld], prefix="SMITH", created_by=assistant,
                          withheld={withheld.pk: ATTORNEY_CLIENT}, enqueue=False)
    with pytest.raises(ValidationError, match="Describe"):
        production_create(matter=matter, exhibits=[kept, withheld], prefix="SMITH", created_by=attorney,
                          withheld={withheld.pk: {"basis": "work_product"}}, enqueue=False)
    production = produce(matter, [kept, withheld, after], attorney, withheld={withheld.pk: ATTORNEY_CLIENT})
    assert production.status == Production.Status.DONE, production.reason
    assert production.page_count == kept.page_count + 1 + after.page_count
    placeholder_bates = production.bates(kept.page_count + 1)
    cite = BatesPage.objects.get(production=production, bates=placeholder_bates)
    assert cite.page is None and cite.document.exhibit_id == withheld.pk
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        placeholder = pdf[1 + kept.page_count]
        text = placeholder.get_text()
        assert "DOCUMENT WITHHELD ON THE BASIS OF PRIVILEGE" in text and "Attorney-client privilege" in text
        assert placeholder.search_for(placeholder_bates)
        assert pdf[2 + kept.page_count].search_for(production.bates(kept.page_count + 2))  # numbering goes on
        assert withheld.title not in pdf[0].get_text()  # the index shows it as withheld
    assert_absent_from_volume(production, secret_words(withheld, kept, after))
    entry = PrivilegeLogEntry.objects.get(document__exhibit=withheld)
    assert entry.withheld and entry.description == ATTORNEY_CLIENT["description"]
    rows = list(csv.DictReader(io.StringIO(log_csv_bytes(production).decode("utf-8-sig"))))
    assert rows == [{"bates_begin": placeholder_bates, "bates_end": placeholder_bates, "date": entry.date,
                     "author": entry.author, "recipients": entry.recipients, "document_type": "PDF document",
                     "treatment": "withheld", "privilege_basis": "Attorney-client privilege",
                     "description": ATTORNEY_CLIENT["description"], "family": ""}]


def secret_words(exhibit, *others) -> set[str]:
    """Distinctive words of an exhibit: long, alphabetic, and found nowhere in the ``others`` (the documents
    produced beside it, whose own words may rightly be in the volume)."""
    words = set()
    for page in exhibit.pages.all():
        words |= {w.strip(".,;:()").lower() for w in page.text.split()}
    elsewhere = " ".join(p.text.lower() for other in others for p in other.pages.all())
    return {w for w in words if len(w) >= 9 and w.isalpha() and w not in elsewhere}


def volume_texts(path, ocr_only: set[str] | None = None) -> dict[str, str]:
    """The readable text of every file of a volume ZIP: PDF page text and every decompressed stream, text files
    as they are, TIFF page images by OCR (those whose Bates number is in ``ocr_only``, when given; every one if not)."""
    texts = {}
    with zipfile.ZipFile(path) as volume:
        for name in volume.namelist():
            data = volume.read(name)
            if name.lower().endswith(".pdf"):
                with pymupdf.open("pdf", data) as doc:
                    parts = [page.get_text() for page in doc]
                    parts += [str(doc.metadata)]
                    for xref in range(1, doc.xref_length()):
                        stream = doc.xref_stream(xref) if doc.xref_is_stream(xref) else None
                        parts.append(doc.xref_object(xref))
                        if stream:
                            parts.append(stream.decode("latin-1"))
                texts[name] = "\n".join(parts)
            elif name.lower().endswith((".tif", ".tiff")):
                if ocr_only is None or name.rsplit("/", 1)[-1].rsplit(".", 1)[0] in ocr_only:
                    texts[name] = ocr_tiff(data)
            else:
                texts[name] = data.decode("utf-8")
    return texts


def assert_absent_from_volume(production, words: set[str], ocr_only: set[str] | None = None) -> None:
    assert words
    texts = volume_texts(production_files(production)["zip"], ocr_only)
    if ocr_only is not None:
        assert {name.rsplit("/", 1)[-1].rsplit(".", 1)[0] for name in texts} >= ocr_only, "an image to read is missing"
    for name, text in texts.items():
        lowered = text.lower()
        leaked = sorted(w for w in words if w in lowered)
        assert not leaked, f"{name} holds {leaked[:5]}"


@pytest.mark.ocr
def test_volume_with_one_withheld_and_one_redacted_document_holds_none_of_their_words(matter, attorney, corpus,
                                                                                      ingest, tmp_path):
    redacted = ingest(matter, corpus("court/ca7_3.pdf"))
    withheld = ingest(matter, corpus("court/cafc_3.pdf"))
    plain = ingest(matter, corpus("court/ca9_19.pdf"))
    redacted_words = {"tofaute", "initiative", "miller", "fedex"}
    for word in redacted_words:
        assert redactions_from_search(exhibit=redacted, query=word, reason="WP", user=attorney), word
    production = produce(matter, [redacted, withheld, plain], attorney, with_images=True,
                         withheld={withheld.pk: {"basis": "custom", "basis_text": "Joint defense privilege",
                                                 "description": "Memo shared under joint defense agreement"}})
    assert production.status == Production.Status.DONE, production.reason
    # OCR is the slow part (about 8 s a page on CI's cores): the pages whose images could carry the words are read,
    # the redacted document's and the placeholder's; the plain filing's images are its own pages, and its text
    # files and PDF are still read whole.
    changed = {production.bates(number) for number in range(1, redacted.page_count + 2)}
    assert_absent_from_volume(production, secret_words(withheld, redacted, plain) | redacted_words, ocr_only=changed)
    assert assert_redactions_hold(production) == Redaction.objects.filter(page__exhibit=redacted).count() >= 4
    rows = list(csv.DictReader(io.StringIO(log_csv_bytes(production).decode("utf-8-sig"))))
    assert [(r["bates_begin"], r["treatment"], r["privilege_basis"]) for r in rows] == [
        ("SMITH000001", "redacted", "WP: attorney work product"),
        ("SMITH000002", "withheld", "Joint defense privilege")]
    pdf = pymupdf.open("pdf", log_pdf_bytes(production))
    log_text = " ".join(page.get_text() for page in pdf)
    assert "SMITH000001" in log_text and "SMITH000002" in log_text and "Joint defense privilege" in log_text
    assert "Memo shared under joint defense agreement" in log_text.replace("\n", " ")
    log_path = tmp_path / "log.pdf"
    log_path.write_bytes(log_pdf_bytes(production))
    assert subprocess.run(["qpdf", "--check", str(log_path)], capture_output=True).returncode == 0


def test_log_fields_are_prefilled_from_metadata_and_editable(matter, attorney, make_user, tmp_path, ingest):
    from matters.privilege.log import log_entry_update

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "From: Dana Counsel\nTo: Pat Client\nCc: Lee Partner\nSubject: Appeal strategy\n\n"
                                 "Privileged and confidential advice about the appeal strategy.")
    doc.set_metadata({"author": "Dana Counsel", "creationDate": "D:20230314120000Z"})
    path = tmp_path / "email.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    production = produce(matter, [exhibit], attorney, withheld={exhibit.pk: ATTORNEY_CLIENT})
    entry = PrivilegeLogEntry.objects.get()
    assert (entry.date, entry.author, entry.recipients, entry.document_type) == (
        "2023-03-14", "Dana Counsel", "Pat Client; Lee Partner", "Email")
    with pytest.raises(PermissionDenied):
        log_entry_update(entry=entry, user=make_user("bob", "assistant"), author="x")
    log_entry_update(entry=entry, user=attorney, recipients="Pat Client (CEO); Lee Partner, Esq.", date="2023-03-15")
    row = next(csv.DictReader(io.StringIO(log_csv_bytes(production).decode("utf-8-sig"))))
    assert row["recipients"] == "Pat Client (CEO); Lee Partner, Esq." and row["date"] == "2023-03-15"
    assert matter.audit_entries.get(action="privilege_log.edit").detail["fields"] == ["date", "recipients"]
    assert_absent_from_volume(production, {"strategy", "privileged", "counsel"})


def test_a_withheld_message_and_its_attachment_are_logged_from_the_messages_own_headers(matter, attorney):
    from tests.matters.exhibits.email_messages import as_bytes, ingest_bytes, message, pdf_bytes

    # Sent at 23:30 on March 3 in the sender's timezone (07:30 UTC on March 4); the subject line is long enough
    # that a date read from the page would run into it.
    mail = message(subject="Privileged: appeal strategy and the settlement range we would accept", cc="Cy Park "
                   "<cy@ruiz-law.example>", bcc="Dee Client <dee@client.example>",
                   body="Ben, my advice on the appeal follows.\n")
    mail.add_attachment(pdf_bytes("Draft appeal memorandum."), maintype="application", subtype="pdf",
                        filename="memo.pdf")
    parent = ingest_bytes(matter, attorney, as_bytes(mail))
    child = parent.children.get()
    produce(matter, [parent], attorney, withheld={
        parent.pk: ATTORNEY_CLIENT,
        child.pk: {"basis": "attorney_client", "description": "Draft memorandum from counsel re appeal"}})
    entries = {entry.document.exhibit_id: entry for entry in PrivilegeLogEntry.objects.select_related("document")}
    recipients = "Ben Stone <ben@stone.example>; Cy Park <cy@ruiz-law.example>; Dee Client <dee@client.example>"
    assert [(e.date, e.author, e.recipients, e.document_type) for e in (entries[parent.pk], entries[child.pk])] == [
        ("2026-03-03", "Ana Ruiz <ana@ruiz-law.example>", recipients, "Email"),
        ("2026-03-03", "Ana Ruiz <ana@ruiz-law.example>", recipients, "Attachment")]
