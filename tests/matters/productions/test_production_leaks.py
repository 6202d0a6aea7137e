"""The production's leak scan: every carrier of text outside a page's content fails a production when it holds a
redacted word (its scrubbing bypassed, or a carrier the scrubbing does not know), and a normal redacted
production, scrubbed at the source, passes; active content is removed from produced copies and listed in the
index; the privilege log goes through the same scan."""

import csv
import io
import re
import zipfile

import pymupdf
import pytest
from django.core.exceptions import ValidationError

from matters.models import BatesPage, PrivilegeLogEntry, Production
from matters.privilege import services as privilege_services
from matters.privilege.log import log_entry_update
from matters.privilege.services import redaction_add
from matters.productions import stamping
from matters.productions.bates.leaks import Scanner, Secrets, syntax_texts
from matters.productions.delivery import production_files
from matters.productions.leak_scan import scan_production
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run

pytestmark = pytest.mark.django_db

NAME = "Margaret Holloway"
BOX = (60, 185, 420, 206)  # over the line naming her, in points from the top left


def produce(matter, exhibits, user, **options):
    production = production_create(matter=matter, exhibits=exhibits, prefix="SMITH", created_by=user,
                                   enqueue=False, **options)
    return production_run(production_id=production.pk)


def letter() -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Settlement letter to the claims adjuster about the policy.", fontsize=11)
    page.insert_text((72, 200), f"Beneficiary {NAME} under the policy.", fontsize=11)
    page.insert_text((72, 300), "Closing paragraph with nothing privileged in it.", fontsize=11)
    return doc


def _new(doc: pymupdf.Document, source: str) -> int:
    xref = doc.get_new_xref()
    doc.update_object(xref, source)
    return xref


def _link(doc: pymupdf.Document, extra: str = "") -> int:
    page = doc[0]
    page.insert_link({"kind": pymupdf.LINK_GOTO, "from": pymupdf.Rect(72, 290, 200, 305), "page": 0})
    xref = [a for a in doc.xref_get_key(page.xref, "Annots")[1].strip("[]").split(" R") if a.strip()][-1]
    xref = int(xref.split()[0])
    for key, value in extra:
        doc.xref_set_key(xref, key, value)
    return xref


def _field(doc: pymupdf.Document, name: str, tooltip: str = "") -> None:
    widget = pymupdf.Widget()
    widget.field_type = pymupdf.PDF_WIDGET_TYPE_TEXT
    widget.field_name = name
    widget.field_label = tooltip
    widget.field_value = "paid"
    widget.rect = pymupdf.Rect(72, 400, 250, 420)
    doc[0].add_widget(widget)


def _struct(doc: pymupdf.Document, key: str) -> None:
    root = _new(doc, "<</Type/StructTreeRoot>>")
    element = _new(doc, f"<</Type/StructElem/S/Figure/P {root} 0 R/{key}(Photo of {NAME})/Pg {doc.page_xref(0)} 0 R>>")
    doc.xref_set_key(root, "K", f"[{element} 0 R]")
    doc.xref_set_key(doc.pdf_catalog(), "StructTreeRoot", f"{root} 0 R")


def _thumbnail(doc: pymupdf.Document) -> None:
    image = _new(doc, "<</Type/XObject/Subtype/Image/Width 1/Height 1/ColorSpace/DeviceGray/BitsPerComponent 8>>")
    doc.update_stream(image, b"\x00")
    doc.xref_set_key(doc.page_xref(0), "Thumb", f"{image} 0 R")


XMP = ('<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF '
       'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" '
       f'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{NAME}</dc:title></rdf:Description></rdf:RDF>'
       '</x:xmpmeta><?xpacket end="w"?>')

# Each carrier: what puts the name into a letter, and the production's options it needs.
CARRIERS = {
    "outline": (lambda d: d.set_toc([[1, f"{NAME} beneficiary", 1]]), {}),
    "named destination": (lambda d: d.xref_set_key(d.pdf_catalog(), "Names", "<</Dests %d 0 R>>" % _new(
        d, f"<</Names [({NAME}) [{d.page_xref(0)} 0 R /XYZ 0 700 0]]>>")), {}),
    "page label": (lambda d: d.xref_set_key(d.pdf_catalog(), "PageLabels", f"<</Nums [0 <</P({NAME} )>>]>>"), {}),
    "structure /Alt": (lambda d: _struct(d, "Alt"), {}),
    "structure /ActualText": (lambda d: _struct(d, "ActualText"), {}),
    "optional content group": (lambda d: d.add_ocg(f"{NAME} notes", on=True), {}),
    "link URI": (lambda d: d[0].insert_link({"kind": pymupdf.LINK_URI, "from": pymupdf.Rect(72, 290, 200, 305),
                                             "uri": "https://example.com/margaret-holloway"}), {}),
    "link title": (lambda d: _link(d, [("Contents", f"({NAME})")]), {}),
    "annotation title": (lambda d: _link(d, [("T", f"({NAME})")]), {}),
    "form field name": (lambda d: _field(d, "Holloway_account"), {"keep_forms": True}),
    "form field tooltip": (lambda d: _field(d, "account", tooltip=f"{NAME} account"), {"keep_forms": True}),
    "JavaScript name": (lambda d: d.xref_set_key(d.pdf_catalog(), "Names", "<</JavaScript %d 0 R>>" % _new(
        d, f"<</Names [({NAME} check) <</S/JavaScript/JS(app.alert(1))>>]>>")), {}),
    "information dictionary": (lambda d: d.set_metadata({"title": f"{NAME} file", "author": "Dana Counsel"}), {}),
    "XMP": (lambda d: d.set_xml_metadata(XMP), {}),
    "embedded file": (lambda d: d.embfile_add("notes.txt", f"{NAME} notes".encode()), {}),
    "thumbnail": (_thumbnail, {}),
}


def redacted_exhibit(matter, attorney, ingest, tmp_path, carrier):
    doc = letter()
    put, options = CARRIERS[carrier]
    put(doc)
    path = tmp_path / "letter.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    assert exhibit.pages.exists(), (exhibit.status, exhibit.reason)
    redaction_add(page=exhibit.pages.get(number=1), rect=BOX, reason="PII", user=attorney)
    return exhibit, options


def produced_bytes(production) -> dict[str, bytes]:
    files = {"combined.pdf": production_files(production)["pdf"].read_bytes()}
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        files.update({name: volume.read(name) for name in volume.namelist()})
    return files


def plain_search(data: bytes, word: str) -> bool:
    """Whether ``word`` is in a PDF's page text, objects or decompressed streams, read plainly (Latin-1 and
    UTF-16BE), independently of the scan under test."""
    with pymupdf.open("pdf", data) as doc:
        parts = [page.get_text() for page in doc]
        for xref in range(1, doc.xref_length()):
            parts.append(doc.xref_object(xref))
            if doc.xref_is_stream(xref):
                stream = doc.xref_stream(xref) or b""
                parts += [stream.decode("latin-1"), stream.decode("utf-16-be", "ignore")]
    return word.lower() in "\n".join(parts).lower()


@pytest.mark.parametrize("carrier", sorted(CARRIERS))
def test_a_normal_redacted_production_scrubs_each_carrier_and_passes(matter, attorney, ingest, tmp_path, carrier):
    exhibit, options = redacted_exhibit(matter, attorney, ingest, tmp_path, carrier)
    production = produce(matter, [exhibit], attorney, **options)
    assert production.status == Production.Status.DONE, production.reason
    for name, data in produced_bytes(production).items():
        if name.endswith(".pdf"):
            assert not plain_search(data, "holloway"), name
            with pymupdf.open("pdf", data) as doc:
                assert not doc.embfile_count() and doc.xref_get_key(doc.page_xref(0), "Thumb")[0] == "null"
        else:
            assert b"holloway" not in data.lower(), name


def _bypass_scrubbing(monkeypatch):
    monkeypatch.setattr(privilege_services, "scrub_carriers", lambda doc, words: None)
    monkeypatch.setattr(privilege_services, "scrub_document", lambda doc: None)
    monkeypatch.setattr(privilege_services, "remove_active_content", lambda doc: [])


@pytest.mark.parametrize("carrier", sorted(CARRIERS))
def test_with_the_scrubbing_bypassed_the_scan_fails_the_production_for_each_carrier(
        matter, attorney, ingest, tmp_path, monkeypatch, carrier):
    exhibit, options = redacted_exhibit(matter, attorney, ingest, tmp_path, carrier)
    _bypass_scrubbing(monkeypatch)
    delivered_while_scanned = []

    def scan(production, *args):
        # Neither file is at its delivered path while it is scanned: a volume that leaks is never served.
        delivered_while_scanned.extend(p.exists() for p in production_files(production).values())
        return scan_production(production, *args)

    monkeypatch.setattr(stamping, "scan_production", scan)
    production = produce(matter, [exhibit], attorney, **options)
    assert delivered_while_scanned and not any(delivered_while_scanned)
    assert production.status == Production.Status.FAILED
    expected = ["thumbnail"] if carrier == "thumbnail" else ["margaret", "holloway"]
    assert any(word in production.reason.lower() for word in expected), production.reason
    assert "what must not leave" in production.reason
    assert not BatesPage.objects.filter(production=production).exists()
    assert matter.audit_entries.filter(action="production.void").count() == 1
    assert not production_files(production)["zip"].exists() and not production_files(production)["pdf"].exists()


UNKNOWN_CARRIERS = {
    # A key of the page no scrubbing knows, in UTF-16BE with its byte-order mark as a hex string.
    "a private page key in UTF-16BE": lambda d: d.xref_set_key(
        d.page_xref(0), "FirmNote", "<FEFF" + NAME.encode("utf-16-be").hex().upper() + ">"),
    # Octal escapes in a catalog key of its own.
    "octal escapes": lambda d: d.xref_set_key(d.pdf_catalog(), "FirmNote", r"(\115\141rgaret Holloway)"),
    # A form no page draws (a key of the catalog's own names it), its text split across a TJ array.
    "an undrawn form": lambda d: _undrawn_form(d),
}


def _undrawn_form(doc: pymupdf.Document) -> None:
    form = _new(doc, "<</Type/XObject/Subtype/Form/BBox[0 0 100 100]/Resources<</Font<</F1<</Type/Font"
                     "/Subtype/Type1/BaseFont/Helvetica>>>>>>>>")
    doc.update_stream(form, b"BT /F1 9 Tf 10 10 Td [(Marg) -20 (aret Hollo) 15 (way)] TJ ET")
    doc.xref_set_key(doc.pdf_catalog(), "FirmForm", f"{form} 0 R")


@pytest.mark.parametrize("carrier", sorted(UNKNOWN_CARRIERS))
def test_a_carrier_the_scrubbing_does_not_know_fails_the_production(matter, attorney, ingest, tmp_path, carrier):
    doc = letter()
    UNKNOWN_CARRIERS[carrier](doc)
    path = tmp_path / "letter.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    redaction_add(page=exhibit.pages.get(number=1), rect=BOX, reason="PII", user=attorney)
    production = produce(matter, [exhibit], attorney)
    assert production.status == Production.Status.FAILED
    assert "margaret" in production.reason.lower(), production.reason
    assert "NATIVES/SMITH000001.pdf" in production.reason


def test_a_redacted_documents_title_naming_the_redacted_name_fails_the_production(matter, attorney, ingest,
                                                                                 tmp_path):
    path = tmp_path / "letter.pdf"
    letter().save(path)
    exhibit = ingest(matter, path)
    exhibit.title = f"Letter about {NAME}"
    exhibit.save(update_fields=["title"])
    redaction_add(page=exhibit.pages.get(number=1), rect=BOX, reason="PII", user=attorney)
    production = produce(matter, [exhibit], attorney)
    assert production.status == Production.Status.FAILED
    assert "VOL001/DATA/VOL001.dat holds" in production.reason and "index.csv" in production.reason
    exhibit.title = "Letter to the claims adjuster"
    exhibit.save(update_fields=["title"])
    assert produce(matter, [exhibit], attorney).status == Production.Status.DONE


def test_strings_are_read_in_every_encoding():
    secrets = Secrets()
    secrets.add(NAME, "redacted")
    utf16 = b"<FEFF" + NAME.encode("utf-16-be").hex().encode() + b">"
    for syntax in (rb"(\115\141rgaret\040Holloway)", utf16, b"/Margaret#20Holloway",
                   b"[(Marg) -30 (aret) ( Hol) 12 (loway)] TJ", b"(\xef\xbb\xbfMargaret Holloway)",
                   b"(Margaret \\\nHolloway)"):
        assert secrets.find("\n".join(syntax_texts(syntax))), syntax
    assert not secrets.find("\n".join(syntax_texts(b"(Margaret) Tj (Hollow) Tj")))


def test_a_withheld_documents_text_in_another_documents_metadata_fails_but_on_its_page_passes(
        matter, attorney, ingest, tmp_path):
    sentence = "The board privately agreed to settle the claim for four million dollars before trial."
    withheld_doc = pymupdf.open()
    withheld_doc.new_page().insert_text((72, 100), sentence, fontsize=10)
    withheld_doc.save(tmp_path / "memo.pdf")
    quoting = pymupdf.open()
    quoting.new_page().insert_text((72, 100), "An ordinary cover letter.", fontsize=10)
    quoting.set_metadata({"subject": "board privately agreed to settle the claim for four million"})
    quoting.save(tmp_path / "cover.pdf")
    showing = pymupdf.open()
    showing.new_page().insert_text((72, 100), "Minutes: " + sentence, fontsize=10)
    showing.save(tmp_path / "minutes.pdf")
    memo, cover, minutes = (ingest(matter, tmp_path / n) for n in ("memo.pdf", "cover.pdf", "minutes.pdf"))
    withheld = {memo.pk: {"basis": "attorney_client", "description": "Memo from counsel"}}
    failed = produce(matter, [memo, cover], attorney, withheld=withheld)
    assert failed.status == Production.Status.FAILED
    assert "privately agreed to settle the" in failed.reason and "withheld" in failed.reason, failed.reason
    # The same sentence on the page of a produced document is that document's own text: produced, not leaked.
    done = produce(matter, [memo, minutes], attorney, withheld=withheld)
    assert done.status == Production.Status.DONE, done.reason


def active_letter(tmp_path):
    doc = letter()
    doc.xref_set_key(doc.pdf_catalog(), "OpenAction", "<</S/JavaScript/JS(app.launchURL('http://x'))>>")
    doc.xref_set_key(doc.page_xref(0), "AA", "<</O<</S/Launch/F(calc.exe)>>>>")
    doc.xref_set_key(doc.pdf_catalog(), "Names", "<</JavaScript %d 0 R>>" % _new(
        doc, "<</Names [(init) <</S/JavaScript/JS(app.alert(1))>>]>>"))
    doc.embfile_add("setup.exe", b"MZ\x90\x00 not really a program")
    _link(doc, [("A", "<</S/Launch/F(C:/Windows/system32/cmd.exe)>>")])
    # A benign head chaining what runs: an inline /Next, and an array of them on the open action's own chain.
    _link(doc, [("A", "<</S/URI/URI(https://example.com/)/Next<</S/JavaScript/JS(app.alert(2))>>>>")])
    _link(doc, [("A", "%d 0 R" % _new(doc, "<</S/GoTo/D[0/Fit]/Next[<</S/Launch/F(calc.exe)>>]>>"))])
    doc[0].insert_link({"kind": pymupdf.LINK_GOTOR, "from": pymupdf.Rect(72, 500, 200, 520),
                        "file": "C:/Users/clerk/secret.pdf", "page": 0})
    path = tmp_path / "active.pdf"
    doc.save(path)
    return path


def test_produced_copies_carry_no_active_content_and_the_index_says_what_was_removed(
        matter, attorney, ingest, tmp_path):
    exhibit = ingest(matter, active_letter(tmp_path))  # not redacted: only active content is removed
    production = produce(matter, [exhibit], attorney)
    assert production.status == Production.Status.DONE, production.reason
    for name, data in produced_bytes(production).items():
        if not name.endswith(".pdf"):
            continue
        with pymupdf.open("pdf", data) as doc:
            assert not doc.embfile_count(), name
            assert doc.xref_get_key(doc.pdf_catalog(), "OpenAction")[0] == "null", name
            # A key whose value is null is absent (ISO 32000-1, 7.3.9); MuPDF writes it out as such.
            objects = re.sub(r"/\w+ null", "", "\n".join(doc.xref_object(x) for x in range(1, doc.xref_length())))
            for word in ("/JavaScript", "/Launch", "/AA", "/GoToR", "/EmbeddedFile", "cmd.exe", "secret.pdf",
                         "calc.exe", "app.alert(2)"):
                assert word not in objects, (name, word, objects)
            assert "Settlement letter" in doc[-1].get_text()
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        row = next(csv.DictReader(io.StringIO(volume.read("VOL001/index.csv").decode("utf-8"))))
    removed = row["removed"]
    for what in ("JavaScript action", "Launch action", "trigger actions", "document JavaScript", "embedded file",
                 "1 link to files outside the production", "chained actions (/Next)"):
        assert what in removed, (what, removed)
    assert "secret.pdf" not in removed  # the name of a file the other side is not given is not given either


def test_a_prefilled_log_author_holding_a_redacted_name_is_left_empty_and_the_log_is_scanned(
        matter, attorney, ingest, tmp_path, monkeypatch):
    doc = letter()
    doc.set_metadata({"author": NAME})
    path = tmp_path / "letter.pdf"
    doc.save(path)
    exhibit = ingest(matter, path)
    redaction_add(page=exhibit.pages.get(number=1), rect=BOX, reason="PII", user=attorney)
    production = produce(matter, [exhibit], attorney)
    assert production.status == Production.Status.DONE, production.reason
    entry = PrivilegeLogEntry.objects.get(document__production=production)
    assert entry.author == ""
    with pytest.raises(ValidationError) as refused:
        log_entry_update(entry=entry, user=attorney, description=f"Letter naming {NAME}")
    assert "description" in refused.value.message_dict
    log_entry_update(entry=entry, user=attorney, author="Dana Counsel")
    assert PrivilegeLogEntry.objects.get(pk=entry.pk).author == "Dana Counsel"
    # Without the clearing at the source, the scan of the log fails the production.
    monkeypatch.setattr(privilege_services, "_log_without_redacted_words", lambda document, words: None)
    again = produce(matter, [exhibit], attorney)
    assert again.status == Production.Status.FAILED
    assert "the privilege log" in again.reason and "author" in again.reason


def test_a_scan_of_text_files_and_ocr_is_given_the_images_to_read():
    secrets = Secrets()
    secrets.add(NAME, "redacted")
    scanner = Scanner(secrets, ocr=lambda data: data.decode())
    scanner.scan_file("Beneficiary Margaret\nHOLLOWAY".encode("utf-16"), "VOL001/TEXT/SMITH000001.txt")
    scanner.scan_file(NAME.encode(), "VOL001/IMAGES/SMITH000002.tif", read_image=True)
    scanner.scan_file(NAME.encode(), "VOL001/IMAGES/SMITH000003.tif", read_image=False)
    assert [f.where for f in scanner.findings] == ["VOL001/TEXT/SMITH000001.txt", "VOL001/IMAGES/SMITH000002.tif"]


@pytest.mark.ocr
def test_a_redacted_page_image_showing_the_name_fails_the_production_through_ocr(matter, attorney, ingest, tmp_path,
                                                                                 monkeypatch):
    from matters.productions import stamping

    path = tmp_path / "letter.pdf"
    letter().save(path)
    exhibit = ingest(matter, path)
    redaction_add(page=exhibit.pages.get(number=1), rect=BOX, reason="PII", user=attorney)
    # The redacted page's image is read through OCR and holds nothing of the name.
    assert produce(matter, [exhibit], attorney, with_images=True).status == Production.Status.DONE

    def unredacted_image(page):  # a page image made from the page as it was, as a broken renderer would
        shown = pymupdf.open()
        shown.new_page().insert_text((72, 200), f"Beneficiary {NAME}", fontsize=28)
        return stamping_tiff(shown[0])

    stamping_tiff = stamping.tiff_bytes
    monkeypatch.setattr(stamping, "tiff_bytes", unredacted_image)
    production = produce(matter, [exhibit], attorney, with_images=True)
    assert production.status == Production.Status.FAILED
    assert re.search(r"VOL002/IMAGES/SMITH000002.tif holds “(beneficiary|margaret|holloway)”", production.reason), (
        production.reason)


@pytest.mark.ocr
def test_a_name_under_a_box_on_a_scan_is_cleared_from_the_prefilled_log(matter, attorney, ingest, tmp_path):
    # A scanned memo: its text comes from OCR, so the privilege log's prefill reads "To: Margaret Holloway" from
    # the OCR text, and the words under the box must come from Tesseract's word boxes to be cleared.
    drawn = pymupdf.open()
    page = drawn.new_page()
    page.insert_text((72, 100), "MEMORANDUM", fontsize=20)
    page.insert_text((72, 160), f"To: {NAME}", fontsize=20)
    page.insert_text((72, 220), "From: Dana Counsel", fontsize=20)
    page.insert_text((72, 300), "Re: the adjuster's file", fontsize=20)
    scan = tmp_path / "memo.png"
    page.get_pixmap(dpi=200).save(scan)
    exhibit = ingest(matter, scan)
    first = exhibit.pages.get(number=1)
    assert first.source == "ocr" and "Holloway" in first.text, first.text
    width = exhibit.pages.get(number=1).width_pt / 612  # the scan's page is the image at its own size
    redaction_add(page=first, rect=(100 * width, 135 * width, 420 * width, 170 * width), reason="PII",
                  user=attorney)
    production = produce(matter, [exhibit], attorney)
    assert production.status == Production.Status.DONE, production.reason
    entry = PrivilegeLogEntry.objects.get(document__production=production)
    assert "holloway" not in entry.recipients.lower() and "Dana Counsel" in entry.author


def test_a_redaction_that_leaves_text_under_its_box_fails_the_production(matter, attorney, ingest, tmp_path,
                                                                        monkeypatch):
    """MuPDF's redaction leaving the words under a box in the content (as it did on pages of the PyMuPDF issues
    bates/redact.py names): the check after it raises RedactionFailed, and the production fails, its range void,
    no file delivered, never done."""
    path = tmp_path / "letter.pdf"
    letter().save(path)
    exhibit = ingest(matter, path)
    redaction_add(page=exhibit.pages.get(number=1), rect=BOX, reason="PII", user=attorney)
    monkeypatch.setattr(pymupdf.Page, "apply_redactions", lambda page, *args, **kwargs: True)
    production = produce(matter, [exhibit], attorney)
    assert production.status == Production.Status.FAILED
    assert "text is still under a redaction box on page 1" in production.reason, production.reason
    assert not BatesPage.objects.filter(production=production).exists()
    assert matter.audit_entries.filter(action="production.void").count() == 1
    assert not matter.audit_entries.filter(action="production.done").exists()
    assert not production_files(production)["zip"].exists() and not production_files(production)["pdf"].exists()
