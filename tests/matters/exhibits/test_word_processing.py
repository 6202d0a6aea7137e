"""Word-processing files through LibreOffice: Word's pagination with metric-compatible fonts, a note where a font
has no such substitute, and legacy Word, WordPerfect, RTF and OpenDocument text accepted (or refused, with why)."""

import shutil
import subprocess
import zipfile

import docx
import pytest

from matters import storage
from matters.exhibits.sniff import sniff
from matters.models import Exhibit

pytestmark = pytest.mark.django_db

# The page count Microsoft Word gives for the corpus letter (Letter paper, Times New Roman; SOURCES.md).
LETTER_PAGES_IN_WORD = 6


@pytest.fixture(scope="module")
def letter_as(tmp_path_factory, corpus_dir):
    """Return ``fn(ext)``: the corpus letter saved by LibreOffice as ``ext`` (doc, rtf, odt), once per module."""
    folder = tmp_path_factory.mktemp("formats")
    shutil.copyfile(corpus_dir / "odd/letter.docx", folder / "letter.docx")
    made = {}

    def convert(ext: str):
        if ext not in made:
            filters = {"doc": "doc:MS Word 97", "rtf": "rtf", "odt": "odt"}
            subprocess.run(["soffice", f"-env:UserInstallation=file://{folder}/profile", "--headless",
                            "--norestore", "--convert-to", filters[ext], "--outdir", str(folder / ext),
                            str(folder / "letter.docx")], capture_output=True, timeout=300, check=True)
            made[ext] = folder / ext / f"letter.{ext}"
        return made[ext]

    return convert


def test_letter_docx_has_the_page_count_word_gives(matter, corpus, ingest):
    exhibit = ingest(matter, corpus("odd/letter.docx"))
    assert exhibit.status == Exhibit.Status.READY, exhibit.reason
    assert exhibit.page_count == LETTER_PAGES_IN_WORD
    assert not any("metric-compatible" in note for note in exhibit.notes)


def test_a_font_without_a_metric_compatible_substitute_is_noted(matter, tmp_path, ingest):
    document = docx.Document()
    style = document.styles["Normal"]
    style.font.name = "Garamond"
    for number in range(40):
        document.add_paragraph(f"Paragraph {number}: the tenant reported the leak in writing on March 3, 2021.")
    document.save(tmp_path / "garamond.docx")
    exhibit = ingest(matter, tmp_path / "garamond.docx")
    assert exhibit.status == Exhibit.Status.READY, exhibit.reason
    note = next(note for note in exhibit.notes if "metric-compatible" in note)
    assert "Garamond" in note and "DejaVu" in note and "differently than in Word" in note


@pytest.mark.parametrize("ext, mime", [("doc", "application/msword"), ("rtf", "application/rtf"),
                                       ("odt", "application/vnd.oasis.opendocument.text")])
def test_legacy_word_rtf_and_odt_are_converted_like_docx(ext, mime, letter_as, matter, ingest, client, attorney):
    exhibit = ingest(matter, letter_as(ext))
    assert (exhibit.status, exhibit.kind, exhibit.mime_type) == (Exhibit.Status.READY, "document", mime), \
        exhibit.reason
    assert exhibit.page_count >= LETTER_PAGES_IN_WORD - 1
    assert any(page.source == "pdf" and len(page.text) > 200 for page in exhibit.pages.all())


def _wordperfect(body: bytes) -> bytes:
    # The 16-byte WordPerfect prefix: 0xFF "WPC", document pointer, product 1 (WordPerfect), file type 10
    # (document), major/minor version 2.1 (WordPerfect 6), encryption 0, index pointer 0.
    return b"\xffWPC" + (16).to_bytes(4, "little") + bytes([1, 10, 2, 1]) + b"\x00\x00\x00\x00" + body


def _wordperfect_5(body: bytes) -> bytes:
    # WordPerfect 5.1's prefix (major version 0, minor 1) with the document area right after it. In its text
    # stream printable ASCII is text, 0x0A a hard return, 0x0C a hard page break, and C3 xx C3 / C4 xx C4 turn
    # attribute xx (0x0C: bold) on and off (WordPerfect Corporation, "WordPerfect 5.1 Developer's Toolkit").
    return b"\xffWPC" + (16).to_bytes(4, "little") + bytes([1, 10, 0, 1]) + b"\x00\x00\x00\x00" + body


def test_a_wordperfect_5_brief_is_converted_with_its_text_and_its_page_break(matter, tmp_path, ingest):
    path = tmp_path / "brief.wpd"
    path.write_bytes(_wordperfect_5(
        b"\xc3\x0c\xc3IN THE UNITED STATES DISTRICT COURT\xc4\x0c\xc4\x0aMOTION TO COMPEL DISCOVERY\x0a\x0a"
        b"Plaintiff moved on March 3, 2021 for an order compelling production of the lease.\x0a"
        b"\x0cEXHIBIT LIST\x0aThe lease dated June 1, 2019.\x0a"))
    exhibit = ingest(matter, path)
    assert (exhibit.status, exhibit.kind, exhibit.mime_type) == (
        Exhibit.Status.READY, "document", "application/vnd.wordperfect"), exhibit.reason
    pages = list(exhibit.pages.order_by("number"))
    assert len(pages) == 2 and all(page.source == "pdf" for page in pages)
    assert "MOTION TO COMPEL DISCOVERY" in pages[0].text and "March 3, 2021" in pages[0].text
    assert "EXHIBIT LIST" in pages[1].text and "EXHIBIT LIST" not in pages[0].text
    assert storage.blob_path(exhibit.sha256).read_bytes() == path.read_bytes()


def test_wordperfect_is_recognised_and_an_unreadable_one_fails_with_the_reason(matter, tmp_path, ingest):
    path = tmp_path / "brief.wpd"
    path.write_bytes(_wordperfect(b"\x00" * 64))
    assert sniff(path, path.read_bytes()).mime_type == "application/vnd.wordperfect"
    exhibit = ingest(matter, path)
    assert exhibit.kind == "document"
    assert exhibit.status == Exhibit.Status.FAILED
    assert "could not be converted to PDF" in exhibit.reason


def test_other_compound_and_zip_files_are_still_rejected_with_the_reason(matter, tmp_path, ingest):
    # Presentations (spreadsheets are accepted now: test_spreadsheets.py).
    ole = tmp_path / "deck.ppt"
    ole.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
                    + "PowerPoint Document".encode("utf-16-le") * 4)
    spreadsheet = tmp_path / "deck.odp"
    with zipfile.ZipFile(spreadsheet, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.presentation")
        package.writestr("content.xml", "<office:document-content/>")
    for path in (ole, spreadsheet):
        exhibit = ingest(matter, path)
        assert exhibit.status == Exhibit.Status.REJECTED
        assert "WordPerfect (WPD)" in exhibit.reason  # names what is accepted
