"""The objects of a plain PDF are read in one pass over the file's bytes, and a file that pass cannot read the way
MuPDF reads it (encrypted, objects packed in object streams, objects not where its cross-reference says) is read
object by object: either way every string of every object is looked in, and a finding names its object."""

import re

import pymupdf

from matters.productions.bates.leaks import Scanner, Secrets

NAME = "Margaret Holloway"


def document_with_the_name(where: str) -> pymupdf.Document:
    """A one-page PDF whose page says nothing of NAME, which is held in ``where``: an object of its own (a
    dictionary with a literal string), a UTF-16 hex string in another, the information dictionary, or nowhere."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 200), "Closing paragraph with nothing privileged in it.", fontsize=11)
    if where == "object":
        xref = doc.get_new_xref()
        doc.update_object(xref, f"<</Note ({NAME}) /Other [1 2 (x)]>>")
        doc.xref_set_key(doc.pdf_catalog(), "LDNote", f"{xref} 0 R")
    elif where == "hex":
        xref = doc.get_new_xref()
        doc.update_object(xref, f"<</Note <FEFF{NAME.encode('utf-16-be').hex().upper()}>>>")
        doc.xref_set_key(doc.pdf_catalog(), "LDNote", f"{xref} 0 R")
    elif where == "info":
        doc.set_metadata({"title": NAME})
    return doc


def scanned(data: bytes) -> Scanner:
    secrets = Secrets()
    secrets.add(NAME, "redacted")
    scanner = Scanner(secrets)
    scanner.scan_pdf(data, "NATIVES/SMITH000001.pdf")
    return scanner


def objects_holding_the_name(data: bytes) -> set[str]:
    with pymupdf.open("pdf", data) as doc:
        return {f"NATIVES/SMITH000001.pdf, object {xref}" for xref in range(1, doc.xref_length())
                if "Margaret" in doc.xref_object(xref) or "4D00610072" in doc.xref_object(xref).upper()}


def test_a_clean_file_is_read_in_bulk():
    scanner = scanned(document_with_the_name("nowhere").tobytes(garbage=1))
    assert scanner.objects_in_bulk > 0 and scanner.findings == []


def test_a_string_in_any_object_is_found_and_named_by_its_object():
    for where in ("object", "hex", "info"):
        data = document_with_the_name(where).tobytes(garbage=1)
        scanner = scanned(data)
        assert {f.where for f in scanner.findings} == objects_holding_the_name(data) != set(), where
        assert {f.text for f in scanner.findings} == {NAME.lower()}


def test_objects_packed_in_object_streams_are_read_one_by_one():
    data = document_with_the_name("object").tobytes(garbage=1, use_objstms=1, deflate=True)
    with pymupdf.open("pdf", data) as doc:
        assert NAME.encode() not in data  # only in the compressed object stream
        assert any("/ObjStm" in doc.xref_object(xref) for xref in range(1, doc.xref_length()))
    scanner = scanned(data)
    assert {f.text for f in scanner.findings} == {NAME.lower()}


def test_an_encrypted_file_is_read_through_mupdf():
    # Owner password only: it opens without one, and its strings in the file's bytes are ciphertext.
    data = document_with_the_name("info").tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_128, owner_pw="owner",
                                                  permissions=pymupdf.PDF_PERM_PRINT)
    assert NAME.encode() not in data
    scanner = scanned(data)
    assert scanner.objects_in_bulk == 0
    assert {f.text for f in scanner.findings} == {NAME.lower()}


def test_a_file_whose_objects_are_not_where_its_cross_reference_says_is_read_one_by_one():
    data = document_with_the_name("object").tobytes(garbage=1)
    # Comments put in front of every object shift them all: MuPDF repairs the cross-reference and reads them.
    shifted = re.sub(rb"\n(\d+ 0 obj)", rb"\n% (a stray bracket in a comment\n\1", data)
    scanner = scanned(shifted)
    assert scanner.objects_in_bulk == 0
    assert {f.text for f in scanner.findings} == {NAME.lower()}


def with_a_false_endstream(note: str) -> tuple[bytes, int]:
    """A PDF with a binary stream (not read as text) whose data says ``endstream`` before its end, followed by an
    object holding ``note``; and that object's number."""
    doc = document_with_the_name("nowhere")
    xref = doc.get_new_xref()
    doc.update_object(xref, "<<>>")
    doc.update_stream(xref, bytes(range(128, 256)) * 8 + b" endstream (" + b"\x80" * 40 + b")", compress=False)
    doc.xref_set_key(doc.pdf_catalog(), "LDData", f"{xref} 0 R")
    holder = doc.get_new_xref()
    doc.update_object(holder, f"<</Note ({note})>>")
    doc.xref_set_key(doc.pdf_catalog(), "LDNote", f"{holder} 0 R")
    return doc.tobytes(), holder


def test_a_stream_whose_data_says_endstream_early_hides_nothing_after_it():
    clean, _ = with_a_false_endstream("Nothing to see")
    assert scanned(clean).objects_in_bulk > 0  # such a file is read in bulk
    data, holder = with_a_false_endstream(NAME)
    assert f"NATIVES/SMITH000001.pdf, object {holder}" in {f.where for f in scanned(data).findings}
