"""The leak scan reads a page the production left as ingest read it from its stored text, and only such a page:
a page whose content, fonts or box differ in any byte is extracted again, a redacted page is extracted, and an
unchanged page's marked-content property lists (what text extraction does not read) are still read."""

import zipfile

import pymupdf
import pytest

from matters.models import Page, Production
from matters.privilege.services import redaction_add
from matters.productions.bates.leaks import IngestedPages, Scanner, Secrets
from matters.productions.bates.page_key import page_keys
from matters.productions.bates.stamp import StampSpec, stamp_and_append
from matters.productions.delivery import production_files
from matters.productions.leak_scan import ingested_pages, production_secrets
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run

NAME = "Margaret Holloway"
SHOWN = "Beneficiary Dana Whitfield under the policy."


def source(content: bytes | None = None) -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 200), SHOWN, fontsize=11)
    if content is not None:
        doc.update_stream(page.get_contents()[0], content)
    return pymupdf.open("pdf", doc.tobytes())


def stamped(doc: pymupdf.Document) -> pymupdf.Document:
    """``doc`` stamped as a production stamps a native (its own content made a form, the stamp after it)."""
    combined = pymupdf.open()
    stamp_and_append(combined, doc, ["SMITH000001"], StampSpec())
    return pymupdf.open("pdf", doc.tobytes(garbage=2, deflate=True))


def scan(produced: pymupdf.Document, ingested: IngestedPages) -> Scanner:
    secrets = Secrets()
    secrets.add(NAME, "redacted")
    scanner = Scanner(secrets, ingested=ingested)
    scanner.scan_pdf(produced.tobytes(), "NATIVES/SMITH000001.pdf")
    return scanner


def ingested_from(doc: pymupdf.Document, text: str) -> IngestedPages:
    ingested = IngestedPages()
    ingested.add(doc, {0: text})
    return ingested


def test_an_unchanged_page_is_read_from_its_stored_text():
    original = source()
    # The stored text says what the page shows: the scan looks in it instead of extracting the page again.
    scanner = scan(stamped(source()), ingested_from(original, SHOWN))
    assert (scanner.pages_ingested, scanner.pages_extracted, scanner.findings) == (1, 0, [])


def test_a_page_whose_font_differs_in_one_key_is_extracted_again():
    original = source()
    # A stored text holding the name tells which text the scan looked in: the stored one, or the page's own.
    stored = ingested_from(original, f"{SHOWN} {NAME}")
    scanner = scan(stamped(source()), stored)
    assert scanner.pages_ingested == 1 and any(f.where.endswith("page 1") for f in scanner.findings)
    produced = stamped(source())
    form = int(produced.xref_get_key(produced.page_xref(0), "Resources/XObject/LDPage")[1].split()[0])
    font = int(produced.xref_get_key(form, "Resources/Font/helv")[1].split()[0])
    produced.xref_set_key(font, "BaseFont", "/Courier")
    scanner = scan(produced, stored)
    assert (scanner.pages_ingested, scanner.pages_extracted, scanner.findings) == (0, 1, [])


def resources_object(doc: pymupdf.Document) -> int:
    kind, value = doc.xref_get_key(doc.page_xref(0), "Resources")
    assert kind == "xref"
    return int(value.split()[0])


def with_inline_resources() -> pymupdf.Document:
    """:func:`source` with its page's resources written inline in the page rather than as an object of their own."""
    doc = source()
    doc.xref_set_key(doc.page_xref(0), "Resources", doc.xref_object(resources_object(doc), compressed=True))
    assert doc.xref_get_key(doc.page_xref(0), "Resources")[0] == "dict"
    return doc


def test_a_page_is_known_whether_its_resources_are_written_inline_or_as_an_object_of_their_own():
    assert page_keys(with_inline_resources()) == page_keys(source()) != [None]
    # Either way the stamped page is the page ingest read (stamping changes the document it is given).
    assert scan(stamped(source()), ingested_from(with_inline_resources(), SHOWN)).pages_ingested == 1
    assert scan(stamped(with_inline_resources()), ingested_from(source(), SHOWN)).pages_ingested == 1
    # Another font is another page, inline or not.
    other = source()
    courier = other.get_new_xref()
    other.update_object(courier, "<</Type/Font/Subtype/Type1/BaseFont/Courier/Encoding/WinAnsiEncoding>>")
    other.update_object(resources_object(other), f"<</Font<</helv {courier} 0 R>>>>")
    assert page_keys(other) != page_keys(with_inline_resources())


def test_a_page_whose_content_differs_is_extracted_again():
    original = source()
    # One line more than ingest read, in the page's own font.
    changed = source(original.xref_stream(original[0].get_contents()[0])
                     + b"\nBT /helv 11 Tf 72 500 Td (" + NAME.encode() + b") Tj ET\n")
    scanner = scan(stamped(changed), ingested_from(original, SHOWN))
    assert (scanner.pages_ingested, scanner.pages_extracted) == (0, 1)
    assert scanner.findings


def test_an_unchanged_pages_property_lists_are_still_read():
    marked = (b"/Span <</ActualText (" + NAME.encode() + b")>> BDC BT /helv 11 Tf 72 600 Td (Beneficiary) Tj ET "
              b"EMC\n")
    original = source()
    content = marked + original.xref_stream(original[0].get_contents()[0])
    scanner = scan(stamped(source(content)), ingested_from(source(content), SHOWN))
    assert scanner.pages_ingested == 1
    assert any("object" in f.where and f.text == NAME.lower() for f in scanner.findings), scanner.findings


@pytest.mark.django_db
def test_a_production_reads_its_unchanged_pages_from_ingest_and_extracts_the_redacted_one(
        matter, attorney, ingest, tmp_path):
    for name, line in (("plain.pdf", "Closing paragraph with nothing privileged in it."),
                       ("letter.pdf", f"Beneficiary {NAME} under the policy.")):
        doc = pymupdf.open()
        doc.new_page().insert_text((72, 200), line, fontsize=11)
        doc.save(tmp_path / name)
    plain, letter = ingest(matter, tmp_path / "plain.pdf"), ingest(matter, tmp_path / "letter.pdf")
    redaction_add(page=letter.pages.get(number=1), rect=(60, 185, 420, 206), reason="PII", user=attorney)
    production = production_run(production_id=production_create(
        matter=matter, exhibits=[plain, letter], prefix="SMITH", created_by=attorney, enqueue=False).pk)
    assert production.status == Production.Status.DONE, production.reason
    assert len(ingested_pages(production)) == 1  # the redacted page is not among them
    scanner = Scanner(production_secrets(production), ingested=ingested_pages(production))
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        for member in volume.namelist():
            scanner.scan_file(volume.read(member), member)
    assert (scanner.pages_ingested, scanner.pages_extracted, scanner.findings) == (1, 1, [])


@pytest.mark.django_db
def test_ingest_stores_each_text_layer_pages_key_and_a_production_reads_the_page_by_it(
        matter, attorney, ingest, tmp_path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 200), "Closing paragraph with nothing privileged in it.", fontsize=11)
    doc.save(tmp_path / "plain.pdf")
    plain = ingest(matter, tmp_path / "plain.pdf")
    page = plain.pages.get(number=1)
    with pymupdf.open(tmp_path / "plain.pdf") as original:
        assert page.source == page.Source.PDF and page.text_key == page_keys(original)[0].hex()
    production = production_run(production_id=production_create(
        matter=matter, exhibits=[plain], prefix="SMITH", created_by=attorney, enqueue=False).pk)
    assert production.status == Production.Status.DONE, production.reason
    # The stored text is what the scan looks in for an unchanged page: a name put into it is found there.
    Page.objects.filter(pk=page.pk).update(text=f"{page.text} {NAME}")
    secrets = Secrets()
    secrets.add(NAME, "redacted")
    assert scan_volume(production, secrets) == (1, 0, 1)


@pytest.mark.django_db
def test_a_page_whose_stored_key_is_not_its_contents_is_extracted(matter, attorney, ingest, tmp_path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 200), f"Beneficiary {NAME} under the policy.", fontsize=11)
    doc.save(tmp_path / "letter.pdf")
    letter = ingest(matter, tmp_path / "letter.pdf")
    production = production_run(production_id=production_create(
        matter=matter, exhibits=[letter], prefix="SMITH", created_by=attorney, enqueue=False).pk)
    assert production.status == Production.Status.DONE, production.reason
    # Ingest's key stood for other content (as a page changed since it was read): its stored text, without the
    # name, must not stand for the page, which is extracted and the name found.
    other = source()
    Page.objects.filter(exhibit=letter).update(text=SHOWN, text_key=page_keys(other)[0].hex())
    secrets = Secrets()
    secrets.add(NAME, "redacted")
    ingested, extracted, findings = scan_volume(production, secrets)
    assert (ingested, extracted) == (0, 1) and findings


@pytest.mark.django_db
def test_a_page_stored_without_a_key_is_keyed_from_the_display_pdf(matter, attorney, ingest, tmp_path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 200), "Closing paragraph with nothing privileged in it.", fontsize=11)
    doc.save(tmp_path / "plain.pdf")
    plain = ingest(matter, tmp_path / "plain.pdf")
    Page.objects.filter(exhibit=plain).update(text_key="")  # as ingested before keys were stored
    production = production_run(production_id=production_create(
        matter=matter, exhibits=[plain], prefix="SMITH", created_by=attorney, enqueue=False).pk)
    assert production.status == Production.Status.DONE, production.reason
    assert len(ingested_pages(production)) == 1
    secrets = Secrets()
    secrets.add(NAME, "redacted")
    assert scan_volume(production, secrets) == (1, 0, 0)


def scan_volume(production: Production, secrets: Secrets) -> tuple[int, int, int]:
    """The production's volume scanned as the production scans it: (pages read from ingest's text, pages
    extracted, findings)."""
    scanner = Scanner(secrets, ingested=ingested_pages(production))
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        for member in volume.namelist():
            scanner.scan_file(volume.read(member), member)
    return scanner.pages_ingested, scanner.pages_extracted, len(scanner.findings)
