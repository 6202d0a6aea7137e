"""S/MIME: an opaque-signed message shows the content its signature wraps and says the signature was not verified;
an encrypted one says what it is; the BER reader under both refuses what is malformed."""

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs7
from cryptography.x509.oid import NameOID
from hypothesis import given, settings
from hypothesis import strategies as st

from matters import storage
from matters.email.smime import read_ber, read_opaque
from matters.models import Exhibit

from .email_messages import as_bytes, ingest_bytes, message, page_text, pdf_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def signer():
    """A key and a self-signed certificate for Ana Ruiz, made here."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Ana Ruiz"),
                      x509.NameAttribute(NameOID.EMAIL_ADDRESS, "ana@ruiz-law.example")])
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
                   .sign(key, hashes.SHA256()))
    return key, certificate


def signed_entity() -> bytes:
    """The MIME entity a mail program signs: the body and an attachment, without the message's own headers."""
    inner = message(body="I confirm the settlement figure of $48,000.\n")
    inner.add_attachment(pdf_bytes("Settlement term sheet: $48,000 payable in two instalments."),
                         maintype="application", subtype="pdf", filename="term-sheet.pdf")
    for name in ("From", "To", "Subject", "Date", "Message-ID"):
        del inner[name]
    return inner.as_bytes().replace(b"\n", b"\r\n")


def wrapped(der: bytes, smime_type: str, **headers):
    """A message whose whole content is the S/MIME part ``der`` (as Outlook sends an opaque-signed message)."""
    mail = message(**headers)
    mail.clear_content()
    mail.set_content(der, maintype="application", subtype="pkcs7-mime", disposition="attachment",
                     filename="smime.p7m", params={"smime-type": smime_type})
    return mail


def test_an_opaque_signed_message_shows_its_content_and_says_the_signature_was_not_verified(matter, attorney,
                                                                                           signer):
    key, certificate = signer
    der = (pkcs7.PKCS7SignatureBuilder().set_data(signed_entity()).add_signer(certificate, key, hashes.SHA256())
           .sign(serialization.Encoding.DER, []))
    data = as_bytes(wrapped(der, "signed-data", subject="Settlement", message_id="<signed@x.example>"))
    parent = ingest_bytes(matter, attorney, data)

    assert parent.status == Exhibit.Status.READY, parent.reason
    text = page_text(parent)
    assert "Subject: Settlement" in text and "I confirm the settlement figure of $48,000." in text
    [note] = [note for note in parent.notes if "S/MIME" in note]
    assert "signed" in note and "not verified" in note and "Ana Ruiz" in note
    assert "S/MIME-signed" in " ".join(text.split())
    [child] = parent.children.all()
    assert child.original_name == "term-sheet.pdf" and "payable in two instalments" in page_text(child)
    assert storage.blob_path(parent.sha256).read_bytes() == data


def ber(tag: int, *children: bytes) -> bytes:
    """A constructed BER element with an indefinite length, as streaming S/MIME writers make them."""
    return bytes([tag, 0x80]) + b"".join(children) + b"\x00\x00"


def der(tag: int, value: bytes) -> bytes:
    length = len(value)
    head = bytes([length]) if length < 128 else bytes([0x82]) + length.to_bytes(2, "big")
    return bytes([tag]) + head + value


def test_content_in_a_ber_signed_data_with_indefinite_lengths_and_pieces_is_read():
    content = b"Content-Type: text/plain\r\n\r\nSigned in pieces.\r\n"
    pieces = ber(0x24, der(0x04, content[:20]), der(0x04, content[20:]))  # a constructed OCTET STRING
    signed_data = ber(0x30, der(0x02, b"\x01"), der(0x31, b""),
                      ber(0x30, der(0x06, bytes.fromhex("2a864886f70d010701")), ber(0xA0, pieces)), der(0x31, b""))
    info = ber(0x30, der(0x06, bytes.fromhex("2a864886f70d010702")), ber(0xA0, signed_data))
    found = read_opaque(info)
    assert (found.kind, found.content, found.problem) == ("signed", content, "")


def test_an_encrypted_message_says_what_it_is(matter, attorney, signer):
    _, certificate = signer
    der_bytes = (pkcs7.PKCS7EnvelopeBuilder().set_data(signed_entity()).add_recipient(certificate)
                 .encrypt(serialization.Encoding.DER, []))
    parent = ingest_bytes(matter, attorney, as_bytes(wrapped(der_bytes, "enveloped-data",
                                                             message_id="<enc@x.example>")))
    assert parent.status == Exhibit.Status.READY
    assert any("S/MIME-encrypted" in note and "private key" in note for note in parent.notes)
    assert "$48,000" not in page_text(parent) and not parent.children.exists()


def test_a_part_that_claims_signed_data_and_is_not_says_so(matter, attorney):
    parent = ingest_bytes(matter, attorney, as_bytes(wrapped(b"\x30\x05garbage", "signed-data",
                                                             message_id="<bad@x.example>")))
    assert parent.status == Exhibit.Status.READY
    assert any("S/MIME part could not be read" in note for note in parent.notes)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_the_ber_reader_refuses_malformed_input_with_value_error_only(data):
    try:
        read_ber(data)
    except ValueError:
        pass
    found = read_opaque(data)
    assert found.kind in ("signed", "encrypted", "compressed", "unknown")
    assert found.kind != "unknown" or found.problem


def test_signatures_wrapped_past_the_limit_are_said_and_not_opened(matter, attorney, signer):
    import base64

    key, certificate = signer
    entity = b"Content-Type: text/plain\r\n\r\nInnermost text.\r\n"
    for _ in range(5):  # signed five times over, each signature's DER the content of the next
        der_bytes = (pkcs7.PKCS7SignatureBuilder().set_data(entity).add_signer(certificate, key, hashes.SHA256())
                     .sign(serialization.Encoding.DER, []))
        entity = (b"Content-Type: application/pkcs7-mime; smime-type=signed-data\r\n"
                  b"Content-Transfer-Encoding: base64\r\n\r\n" + base64.encodebytes(der_bytes))
    parent = ingest_bytes(matter, attorney, as_bytes(wrapped(der_bytes, "signed-data", message_id="<deep@x.ex>")))
    assert parent.status == Exhibit.Status.READY
    assert "Innermost text." not in page_text(parent)
    assert any("wrapped more than 3 times" in note for note in parent.notes)


def signed_in_pieces(pieces: list[bytes]) -> bytes:
    """An opaque SignedData whose content is a constructed OCTET STRING of ``pieces`` (each a primitive piece)."""
    content = ber(0x24, *(der(0x04, piece) for piece in pieces))
    signed_data = ber(0x30, der(0x02, b"\x01"), der(0x31, b""),
                      ber(0x30, der(0x06, bytes.fromhex("2a864886f70d010701")), ber(0xA0, content)), der(0x31, b""))
    return ber(0x30, der(0x06, bytes.fromhex("2a864886f70d010702")), ber(0xA0, signed_data))


def test_millions_of_empty_pieces_are_refused_before_they_fill_memory(monkeypatch):
    # Each element read is an object in memory: 10 MB of empty pieces (04 00) held 5 million of them, 930 MiB.
    import tracemalloc

    from matters.email import smime

    monkeypatch.setattr(smime, "MAX_ELEMENTS", 1_000)
    part = signed_in_pieces([b""] * 100_000)
    tracemalloc.start()
    try:
        found = read_opaque(part)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found.kind == "unknown" and "more than 1,000 elements" in found.problem
    assert peak < 1 << 20  # a thousand elements' worth, never the 100,000 the part holds


def test_content_in_many_pieces_under_the_limit_is_read_whole():
    content = b"Content-Type: text/plain\r\n\r\n" + b"Signed in many pieces. " * 2_000
    pieces = [content[start:start + 16] for start in range(0, len(content), 16)]  # about 2,900 pieces
    assert read_opaque(signed_in_pieces(pieces)).content == content


def test_a_part_past_the_element_limit_is_said_and_the_family_goes_on(matter, attorney, monkeypatch):
    from matters.email import smime

    monkeypatch.setattr(smime, "MAX_ELEMENTS", 1_000)
    mail = message(subject="Pieces", message_id="<pieces@x.example>")
    mail.add_attachment(signed_in_pieces([b""] * 5_000), maintype="application", subtype="pkcs7-mime",
                        filename="smime.p7m", params={"smime-type": "signed-data"})
    mail.add_attachment(pdf_bytes("Schedule of payments."), maintype="application", subtype="pdf",
                        filename="schedule.pdf")
    data = as_bytes(mail)
    parent = ingest_bytes(matter, attorney, data)
    assert parent.status == Exhibit.Status.READY, parent.reason
    assert any("S/MIME part could not be read" in note and "more than 1,000 elements" in note
               for note in parent.notes)
    assert [child.original_name for child in parent.children.all()] == ["schedule.pdf"]
    assert storage.blob_path(parent.sha256).read_bytes() == data
