"""Volumes as a hostile or sloppy vendor delivers them: every fault ends as a report line or a failed status the
attorney sees, never a silent pass, a wrong "done" or a server error."""

import hashlib
import io
import zipfile

import pymupdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from matters.incoming.archive import UnsafeArchive
from matters.incoming.services import import_production
from matters.models import IncomingProduction
from matters.storage import blob_path

pytestmark = pytest.mark.django_db


def zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def bad_crc(data: bytes) -> bytes:
    damaged = bytearray(data)
    damaged[damaged.find(b"BEGBATES")] = ord("X")  # stored, not compressed: the CRC no longer matches
    return bytes(damaged)


def encrypted(data: bytes) -> bytes:
    flagged = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # general-purpose flag, bit 0
        flagged[flagged.find(signature) + offset] |= 1
    return bytes(flagged)


@pytest.mark.parametrize("damage, reason", [(bad_crc, "Bad CRC-32"), (encrypted, "password required")])
def test_a_zip_whose_members_cannot_be_read_fails_with_its_reason_not_a_server_error(client, attorney, matter,
                                                                                   damage, reason):
    data = damage(zip_bytes({"VOL001/DATA/VOL001.dat": b"BEGBATES\r\nDEF000001\r\n"}))
    client.force_login(attorney)
    response = client.post(reverse("matters:incoming_upload", args=[matter.pk]),
                           {"origin": "opposing_party", "files": SimpleUploadedFile("VOL001.zip", data)})
    incoming = IncomingProduction.objects.get()
    assert response.status_code == 302
    assert incoming.status == "failed" and "cannot be read" in incoming.reason and reason in incoming.reason
    assert blob_path(incoming.sha256).read_bytes() == data  # the upload itself is kept byte for byte
    assert hashlib.sha256(data).hexdigest() == incoming.sha256


def test_a_damaged_zip_fails_the_command_line_import_with_its_reason(matter, attorney, tmp_path):
    path = tmp_path / "VOL001.zip"
    path.write_bytes(bad_crc(zip_bytes({"VOL001/DATA/VOL001.dat": b"BEGBATES\r\nDEF000001\r\n"})))
    with pytest.raises(UnsafeArchive, match="cannot be read"):
        import_production(matter=matter, paths=[path], origin="opposing_party", user=attorney)
    assert IncomingProduction.objects.get().status == "failed"


Q, S = "\u00fe", "\u0014"


def page_pdf(text: str, pages: int = 1) -> bytes:
    doc = pymupdf.open()
    for index in range(pages):
        doc.new_page(width=612, height=792).insert_text(
            (72, 100), f"{text} page {index + 1}, produced in Smith v. Jones.", fontsize=12)
    return doc.tobytes()


def concordance(rows: list[list[str]], delimiter: str = S) -> str:
    return "".join(delimiter.join(f"{Q}{value}{Q}" for value in row) + "\r\n" for row in rows)


def volume(root, dat: str, opt: list[str] | None = None, files: dict[str, bytes] | None = None,
           starts: list[str] | None = None):
    """A volume folder: DATA/VOL001.dat, DATA/VOL001.opt naming IMAGES/<number>.pdf for each of ``opt`` (one
    page each; a document starts at each of ``starts``, by default at the first), and ``files`` at their
    paths."""
    folder = root / "VOL001"
    (folder / "DATA").mkdir(parents=True)
    (folder / "DATA" / "VOL001.dat").write_bytes(dat.encode("utf-8"))
    lines = []
    for number in opt or []:
        name = number.replace(" ", "").upper()
        start = number in starts if starts is not None else not lines
        lines.append(f"{number},VOL001,IMAGES\\{name}.pdf,{'Y' if start else ''},,,\r\n")
        (folder / "IMAGES").mkdir(exist_ok=True)
        (folder / "IMAGES" / f"{name}.pdf").write_bytes(page_pdf(f"Image {name}"))
    if opt is not None:
        (folder / "DATA" / "VOL001.opt").write_text("".join(lines))
    for relative, data in (files or {}).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(data)
    return folder


def imported(matter, attorney, folder) -> IncomingProduction:
    return import_production(matter=matter, paths=[folder], origin="opposing_party", user=attorney)


def numbers_of(incoming) -> list[str]:
    return sorted(incoming.bates_pages.values_list("bates", flat=True))


@pytest.mark.parametrize("dat_number, opt_number", [("DEF 000001", "DEF000001"), ("def000001", "DEF000001"),
                                                    ("DEF-000001", "DEF 000001"), ("DEF00001", "DEF000001")])
def test_one_number_written_two_ways_in_the_dat_and_the_opt_finds_its_image(matter, attorney, tmp_path,
                                                                          dat_number, opt_number):
    dat = concordance([["BEGBATES", "ENDBATES"], [dat_number, dat_number]])
    incoming = imported(matter, attorney, volume(tmp_path, dat, [opt_number]))
    assert incoming.status == "done" and incoming.report == []
    assert len(numbers_of(incoming)) == 1


def test_a_repeated_dat_row_gives_no_number_to_two_pages(matter, attorney, tmp_path):
    dat = concordance([["BEGBATES", "ENDBATES"], ["DEF000001", "DEF000002"], ["DEF000001", "DEF000002"],
                       ["DEF000003", "DEF000003"]])
    incoming = imported(matter, attorney, volume(tmp_path, dat, ["DEF000001", "DEF000002", "DEF000003"],
                                                 starts=["DEF000001", "DEF000003"]))
    assert numbers_of(incoming) == ["DEF000001", "DEF000002", "DEF000003"]
    assert ("DEF000001: DEF000001 (page 1), DEF000002 (page 2) were already given to a page of an earlier document "
            "of this volume; the page was left without that number.") in incoming.report


def test_different_digit_counts_in_one_volume_are_reported(matter, attorney, tmp_path):
    dat = concordance([["BEGBATES", "ENDBATES"], ["DEF00001", "DEF00001"], ["DEF000002", "DEF000002"]])
    incoming = imported(matter, attorney, volume(tmp_path, dat, ["DEF00001", "DEF000002"],
                                                 starts=["DEF00001", "DEF000002"]))
    assert numbers_of(incoming) == ["DEF000002", "DEF00001"]
    assert incoming.report == ["Numbers of prefix DEF are written with 5 and 6 digits (DEF00001, DEF000002): read "
                               "as one sequence and kept as written; a cite must use the digits of the page it "
                               "means."]


def test_a_number_an_earlier_volume_wrote_another_way_is_an_overlap(matter, attorney, tmp_path):
    first = concordance([["BEGBATES", "ENDBATES"], ["DEF000001", "DEF000001"]])
    imported(matter, attorney, volume(tmp_path / "a", first, ["DEF000001"]))
    second = concordance([["BEGBATES", "ENDBATES"], ["DEF 00001", "DEF 00001"]])
    incoming = imported(matter, attorney, volume(tmp_path / "b", second, ["DEF00001"]))
    [line] = incoming.report
    assert line.startswith("DEF000001 / DEF00001 is a number of both the production received")


def test_pages_the_opt_numbers_outside_every_dat_record_are_reported(matter, attorney, tmp_path):
    dat = concordance([["BEGBATES", "ENDBATES"], ["DEF000001", "DEF000002"]])
    incoming = imported(matter, attorney, volume(tmp_path, dat, ["DEF000001", "DEF000002", "DEF000003"]))
    assert numbers_of(incoming) == ["DEF000001", "DEF000002"]
    assert incoming.report == ["1 page(s) the OPT numbers are in no DAT record's Bates range (DEF000003); they were "
                               "not imported. Ask the producing party for the DAT rows of those documents."]


def test_a_native_or_text_file_the_dat_names_but_the_volume_lacks_is_reported(matter, attorney, tmp_path):
    dat = concordance([["BEGBATES", "ENDBATES", "NATIVEPATH", "TEXTPATH"],
                       ["DEF000001", "DEF000001", "NATIVES\\Budget.xlsx", "TEXT\\DEF000001.txt"]])
    incoming = imported(matter, attorney, volume(tmp_path, dat, ["DEF000001"]))
    assert numbers_of(incoming) == ["DEF000001"]
    assert incoming.report == [
        "DEF000001: the native file NATIVES\\Budget.xlsx named in the DAT is missing from the volume.",
        "DEF000001: the text file TEXT\\DEF000001.txt named in the DAT is missing from the volume; the text was "
        "taken from the pages themselves."]


def test_a_second_dat_or_image_load_file_is_reported_unread(matter, attorney, tmp_path):
    dat = concordance([["BEGBATES", "ENDBATES"], ["DEF000001", "DEF000001"]])
    second = concordance([["BEGBATES", "ENDBATES"], ["DEF000002", "DEF000002"]]).encode()
    incoming = imported(matter, attorney, volume(tmp_path, dat, ["DEF000001", "DEF000002"], files={
        "DATA/VOL001_ATTACH.dat": second, "DATA/VOL001.lfp": b"IM,DEF000001,D,0,@VOL001;IMAGES;DEF000001.pdf;2,0\r\n"}))
    assert numbers_of(incoming) == ["DEF000001"]
    assert incoming.report[:2] == [
        "VOL001_ATTACH.dat: the volume holds 2 DAT load files and LawDesk reads one, VOL001.dat; what "
        "VOL001_ATTACH.dat lists was not imported. Ask the producing party for one load file per volume, or upload "
        "each as its own volume.",
        "VOL001.lfp: the volume holds 2 image load files and LawDesk reads one, VOL001.opt; what VOL001.lfp lists "
        "was not imported. Ask the producing party for one load file per volume, or upload each as its own volume."]
    assert "in no DAT record's Bates range (DEF000002)" in incoming.report[2]


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252", "utf-16"])
def test_a_dat_delimited_by_the_pilcrow_is_read(matter, attorney, tmp_path, encoding):
    dat = concordance([["BEGBATES", "ENDBATES", "TITLE"], ["DEF000001", "DEF000001", "Café lease®page two"]],
                      delimiter="\u00b6")
    folder = volume(tmp_path, "", ["DEF000001"])
    (folder / "DATA" / "VOL001.dat").write_bytes(dat.encode(encoding))
    incoming = imported(matter, attorney, folder)
    assert incoming.status == "done" and incoming.report == [] and numbers_of(incoming) == ["DEF000001"]
    assert matter.exhibits.get().title == "Café lease\npage two"


@pytest.mark.parametrize("begin, end", [("Beg-Bates", "End.Bates"), (" BEG_BATES ", "END BATES#"),
                                        ("Beginning Bates", "Ending Bates"), ("PRODBEG", "ProdEnd")])
def test_field_names_in_other_cases_or_with_spaces_and_punctuation_are_matched(matter, attorney, tmp_path, begin,
                                                                             end):
    dat = concordance([[begin, end, "Native File"], ["DEF000001", "DEF000002", "NATIVES\\A.pdf"]])
    incoming = imported(matter, attorney, volume(tmp_path, dat, files={"NATIVES/A.pdf": page_pdf("Letter", 2)}))
    assert incoming.field_map == {"begbates": begin.strip(), "endbates": end, "nativepath": "Native File"}
    assert incoming.status == "done" and numbers_of(incoming) == ["DEF000001", "DEF000002"]


LEASE = "The tenant shall pay monthly rent to the landlord before the fifth day of every calendar month"
INVOICE = "Invoice for plumbing repairs performed at the warehouse including parts labour and travel charges"


def test_text_that_belongs_to_another_page_is_reported_and_the_page_keeps_its_own(matter, attorney, tmp_path):
    dat = concordance([["BEGBATES", "ENDBATES", "NATIVEPATH", "TEXTPATH"],
                       ["DEF000001", "DEF000002", "NATIVES\\A.pdf", "TEXT\\A.txt"]])
    native = pymupdf.open()
    for text in (LEASE, INVOICE):
        native.new_page().insert_text((72, 100), text, fontsize=9)
    swapped = f"{INVOICE}\f{LEASE}".encode()  # the vendor's text pages in the wrong order
    folder = volume(tmp_path, dat, files={"NATIVES/A.pdf": native.tobytes(), "TEXT/A.txt": swapped})
    incoming = imported(matter, attorney, folder)
    assert incoming.report == [
        "DEF000001, page 1: the text file's page 1 does not read like this page (8% of its words); it reads like "
        "the text file's page 2. The page kept its own text.",
        "DEF000001, page 2: the text file's page 2 does not read like this page (8% of its words); it reads like "
        "the text file's page 1. The page kept its own text."]
    first, second = matter.exhibits.get().pages.order_by("number")
    assert first.text.startswith("The tenant") and second.text.startswith("Invoice")


def test_a_text_file_that_ends_with_a_form_feed_keeps_its_pages(matter, attorney, tmp_path):
    dat = concordance([["BEGBATES", "ENDBATES", "NATIVEPATH", "TEXTPATH"],
                       ["DEF000001", "DEF000002", "NATIVES\\A.pdf", "TEXT\\A.txt"]])
    native = pymupdf.open()
    for text in (LEASE, INVOICE):
        native.new_page().insert_text((72, 100), text.upper(), fontsize=9)
    folder = volume(tmp_path, dat, files={"NATIVES/A.pdf": native.tobytes(),
                                          "TEXT/A.txt": f"{LEASE}\f{INVOICE}\f".encode()})
    incoming = imported(matter, attorney, folder)
    assert incoming.report == []
    first, second = matter.exhibits.get().pages.order_by("number")
    assert (first.text, second.text, first.source) == (LEASE, INVOICE, "load_file")


def test_dat_records_the_opt_document_breaks_split_or_join_are_reported(matter, attorney, tmp_path):
    dat = concordance([["BEGBATES", "ENDBATES"], ["DEF000001", "DEF000003"], ["DEF000004", "DEF000004"],
                       ["DEF000005", "DEF000005"]])
    pages = [f"DEF00000{n}" for n in range(1, 6)]
    folder = volume(tmp_path, dat, pages, starts=["DEF000001", "DEF000003", "DEF000004"])
    incoming = imported(matter, attorney, folder)
    assert numbers_of(incoming) == pages
    assert incoming.report == [
        "DEF000001–DEF000003: the OPT starts another document at DEF000003; this DAT record may hold two or more "
        "documents joined.",
        "DEF000005–DEF000005: the OPT starts no document at DEF000005; this DAT record may be the rest of the "
        "document before it."]


def test_a_bates_number_too_long_to_keep_skips_its_row_with_a_reason(matter, attorney, tmp_path):
    long = "A" * 90 + "000001"
    dat = concordance([["BEGBATES", "ENDBATES", "NATIVEPATH"], [long, long, "NATIVES\\A.pdf"],
                       ["DEF000002", "DEF000002", "NATIVES\\B.pdf"]])
    incoming = imported(matter, attorney, volume(tmp_path, dat, files={"NATIVES/A.pdf": page_pdf("Letter"),
                                                                       "NATIVES/B.pdf": page_pdf("Memo")}))
    assert incoming.status == "done" and numbers_of(incoming) == ["DEF000002"]
    assert incoming.report == [f"DAT row {[long, long]} has no usable Bates range (a begin number, and an end "
                               "number not before it, each with digits and at most 80 characters); skipped."]


@pytest.mark.parametrize("text", ["DEF000123", "def 000123", "DEF-000123", "DEF00123", "ABC000123.001", "A0B0001",
                                  "DEF1 000023", "ACME-DEF 00012A", " DEF000001 ", "123"])
def test_the_quick_key_of_a_number_is_the_key_of_its_parse(text):
    from matters.incoming.loadfiles import Bates, bates_key

    assert bates_key(text) == Bates.parse(text).key


def lfp_volume(tmp_path, offsets: list[int]):
    dat = concordance([["BEGBATES", "ENDBATES"], ["DEF000001", f"DEF00000{len(offsets)}"]])
    folder = volume(tmp_path, dat, files={"IMAGES/A.pdf": page_pdf("Image", 3)})
    (folder / "DATA" / "VOL001.lfp").write_text("".join(
        f"IM,DEF00000{n},{'D' if n == 1 else ''},{offset},@VOL001;IMAGES;A.pdf;2,0\r\n"
        for n, offset in enumerate(offsets, start=1)))
    return folder


@pytest.mark.parametrize("offsets", [[0, 1, 2], [1, 2, 3]])
def test_lfp_offsets_counted_from_zero_or_one_name_each_page_of_the_image(matter, attorney, tmp_path, offsets):
    incoming = imported(matter, attorney, lfp_volume(tmp_path, offsets))
    assert incoming.report == []
    named = incoming.bates_pages.order_by("bates").select_related("page")
    assert [(row.bates, row.page.text.split(",")[0]) for row in named] == [
        ("DEF000001", "Image page 1"), ("DEF000002", "Image page 2"), ("DEF000003", "Image page 3")]


def test_two_numbers_naming_one_image_page_are_reported(matter, attorney, tmp_path):
    incoming = imported(matter, attorney, lfp_volume(tmp_path, [1, 2, 2]))
    assert incoming.report[0] == ("DEF000003 and DEF000002 name the same page (2) of the image IMAGES\\A.pdf in the "
                                  "LFP; DEF000003 was skipped.")
    assert numbers_of(incoming) == ["DEF000001", "DEF000002"]


def test_a_disk_full_while_unpacking_is_said_as_such_not_as_a_member_conflict(client, attorney, matter,
                                                                            monkeypatch):
    import errno

    from matters.incoming import archive

    def full(path, mode="r", *args, **kwargs):
        if "w" in mode:
            raise OSError(errno.ENOSPC, "No space left on device")
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(archive, "open", full, raising=False)
    data = zip_bytes({"VOL001/DATA/VOL001.dat": b"BEGBATES\r\nDEF000001\r\n"})
    client.force_login(attorney)
    response = client.post(reverse("matters:incoming_upload", args=[matter.pk]),
                           {"origin": "opposing_party", "files": SimpleUploadedFile("VOL001.zip", data)})
    incoming = IncomingProduction.objects.get()
    assert response.status_code == 302 and incoming.status == "failed"
    assert "could not be unpacked on the server (No space left on device)" in incoming.reason
    assert blob_path(incoming.sha256).read_bytes() == data


def test_a_member_under_a_file_of_the_same_name_is_still_a_conflict(matter, attorney, tmp_path):
    path = tmp_path / "VOL001.zip"
    path.write_bytes(zip_bytes({"VOL001/DATA": b"a file", "VOL001/DATA/VOL001.dat": b"BEGBATES\r\n"}))
    with pytest.raises(UnsafeArchive, match="conflicts with another member"):
        import_production(matter=matter, paths=[path], origin="opposing_party", user=attorney)


@pytest.mark.parametrize("compression", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_a_bzip2_or_lzma_member_that_lies_about_its_size_is_stopped_at_the_limit_in_memory(tmp_path, compression):
    # The member declares 1,000 bytes, so neither the declared total nor the ratio refuses it, and inflates to
    # 64 MiB: zipfile would inflate a bzip2 or LZMA chunk whole in one read, before the written total is counted.
    import struct
    import tracemalloc

    from matters.incoming.archive import Limits, extract

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        archive.writestr("VOL001/NATIVES/zeros.bin", bytes(64 << 20))
    data = bytearray(buffer.getvalue())
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, local + 22, 1000)  # uncompressed size (APPNOTE 4.3.7)
    struct.pack_into("<I", data, central + 24, 1000)  # and in the central directory (APPNOTE 4.3.12)
    path = tmp_path / "bomb.zip"
    path.write_bytes(bytes(data))
    tracemalloc.start()
    try:
        with pytest.raises(UnsafeArchive, match="more than its headers declare"):
            extract(path, tmp_path / "out", Limits(max_members=10, max_total_bytes=4 << 20, max_ratio=1000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20  # the 4 MiB limit and a read's worth, never the 64 MiB the member holds
