"""What an S/MIME part (``application/pkcs7-mime``, RFC 8551 section 3.2) is, and the content of an opaque-signed
one.

A ``pkcs7-mime`` part is a CMS ``ContentInfo`` (RFC 5652 section 3). Its content type says what it is, whatever
the part's ``smime-type`` parameter claims (mail programs leave it out or get it wrong):

- ``signed-data`` (1.2.840.113549.1.7.2): an *opaque-signed* message. The signed MIME entity is inside it, in the
  ``eContent`` OCTET STRING of its ``EncapsulatedContentInfo`` (RFC 5652 section 5.2), and is read out here so
  the message shows what it says. The signature is not verified (LawDesk holds no trust anchors for it).
- ``enveloped-data`` (1.2.840.113549.1.7.3), ``authEnveloped-data`` (1.2.840.113549.1.9.16.1.23): encrypted to its
  recipients; only a recipient's private key opens it.
- ``compressed-data`` (1.2.840.113549.1.9.16.1.9, RFC 3274): said, not opened.

CMS is BER, not DER (RFC 5652 section 1.2): mail programs stream it with indefinite lengths and cut the content
into a constructed OCTET STRING of pieces. ``cryptography``'s ``asn1`` module decodes DER only, so the few
structures needed are read with the small BER reader here (X.690 section 8.1), which refuses anything malformed
with ``ValueError``. The certificates a signed message carries are named with ``cryptography`` (its PKCS#7
loader), where they load. Django-free.
"""

from dataclasses import dataclass

_SIGNED_DATA = bytes.fromhex("2a864886f70d010702")
_ENVELOPED_DATA = bytes.fromhex("2a864886f70d010703")
_AUTH_ENVELOPED_DATA = bytes.fromhex("2a864886f70d0109100117")
_COMPRESSED_DATA = bytes.fromhex("2a864886f70d0109100109")
_OID, _OCTET_STRING, _SEQUENCE, _SET, _CONTEXT_0 = 0x06, 0x04, 0x10, 0x11, 0xA0
_MAX_NESTING = 64  # BER nesting a CMS structure never needs; a deeper one is refused, not recursed into
# Elements one structure may hold. Each is a Node in memory (about 100 bytes), and an element takes as little as two
# bytes of input (an empty OCTET STRING piece, 04 00): 10 MB of them made 5 million Nodes, 930 MiB. A signed message
# needs a few hundred for its certificates and one per piece of its content (mail programs cut it into pieces of 1 to
# 4 KiB: 150 MiB, the largest message read, is under 160,000 pieces of 1 KiB).
MAX_ELEMENTS = 200_000


@dataclass(slots=True)
class Node:
    """A BER element: ``tag`` its identifier octet (class, constructed bit and a low tag number), ``value`` the
    content octets of a primitive element, ``children`` those of a constructed one."""

    tag: int
    value: bytes = b""
    children: list["Node"] | None = None

    @property
    def number(self) -> int:
        return self.tag & 0x1F


@dataclass
class Opaque:
    """An S/MIME part read: ``kind`` "signed", "encrypted", "compressed" or "unknown"; ``content`` the signed MIME
    entity's bytes (signed only; None when absent or unreadable); ``signers`` the subjects of the certificates it
    carries; ``problem`` why the content could not be read ('' when it was)."""

    kind: str
    content: bytes | None = None
    signers: list[str] | None = None
    problem: str = ""


def read_ber(data: bytes) -> Node:
    """The single BER element ``data`` holds (trailing bytes after it are ignored, as a mail program may pad);
    raises ValueError for anything malformed: a length past the end, a high tag number, nesting past 64, more than
    :data:`MAX_ELEMENTS` elements."""
    node, _ = _element(data, 0, 0, [0])
    return node


def _element(data: bytes, pos: int, depth: int, elements: list[int]) -> tuple[Node, int]:
    if depth > _MAX_NESTING:
        raise ValueError("nested too deep")
    elements[0] += 1
    if elements[0] > MAX_ELEMENTS:
        raise ValueError(f"it holds more than {MAX_ELEMENTS:,} elements, more than an S/MIME message needs")
    if pos + 2 > len(data):
        raise ValueError("truncated element")
    tag = data[pos]
    if tag & 0x1F == 0x1F:
        raise ValueError("high tag numbers are not used by CMS")
    first = data[pos + 1]
    pos += 2
    constructed = bool(tag & 0x20)
    if first == 0x80:  # indefinite length: constructed only, content up to an end-of-contents 00 00 (8.1.3.6)
        if not constructed:
            raise ValueError("indefinite length on a primitive element")
        children = []
        while True:
            if pos + 2 > len(data):
                raise ValueError("no end-of-contents")
            if data[pos] == 0 and data[pos + 1] == 0:
                return Node(tag, children=children), pos + 2
            child, pos = _element(data, pos, depth + 1, elements)
            children.append(child)
    if first & 0x80:
        count = first & 0x7F
        if count > 8 or pos + count > len(data):
            raise ValueError("bad length")
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    else:
        length = first
    end = pos + length
    if end > len(data):
        raise ValueError("length past the end")
    if not constructed:
        return Node(tag, value=data[pos:end]), end
    children = []
    while pos < end:
        child, pos = _element(data, pos, depth + 1, elements)
        children.append(child)
    if pos != end:
        raise ValueError("children overrun their parent")
    return Node(tag, children=children), end


def octets(node: Node) -> bytes:
    """An OCTET STRING's content, its pieces joined when it is constructed (X.690 section 8.7.3)."""
    if node.children is None:
        return node.value
    return b"".join(octets(child) for child in node.children)


def read_opaque(data: bytes) -> Opaque:
    """What the ``pkcs7-mime`` part's decoded bytes ``data`` hold (see the module docstring); never raises."""
    try:
        info = read_ber(data)
        kind_oid = info.children[0]
        if info.number != _SEQUENCE or kind_oid.number != _OID:
            raise ValueError("not a ContentInfo")
    except (ValueError, IndexError, TypeError) as exc:
        return Opaque("unknown", problem=f"its CMS structure could not be read ({exc})")
    oid = kind_oid.value
    if oid in (_ENVELOPED_DATA, _AUTH_ENVELOPED_DATA):
        return Opaque("encrypted")
    if oid == _COMPRESSED_DATA:
        return Opaque("compressed")
    if oid != _SIGNED_DATA:
        return Opaque("unknown", problem=f"its CMS content type ({_dotted(oid)}) is not one S/MIME uses")
    signers = _signers(data)
    try:
        signed = info.children[1].children[0]  # [0] EXPLICIT SignedData
        encapsulated = signed.children[2]  # version, digestAlgorithms, encapContentInfo
        if encapsulated.number != _SEQUENCE or encapsulated.children[0].number != _OID:
            raise ValueError("no EncapsulatedContentInfo")
        if len(encapsulated.children) < 2:
            return Opaque("signed", signers=signers, problem="its signature wraps no content (a detached signature "
                                                             "sent without the content it signs)")
        content = octets(encapsulated.children[1].children[0])  # [0] EXPLICIT OCTET STRING
    except (ValueError, IndexError, TypeError, AttributeError) as exc:
        return Opaque("signed", signers=signers, problem=f"its signed content could not be read ({exc})")
    return Opaque("signed", content=content, signers=signers)


def _signers(data: bytes) -> list[str]:
    """The subjects of the certificates a SignedData carries ([] when none load: ``cryptography`` wants DER)."""
    try:
        from cryptography.hazmat.primitives.serialization import pkcs7

        return [certificate.subject.rfc4514_string() for certificate in pkcs7.load_der_pkcs7_certificates(data)]
    except Exception:  # ValueError for BER or a damaged structure, UnsupportedAlgorithm; names are a courtesy
        return []


def _dotted(oid: bytes) -> str:
    """An OBJECT IDENTIFIER's content octets as dotted numbers (X.690 section 8.19)."""
    numbers, value = [], 0
    for byte in oid:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            numbers.append(value)
            value = 0
    if not numbers:
        return "empty"
    first = min(numbers[0] // 40, 2)
    return ".".join(str(n) for n in [first, numbers[0] - 40 * first] + numbers[1:])
