"""A password-protected Word file is named for what it is and gets the password step PDFs have; the original is
kept byte for byte."""

import hashlib

import docx
import pytest
from django.urls import reverse
from msoffcrypto.format.ooxml import OOXMLFile

from matters import storage
from matters.exhibits.processing import exhibit_process
from matters.exhibits.services import exhibit_submit_password
from matters.exhibits.sniff import sniff
from matters.models import Exhibit

pytestmark = pytest.mark.django_db

PASSWORD = "Tr1al-Exhibit"


def encrypted(plain, path):
    """``plain`` encrypted with msoffcrypto-tool's own (Agile) encryption, as Word does, written to ``path``."""
    with open(plain, "rb") as source, open(path, "wb") as target:
        OOXMLFile(source).encrypt(PASSWORD, target)
    return path


def settlement_docx(tmp_path):
    document = docx.Document()
    document.add_paragraph("Settlement terms: the defendant pays $48,500 within thirty days.")
    document.save(tmp_path / "plain.docx")
    return encrypted(tmp_path / "plain.docx", tmp_path / "settlement.docx")


def test_an_encrypted_word_file_is_named_as_one_not_a_spreadsheet(tmp_path):
    path = settlement_docx(tmp_path)
    found = sniff(path, path.read_bytes()[:8192])
    assert (found.kind, found.description) == ("docx", "password-protected Office document (encrypted DOCX)")


def test_an_encrypted_word_file_waits_for_its_password_and_keeps_its_original(matter, attorney, tmp_path, ingest,
                                                                              client):
    path = settlement_docx(tmp_path)
    exhibit = ingest(matter, path)
    assert exhibit.status == Exhibit.Status.NEEDS_PASSWORD, exhibit.reason
    assert "Word document is password-protected" in exhibit.reason
    client.force_login(attorney)
    page = client.get(reverse("matters:exhibit", args=[matter.pk, exhibit.pk])).content.decode()
    assert "Enter the file's password" in page and 'name="password"' in page

    exhibit_submit_password(exhibit=exhibit, password="wrong", submitted_by=attorney)
    exhibit = exhibit_process(exhibit_id=exhibit.pk, previews="skip")
    assert exhibit.status == Exhibit.Status.NEEDS_PASSWORD and "not accepted" in exhibit.reason
    assert not storage.password_path(exhibit.pk).exists()

    exhibit_submit_password(exhibit=exhibit, password=PASSWORD, submitted_by=attorney)
    exhibit = exhibit_process(exhibit_id=exhibit.pk, previews="skip")
    assert exhibit.status == Exhibit.Status.READY, exhibit.reason
    assert "$48,500 within thirty days" in exhibit.pages.get().text
    assert any("opened with the password given" in note for note in exhibit.notes)
    assert not storage.password_path(exhibit.pk).exists()
    stored = storage.blob_path(exhibit.sha256).read_bytes()
    assert stored == path.read_bytes() and exhibit.sha256 == hashlib.sha256(stored).hexdigest()


def test_an_encrypted_workbook_is_printed_as_a_workbook_once_opened(matter, attorney, tmp_path, ingest):
    import openpyxl

    from matters.exhibits.ingest.sheets import calc_installed

    plain = tmp_path / "ledger.xlsx"
    workbook = openpyxl.Workbook()
    # msoffcrypto-tool 6.1 encrypts a package under 4 KiB into one it cannot decrypt again: enough rows fill it.
    for row in range(1, 301):
        workbook.active.append([f"March {row % 28 + 1}, 2021", f"payment {row}", 1000 + row + 0.25])
    workbook.save(plain)
    exhibit = ingest(matter, encrypted(plain, tmp_path / "ledger-protected.xlsx"))
    assert exhibit.status == Exhibit.Status.NEEDS_PASSWORD
    exhibit_submit_password(exhibit=exhibit, password=PASSWORD, submitted_by=attorney)
    exhibit = exhibit_process(exhibit_id=exhibit.pk, previews="skip")
    if calc_installed():
        assert exhibit.status == Exhibit.Status.READY, exhibit.reason
        assert "payment 7" in "\n".join(exhibit.pages.values_list("text", flat=True))
        assert any("Excel workbook opened with the password given" in note for note in exhibit.notes)
    else:
        # Opened and read as a workbook (its sheets sized, its hidden parts looked for); only printing is missing.
        assert exhibit.status == Exhibit.Status.FAILED
        assert "LibreOffice Calc" in exhibit.reason and "libreoffice-calc-nogui" in exhibit.reason
