"""Productions: Bates ranges reserved once and never reused, stamped PDFs and volumes as review platforms expect."""

import csv
import hashlib
import io
import json
import subprocess
import threading
import zipfile

import pymupdf
import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection

from matters import storage
from matters.models import BatesPage, Production
from matters.productions.bates.volume import QUOTE, SEPARATOR
from matters.productions.delivery import production_files
from matters.productions.reservation import AEO, production_create
from matters.productions.stamping import production_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_exhibits(matter, corpus, ingest):
    """A 17-page First Circuit filing and a 1-page Seventh Circuit order, ready."""
    return [ingest(matter, corpus("court/ca1_00117684624.pdf")), ingest(matter, corpus("court/ca7_3.pdf"))]


def produce(matter, exhibits, attorney, **options):
    production = production_create(matter=matter, exhibits=exhibits, prefix=options.pop("prefix", "SMITH"),
                                   created_by=attorney, enqueue=False, **options)
    return production_run(production_id=production.pk)


def test_numbers_run_through_the_documents_and_resolve_to_their_pages(matter, attorney, two_exhibits):
    first, second = two_exhibits
    production = produce(matter, two_exhibits, attorney, confidentiality={second.pk: AEO})
    assert production.status == Production.Status.DONE
    assert (production.first, production.last, production.page_count) == ("SMITH000001", "SMITH000018", 18)
    cite = BatesPage.objects.select_related("page").get(production__matter=matter, bates="SMITH000005")
    assert cite.page.exhibit_id == first.pk and cite.page.number == 5
    assert BatesPage.objects.get(bates="SMITH000018").page.exhibit_id == second.pk
    with pymupdf.open(production_files(production)["pdf"]) as pdf:
        assert pdf.page_count == 18 + 1  # the index page first
        assert pdf[0].search_for("SMITH000018")  # the index lists the ranges
        assert pdf[5].search_for("SMITH000005")  # the stamp is real, searchable text
        assert pdf[18].search_for("HIGHLY CONFIDENTIAL - ATTORNEYS' EYES ONLY")
        assert [entry[1:] for entry in pdf.get_toc()] == [
            [f"Exhibit 1 – {first.title}", 2], [f"Exhibit 2 – {second.title}", 19]]


def test_next_production_continues_and_overlaps_are_refused(matter, attorney, two_exhibits):
    produce(matter, two_exhibits[:1], attorney)
    second = produce(matter, two_exhibits[1:], attorney)
    assert second.first == "SMITH000018"
    with pytest.raises(ValidationError, match="already used by production"):
        production_create(matter=matter, exhibits=two_exhibits[1:], prefix="SMITH", start=10, created_by=attorney)
    other_prefix = produce(matter, two_exhibits[1:], attorney, prefix="JONES", digits=8)
    assert other_prefix.first == "JONES00000001"


def test_a_failed_production_voids_its_range_forever(matter, attorney, two_exhibits):
    doomed = production_create(matter=matter, exhibits=two_exhibits[1:], prefix="SMITH", created_by=attorney,
                               enqueue=False)
    storage.blob_path(two_exhibits[1].sha256).rename(storage.data_path("moved-away"))
    doomed = production_run(production_id=doomed.pk)
    assert doomed.status == Production.Status.FAILED and "could not be made" in doomed.reason
    assert not BatesPage.objects.filter(production=doomed).exists()
    assert matter.audit_entries.filter(action="production.void", detail__first="SMITH000001").exists()
    storage.data_path("moved-away").rename(storage.blob_path(two_exhibits[1].sha256))
    after = produce(matter, two_exhibits[1:], attorney)
    assert after.first == "SMITH000002"  # 000001 stays void


@pytest.mark.django_db(transaction=True)
def test_two_productions_started_at_once_get_disjoint_ranges(matter, attorney, two_exhibits):
    results, errors = [], []
    barrier = threading.Barrier(2)

    def start():
        try:
            barrier.wait()
            results.append(production_create(matter=matter, exhibits=two_exhibits, prefix="SMITH",
                                             created_by=attorney, enqueue=False))
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    ranges = sorted((p.first_number, p.last_number) for p in results)
    assert ranges == [(1, 18), (19, 36)]


def test_outputs_pass_qpdf_keep_originals_and_stay_small(matter, attorney, two_exhibits, corpus):
    production = produce(matter, two_exhibits, attorney, cover_sheets="numbered")
    pdf_path = production_files(production)["pdf"]
    check = subprocess.run(["qpdf", "--check", str(pdf_path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    inputs = sum(storage.blob_path(e.sha256).stat().st_size for e in two_exhibits)
    covers = pymupdf.open()
    for _ in two_exhibits:
        covers.new_page().insert_text((200, 400), "EXHIBIT 1", fontname="helv", fontsize=40)
    slip_bytes = len(covers.tobytes(garbage=3, deflate=True))
    assert pdf_path.stat().st_size <= 1.1 * (inputs + slip_bytes) + 4096  # the index page
    for exhibit, name in zip(two_exhibits, ["court/ca1_00117684624.pdf", "court/ca7_3.pdf"]):
        assert storage.blob_path(exhibit.sha256).read_bytes() == corpus(name).read_bytes()
    assert production.first == "SMITH000001" and BatesPage.objects.get(bates="SMITH000001").page is None  # cover


def test_volume_layout_load_files_and_images(matter, attorney, two_exhibits):
    production = produce(matter, two_exhibits, attorney, with_images=True,
                         confidentiality={two_exhibits[0].pk: "CONFIDENTIAL"})
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        names = set(volume.namelist())
        assert {"VOL001/NATIVES/SMITH000001.pdf", "VOL001/NATIVES/SMITH000018.pdf", "VOL001/TEXT/SMITH000001.txt",
                "VOL001/DATA/VOL001.dat", "VOL001/DATA/VOL001.opt", "VOL001/index.csv"} <= names
        assert sum(n.startswith("VOL001/IMAGES/") for n in names) == 18
        text = volume.read("VOL001/TEXT/SMITH000001.txt").decode("utf-8")
        assert text.startswith("[SMITH000001]\n") and "\f[SMITH000017]\n" in text
        dat = volume.read("VOL001/DATA/VOL001.dat").decode("utf-8").split("\r\n")
        header = [f.strip(QUOTE) for f in dat[0].split(SEPARATOR)]
        assert header == ["BEGBATES", "ENDBATES", "PAGECOUNT", "TITLE", "ORIGIN", "CUSTODIAN", "CONFIDENTIALITY",
                          "SHA256", "TEXTPATH", "NATIVEPATH", "BEGATTACH", "ENDATTACH", "PARENT_BATES",
                          "ATTACHMENT_COUNT", "FROM", "TO", "CC", "BCC", "SUBJECT", "DATESENT", "TIMESENT"]
        first_row = dict(zip(header, (f.strip(QUOTE) for f in dat[1].split(SEPARATOR))))
        assert (first_row["BEGBATES"], first_row["ENDBATES"], first_row["PAGECOUNT"]) == (
            "SMITH000001", "SMITH000017", "17")
        assert first_row["CONFIDENTIALITY"] == "CONFIDENTIAL" and first_row["SHA256"] == two_exhibits[0].sha256
        opt = volume.read("VOL001/DATA/VOL001.opt").decode("ascii").split("\r\n")
        assert opt[0] == "SMITH000001,VOL001,IMAGES\\SMITH000001.tif,Y,,,17"
        assert opt[1] == "SMITH000002,VOL001,IMAGES\\SMITH000002.tif,,,,"
        assert opt[17].startswith("SMITH000018,VOL001,IMAGES\\SMITH000018.tif,Y,,,1")
        from PIL import Image

        with Image.open(io.BytesIO(volume.read("VOL001/IMAGES/SMITH000002.tif"))) as image:
            # The First Circuit prints its ECF header in blue: a colour page, kept as colour.
            assert image.info["compression"] == "jpeg" and image.size == (2550, 3300)
        rows = list(csv.DictReader(io.StringIO(volume.read("VOL001/index.csv").decode("utf-8"))))
        assert [(r["label"], r["first_bates"], r["last_bates"], r["pages"]) for r in rows] == [
            ("1", "SMITH000001", "SMITH000017", "17"), ("2", "SMITH000018", "SMITH000018", "1")]
        native = pymupdf.open("pdf", volume.read("VOL001/NATIVES/SMITH000018.pdf"))
        assert native[0].search_for("SMITH000018")


def test_page_images_are_group4_in_black_and_white_and_jpeg_in_colour():
    from PIL import Image

    from matters.productions.bates.volume import tiff_bytes

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "A black-and-white letter.", fontsize=14)
    doc.new_page()
    plain, coloured = doc[0], doc[1]
    coloured.draw_rect(pymupdf.Rect(100, 100, 400, 400), color=(1, 0, 0), fill=(1, 0, 0))
    with Image.open(io.BytesIO(tiff_bytes(plain))) as image:
        assert image.info["compression"] == "group4" and image.mode == "1"
    with Image.open(io.BytesIO(tiff_bytes(coloured))) as image:
        assert image.info["compression"] == "jpeg" and image.mode == "RGB"


def test_bad_requests_are_refused_with_reasons(matter, attorney, two_exhibits):
    for options, message in [({"prefix": "1BAD"}, "letter followed"), ({"digits": 5}, "6 to 15"),
                             ({"start": 999_999, "digits": 6}, "do not fit in 6 digits")]:
        with pytest.raises(ValidationError, match=message):
            production_create(matter=matter, exhibits=two_exhibits, created_by=attorney,
                              **{"prefix": "SMITH", **options})


def test_bates_produce_command_prints_glossary_keys(matter, two_exhibits):
    out = io.StringIO()
    call_command("bates_produce", "--matter", str(matter.pk), "--prefix", "SMITH", "--cover-sheets", "numbered",
                 stdout=out)
    line = json.loads(out.getvalue())
    assert set(line) == {"production", "status", "prefix", "first", "last", "pages", "pdf", "zip"}
    assert (line["status"], line["first"], line["last"], line["pages"]) == ("done", "SMITH000001", "SMITH000020", 20)
    assert hashlib.sha256(open(line["pdf"], "rb").read()).hexdigest() == Production.objects.get().pdf_sha256


def test_prefixes_cannot_make_one_number_twice(matter, attorney, two_exhibits):
    with pytest.raises(ValidationError, match="does not end in a digit"):
        production_create(matter=matter, exhibits=two_exhibits[1:], prefix="Q0", created_by=attorney)
    produce(matter, two_exhibits[1:], attorney, prefix="ABC")
    with pytest.raises(ValidationError, match="already used by production"):
        production_create(matter=matter, exhibits=two_exhibits[1:], prefix="abc", start=1, created_by=attorney)
    assert production_create(matter=matter, exhibits=two_exhibits[1:], prefix="abc", created_by=attorney,
                             enqueue=False).first == "abc000002"


def test_designation_the_stamp_font_cannot_show_is_refused(matter, attorney, two_exhibits):
    with pytest.raises(ValidationError, match=r"no stamp font can show \(\U0001d11e\)"):
        production_create(matter=matter, exhibits=two_exhibits[1:], prefix="SMITH", created_by=attorney,
                          confidentiality={two_exhibits[1].pk: "机密 \U0001d11e"})


def test_numbered_cover_sheets_are_each_documents_first_page_in_the_volume(matter, attorney, two_exhibits):
    production = produce(matter, two_exhibits, attorney, cover_sheets="numbered", with_images=True)
    with zipfile.ZipFile(production_files(production)["zip"]) as volume:
        dat = volume.read(f"{production.volume}/DATA/{production.volume}.dat").decode("utf-8").split("\r\n")
        rows = [[f.strip(QUOTE) for f in line.split(SEPARATOR)] for line in dat[1:3]]
        assert [(r[0], r[1], r[2]) for r in rows] == [("SMITH000001", "SMITH000018", "18"),
                                                      ("SMITH000019", "SMITH000020", "2")]
        opt = volume.read(f"{production.volume}/DATA/{production.volume}.opt").decode("ascii").split("\r\n")
        assert opt[0].startswith("SMITH000001,") and ",Y,,,18" in opt[0]
        names = set(volume.namelist())
        assert f"{production.volume}/NATIVES/SMITH000001.pdf" in names
        assert f"{production.volume}/IMAGES/SMITH000001.tif" in names
        text = volume.read(f"{production.volume}/TEXT/SMITH000001.txt").decode("utf-8")
        assert text.startswith("[SMITH000001]\nEXHIBIT 1\n\f[SMITH000002]\n")


def test_designation_and_number_never_overprint_on_a_narrow_page():
    from matters.productions.bates.stamp import StampSpec, stamp_page

    doc = pymupdf.open()
    doc.new_page(width=300, height=400)
    stamp_page(doc[0], "TINY000001", StampSpec.from_position("bottom-center"), AEO)
    number, designation = doc[0].search_for("TINY000001")[0], doc[0].search_for("ATTORNEYS")[0]
    assert not number.intersects(designation)
    assert doc[0].rect.contains(doc[0].search_for("HIGHLY")[0])


def test_successive_productions_get_their_own_volume_names(matter, attorney, two_exhibits):
    first = produce(matter, two_exhibits[:1], attorney)
    second = produce(matter, two_exhibits[1:], attorney)
    assert (first.volume, second.volume) == ("VOL001", "VOL002")
