"""Volumes as a hostile or sloppy vendor delivers them: every fault ends as a report line or a failed status the
attorney sees, never a silent pass, a wrong "done" or a server error."""

import hashlib
import io
import zipfile

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
