"""Produced stamps that every viewer shows, endorsements in any script, and lean, linked combined PDFs."""

import io
import subprocess
import zipfile

import pymupdf
import pytest

from matters.models import Production
from matters.productions.bates.check import dark_share
from matters.productions.delivery import production_files
from matters.productions.reservation import production_create
from matters.productions.stamping import production_run
from tests.support.stamps import visual_hit

pytestmark = pytest.mark.django_db
BODY = "This lease is made between Smith Holdings and Jones Retail for the premises at 12 Main Street."


def letter(tmp_path, name: str, pages: int = 1, rotation: int = 0) -> pymupdf.Document:
    doc = pymupdf.open()
    for number in range(pages):
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 100), f"{BODY} Page {number + 1} of {name}.", fontsize=9)
        page.set_rotation(rotation)
    return doc


def save(doc: pymupdf.Document, tmp_path, name: str):
    path = tmp_path / name
    doc.save(path)
    return path


def produce(matter, attorney, exhibits, **options):
    production = production_create(matter=matter, exhibits=exhibits, prefix="SMITH", created_by=attorney,
                                   enqueue=False, with_index=False, **options)
    return production_run(production_id=production.pk)


def assert_stamp_shows(page: pymupdf.Page, text: str) -> None:
    rect, direction = visual_hit(page, text)
    assert (round(direction.x, 3), round(direction.y, 3)) == (1, 0)  # upright on the displayed page
    assert dark_share(page, rect) > 0.05, f"{text} is covered on the rendered page"


def white_text_field(page: pymupdf.Page, name: str = "Reviewer", value: str = "") -> None:
    widget = pymupdf.Widget()
    widget.field_type = pymupdf.PDF_WIDGET_TYPE_TEXT
    widget.field_name, widget.field_value = name, value
    widget.rect = pymupdf.Rect(300, 700, 612, 792)
    widget.fill_color, widget.border_color = (1, 1, 1), (1, 1, 1)
    widget.field_flags = pymupdf.PDF_FIELD_IS_READ_ONLY
    page.add_widget(widget)


def white_square(page: pymupdf.Page) -> None:
    annot = page.add_rect_annot(pymupdf.Rect(300, 700, 612, 792))
    annot.set_colors(stroke=(1, 1, 1), fill=(1, 1, 1))
    annot.update()


@pytest.mark.parametrize("cover", [white_text_field, white_square])
def test_stamp_under_a_white_field_or_annotation_shows_in_pdf_and_images(matter, attorney, ingest, tmp_path, cover):
    doc = letter(tmp_path, "the lease")
    cover(doc[0])
    exhibit = ingest(matter, save(doc, tmp_path, "lease.pdf"))
    production = produce(matter, attorney, [exhibit], confidentiality={exhibit.pk: "CONFIDENTIAL"},
                         with_images=True)
    assert production.status == Production.Status.DONE, production.reason
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        assert not list(pdf[0].annots()) and not list(pdf[0].widgets()) and not pdf.is_form_pdf
        assert_stamp_shows(pdf[0], "SMITH000001")
        assert_stamp_shows(pdf[0], "CONFIDENTIAL")
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        image = volume.read(f"{production.volume}/IMAGES/SMITH000001.tif")
    with pymupdf.open("tif", image) as tiff, pymupdf.open("pdf", tiff.convert_to_pdf()) as page_image:
        page = page_image[0]
        corner = pymupdf.Rect(page.rect.x1 * 0.75, page.rect.y1 * 0.94, page.rect.x1, page.rect.y1)
        assert dark_share(page, corner) > 0.01  # the number is in the TIFF image too


def test_a_stamp_hidden_by_the_page_itself_fails_the_production_naming_the_page(matter, attorney, ingest, tmp_path):
    doc = letter(tmp_path, "the memo", pages=2)
    hidden = doc.add_ocg("Draft notes", on=False)
    page = doc[1]
    page.insert_text((72, 200), "notes", oc=hidden)
    # Marked content for a hidden layer left open at the end of the page's content: everything drawn after it,
    # the stamp included, is hidden with the layer.
    tag = next(line for line in page.read_contents().decode("latin-1").splitlines() if line.endswith("BDC"))
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, f"{tag}\n".encode("latin-1"))
    contents = page.get_contents() + [xref]
    doc.xref_set_key(page.xref, "Contents", "[" + " ".join(f"{x} 0 R" for x in contents) + "]")
    exhibit = ingest(matter, save(doc, tmp_path, "memo.pdf"))
    production = produce(matter, attorney, [exhibit])
    assert production.status == Production.Status.FAILED
    assert "the stamp of SMITH000002 (page 2 of Exhibit 1) does not show" in production.reason
    assert not production_files(production)["pdf"].exists()


@pytest.mark.parametrize("designation, rotation", [
    ("機密 — 弁護士限り", 90), ("기밀 문서", 0), ("КОНФИДЕНЦИАЛЬНО", 270), ("ΕΜΠΙΣΤΕΥΤΙΚΟ", 180),
])
def test_endorsement_in_any_script_is_stamped_upright_with_a_subset_font(matter, attorney, ingest, tmp_path,
                                                                         designation, rotation):
    exhibit = ingest(matter, save(letter(tmp_path, "the contract", pages=2, rotation=rotation), tmp_path, "c.pdf"))
    latin = ingest(matter, save(letter(tmp_path, "the side letter", pages=2, rotation=rotation), tmp_path, "s.pdf"))
    production = produce(matter, attorney, [exhibit, latin], confidentiality={exhibit.pk: designation,
                                                                              latin.pk: "CONFIDENTIAL"})
    assert production.status == Production.Status.DONE, production.reason
    path = production_files(production)["pdf"]
    with pymupdf.open(path) as pdf:
        for page in (pdf[0], pdf[1]):
            assert_stamp_shows(page, designation)
        assert_stamp_shows(pdf[2], "CONFIDENTIAL")
    assert path.stat().st_size < 150_000  # the glyphs used, not the 3.5 MB font


def with_embedded_font(tmp_path, name: str) -> pymupdf.Document:
    doc = letter(tmp_path, name)
    page = doc[0]
    page.insert_font(fontname="DejaVu", fontfile="/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    page.insert_text((72, 300), f"Signed for {name} with the firm's font.", fontname="DejaVu", fontsize=11)
    return doc


def test_a_font_two_documents_embed_is_kept_once(matter, attorney, ingest, tmp_path):
    first = save(with_embedded_font(tmp_path, "Smith"), tmp_path, "a.pdf")
    second = save(with_embedded_font(tmp_path, "Jones"), tmp_path, "b.pdf")
    exhibits = [ingest(matter, first), ingest(matter, second)]
    production = produce(matter, attorney, exhibits)
    size = production_files(production)["pdf"].stat().st_size
    one = len(pymupdf.open(first).tobytes(garbage=2, deflate=True))
    assert one > 300_000  # the whole font is embedded in each
    assert size < one * 1.2, (size, one)  # not twice


def linked_documents(tmp_path):
    """``a.pdf``: a link to a named destination on its page 3, and a link to page 2 of ``Other Letter.pdf``."""
    doc = letter(tmp_path, "the agreement", pages=3)
    names = doc.get_new_xref()
    doc.update_object(names, f"<</Names [(schedule) [{doc.page_xref(2)} 0 R /XYZ 0 700 0]]>>")
    doc.xref_set_key(doc.pdf_catalog(), "Names", f"<</Dests {names} 0 R>>")
    annots = []
    for rect, action in (("72 600 200 620", "<</S/GoTo/D(schedule)>>"),
                         ("72 500 200 520", "<</S/GoToR/F(Other Letter.pdf)/D[1 /Fit]>>")):
        xref = doc.get_new_xref()
        doc.update_object(xref, f"<</Type/Annot/Subtype/Link/Rect[{rect}]/Border[0 0 0]/A{action}>>")
        annots.append(f"{xref} 0 R")
    doc.xref_set_key(doc.page_xref(0), "Annots", "[" + " ".join(annots) + "]")
    return save(doc, tmp_path, "a.pdf"), save(letter(tmp_path, "the other letter", pages=2), tmp_path, "b.pdf")


@pytest.mark.parametrize("cover_sheets", [Production.CoverSheets.NONE, Production.CoverSheets.NUMBERED])
def test_links_to_named_destinations_and_to_other_documents_reach_their_stamped_pages(
        matter, attorney, ingest, tmp_path, cover_sheets):
    a, b = linked_documents(tmp_path)
    exhibits = [ingest(matter, a, name="Agreement.pdf"), ingest(matter, b, name="Other Letter.pdf")]
    production = produce(matter, attorney, exhibits, cover_sheets=cover_sheets)
    assert production.status == Production.Status.DONE, production.reason
    shift = 1 if cover_sheets == Production.CoverSheets.NUMBERED else 0
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        links = pdf[shift].get_links()
        targets = sorted((link["kind"], link["page"]) for link in links)
        # The agreement's page 3, and page 2 of the other letter, as stamped in the combined PDF.
        assert targets == [(pymupdf.LINK_GOTO, 2 + shift), (pymupdf.LINK_GOTO, 3 + 2 * shift + 1)]
        assert pdf[2 + shift].search_for(f"SMITH{3 + shift:06d}")
        assert pdf[3 + 2 * shift + 1].search_for(f"SMITH{5 + 2 * shift:06d}")
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        native = volume.read(f"{production.volume}/NATIVES/SMITH000001.pdf")
    with pymupdf.open("pdf", io.BytesIO(native)) as doc:
        other = next(link for link in doc[shift].get_links() if link["kind"] == pymupdf.LINK_GOTOR)
        assert (other["file"], other["page"]) == (f"SMITH{4 + shift:06d}.pdf", 1 + shift)



def test_unnumbered_slip_sheets_share_one_font_and_the_combined_pdf_passes_qpdf(matter, attorney, ingest, tmp_path):
    paths = [save(letter(tmp_path, name, pages=2), tmp_path, f"{name}.pdf") for name in ("a", "b", "c")]
    exhibits = [ingest(matter, path) for path in paths]
    production = produce(matter, attorney, exhibits, cover_sheets=Production.CoverSheets.UNNUMBERED)
    assert production.status == Production.Status.DONE, production.reason
    path = production_files(production)["pdf"]
    with pymupdf.open(path) as pdf:
        assert pdf.page_count == 9
        sheets = [pdf[n] for n in (0, 3, 6)]
        assert [sheet.get_text().strip() for sheet in sheets] == [f"EXHIBIT {e.label}" for e in exhibits]
        assert len({font[0] for sheet in sheets for font in sheet.get_fonts()}) == 1  # one font object for all
        assert [pdf[n].get_text().split()[-1] for n in (1, 2, 4, 5, 7, 8)] == [f"SMITH{n:06d}" for n in range(1, 7)]
    check = subprocess.run(["qpdf", "--check", str(path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr

def signed_forms(tmp_path) -> list:
    paths = []
    for name, value in (("a.pdf", "Alice Smith, tenant"), ("b.pdf", "Bob Jones, landlord")):
        doc = letter(tmp_path, name)
        widget = pymupdf.Widget()
        widget.field_type, widget.field_name, widget.field_value = pymupdf.PDF_WIDGET_TYPE_TEXT, "Signatory", value
        widget.rect = pymupdf.Rect(72, 300, 400, 330)
        doc[0].add_widget(widget)
        paths.append(save(doc, tmp_path, name))
    return paths


def test_same_named_form_fields_of_two_documents_keep_their_own_values(matter, attorney, ingest, tmp_path):
    paths = signed_forms(tmp_path)
    production = produce(matter, attorney, [ingest(matter, p) for p in paths])
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        assert not pdf.is_form_pdf
        assert "Alice Smith, tenant" in pdf[0].get_text() and "Bob Jones" not in pdf[0].get_text()
        assert "Bob Jones, landlord" in pdf[1].get_text() and "Alice" not in pdf[1].get_text()


def test_bates_suffix_in_another_script_is_stamped_and_written_to_the_load_files(matter, attorney, ingest, tmp_path):
    exhibit = ingest(matter, save(letter(tmp_path, "the contract", pages=2, rotation=90), tmp_path, "c.pdf"))
    production = produce(matter, attorney, [exhibit], suffix=".機密", with_images=True)
    assert production.status == Production.Status.DONE, production.reason
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        assert_stamp_shows(pdf[1], "SMITH000002.機密")
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        opt = volume.read(f"{production.volume}/DATA/{production.volume}.opt").decode("utf-8-sig")
        assert opt.startswith("SMITH000001.機密,")
        assert f"{production.volume}/IMAGES/SMITH000002.機密.tif" in volume.namelist()


def test_kept_form_fields_of_two_documents_are_neither_renamed_nor_merged(matter, attorney, ingest, tmp_path):
    exhibits = [ingest(matter, p) for p in signed_forms(tmp_path)]
    production = produce(matter, attorney, exhibits, keep_forms=True)
    assert production.status == Production.Status.DONE, production.reason
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        fields = [(page.number, w.field_name, w.field_value) for page in pdf for w in page.widgets()]
    assert fields == [(0, "SMITH000001.Signatory", "Alice Smith, tenant"),
                      (1, "SMITH000002.Signatory", "Bob Jones, landlord")]


def test_a_kept_field_over_the_stamp_fails_the_production_naming_the_page(matter, attorney, ingest, tmp_path):
    doc = letter(tmp_path, "the form", pages=2)
    white_text_field(doc[1], value="")
    exhibit = ingest(matter, save(doc, tmp_path, "form.pdf"))
    production = produce(matter, attorney, [exhibit], keep_forms=True)
    assert production.status == Production.Status.FAILED
    assert "the stamp of SMITH000002 (page 2 of Exhibit 1) does not show" in production.reason
