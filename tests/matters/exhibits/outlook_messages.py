"""Outlook ``.msg`` files the tests write themselves: the MAPI properties of [MS-OXMSG] laid out as streams of a
compound file, which extract-msg's own MS-CFB writer (``extract_msg.ole_writer.OleWriter``) assembles. Never a file
copied from elsewhere.

[MS-OXMSG] 2.1: every property of the message is a stream ``__substg1.0_<id><type>`` (variable-length types) or
an entry of the ``__properties_version1.0`` stream (fixed-length types); recipients and attachments are storages
``__recip_version1.0_#<n>`` and ``__attach_version1.0_#<n>`` holding their own. Property ids are [MS-OXPROPS].
"""

import io
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime

from extract_msg.ole_writer import OleWriter

PT_LONG, PT_BOOLEAN, PT_SYSTIME, PT_UNICODE, PT_BINARY = 0x0003, 0x000B, 0x0040, 0x001F, 0x0102
_READABLE_WRITABLE = 0x6  # PROPATTR_READABLE | PROPATTR_WRITABLE ([MS-OXMSG] 2.4.2.1)
_FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)


@dataclass
class Properties:
    """The properties of one object (the message, a recipient, an attachment): ``strings`` by property id (sent as
    PtypString), ``binaries`` (PtypBinary), ``longs`` (PtypInteger32), ``times`` (PtypTime)."""

    strings: dict[int, str] = field(default_factory=dict)
    binaries: dict[int, bytes] = field(default_factory=dict)
    longs: dict[int, int] = field(default_factory=dict)
    times: dict[int, datetime] = field(default_factory=dict)

    def streams(self) -> dict[str, bytes]:
        """The variable-length properties as the streams that hold them."""
        out = {f"__substg1.0_{pid:04X}{PT_UNICODE:04X}": value.encode("utf-16-le")
               for pid, value in self.strings.items()}
        out |= {f"__substg1.0_{pid:04X}{PT_BINARY:04X}": value for pid, value in self.binaries.items()}
        return out

    def property_entries(self) -> bytes:
        """The 16-byte entries of ``__properties_version1.0`` ([MS-OXMSG] 2.4.2): tag, flags, value (a fixed value,
        or a variable one's size: a string's bytes plus its 2-byte terminator)."""
        entries = b""
        for pid, value in self.longs.items():
            entries += struct.pack("<IIiI", pid << 16 | PT_LONG, _READABLE_WRITABLE, value, 0)
        for pid, value in self.times.items():
            ticks = int((value - _FILETIME_EPOCH).total_seconds() * 10_000_000)
            entries += struct.pack("<IIQ", pid << 16 | PT_SYSTIME, _READABLE_WRITABLE, ticks)
        for pid, value in self.strings.items():
            entries += struct.pack("<IIII", pid << 16 | PT_UNICODE, _READABLE_WRITABLE,
                                   len(value.encode("utf-16-le")) + 2, 0)
        for pid, value in self.binaries.items():
            entries += struct.pack("<IIII", pid << 16 | PT_BINARY, _READABLE_WRITABLE, len(value), 0)
        return entries


# [MS-OXPROPS] property ids.
SUBJECT, MESSAGE_CLASS, BODY, HTML = 0x0037, 0x001A, 0x1000, 0x1013
TRANSPORT_HEADERS, INTERNET_MESSAGE_ID, CLIENT_SUBMIT_TIME, DELIVERY_TIME = 0x007D, 0x1035, 0x0039, 0x0E06
SENDER_NAME, SENDER_EMAIL, SENDER_ADDRTYPE, SENDER_SMTP, DISPLAY_TO = 0x0C1A, 0x0C1F, 0x0C1E, 0x5D01, 0x0E04
RECIPIENT_TYPE, DISPLAY_NAME, EMAIL_ADDRESS, ADDRTYPE, SMTP_ADDRESS = 0x0C15, 0x3001, 0x3003, 0x3002, 0x39FE
ATTACH_METHOD, ATTACH_LONG_FILENAME, ATTACH_FILENAME, ATTACH_DATA, ATTACH_MIME_TAG = (0x3705, 0x3707, 0x3704, 0x3701,
                                                                                   0x370E)
MAPI_TO, ATTACH_BY_VALUE = 1, 1


def msg_bytes(message: Properties, recipients: list[Properties] = (), attachments: list[Properties] = ()) -> bytes:
    """An Outlook message file holding ``message``'s properties, its recipients and its attachments."""
    writer = OleWriter()
    header = struct.pack("<8sIIII8s", bytes(8), len(recipients), len(attachments), len(recipients),
                         len(attachments), bytes(8))
    writer.addEntry("__properties_version1.0", header + message.property_entries())
    for name, data in message.streams().items():
        writer.addEntry(name, data)
    # The named-property map ([MS-OXMSG] 2.2.3) must exist; this message names no property, so its streams are empty.
    writer.addEntry("__nameid_version1.0", storage=True)
    for stream in ("__substg1.0_00020102", "__substg1.0_00030102", "__substg1.0_00040102"):
        writer.addEntry(f"__nameid_version1.0/{stream}", b"")
    for kind, items in (("recip", recipients), ("attach", attachments)):
        for number, item in enumerate(items):
            storage = f"__{kind}_version1.0_#{number:08X}"
            writer.addEntry(storage, storage=True)
            writer.addEntry(f"{storage}/__properties_version1.0", bytes(8) + item.property_entries())
            for name, data in item.streams().items():
                writer.addEntry(f"{storage}/{name}", data)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def recipient(name: str, address: str, kind: int = MAPI_TO) -> Properties:
    return Properties(strings={DISPLAY_NAME: name, EMAIL_ADDRESS: address, ADDRTYPE: "SMTP", SMTP_ADDRESS: address},
                      longs={RECIPIENT_TYPE: kind})


def attachment(filename: str, data: bytes, mime: str) -> Properties:
    return Properties(strings={ATTACH_LONG_FILENAME: filename, ATTACH_FILENAME: filename[:12],
                               ATTACH_MIME_TAG: mime},
                      binaries={ATTACH_DATA: data}, longs={ATTACH_METHOD: ATTACH_BY_VALUE})
