"""Reading a ZIP member's inflated bytes a bounded piece at a time, whatever its compression method: an attached
archive's files (:mod:`matters.email.containers`) and a received volume (:mod:`matters.incoming.archive`) are read
through it, so that a member built to inflate without end is stopped at the reader's limit, not after it has
filled memory. Django-free.
"""

import bz2
import copy
import io
import lzma
import zipfile
import zlib

CHUNK_BYTES = 1024 * 1024


def bounded_member_stream(archive: zipfile.ZipFile, info: zipfile.ZipInfo, room: int):
    """A readable stream of a member's inflated bytes whose ``read(n)`` inflates little more than ``n`` bytes.

    ``zipfile`` bounds what it inflates per read for stored and deflated members only: for bzip2 and LZMA it hands
    each compressed chunk it reads (up to the size asked, so up to a megabyte) to a decompressor without a limit,
    and a bzip2 member of 1.6 KB inflates to 2 GiB in one call, past any budget counted after the read returns.
    Those two are read raw and inflated here with the decompressors' ``max_length``; ``room`` (bytes) is the most
    that will be kept of it, which caps the LZMA dictionary the member asks for (up to 4 GiB, allocated up front)."""
    if info.compress_type not in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        return archive.open(info)  # stored and deflated are bounded by zipfile; others raise NotImplementedError
    raw = copy.copy(info)
    raw.compress_type = zipfile.ZIP_STORED
    raw.file_size = raw.compress_size
    del raw.CRC  # the CRC is of the inflated bytes; _BoundedInflate checks it
    return _BoundedInflate(archive.open(raw), info.compress_type, info.CRC, room)


class _BoundedInflate(io.RawIOBase):
    """The inflated bytes of a bzip2 (``ZIP_BZIP2``, APPNOTE 4.4.5 method 12) or LZMA (method 14) member read from
    ``raw``, its compressed bytes; ``read(n)`` returns at most ``n`` bytes, and BadZipFile is raised at the end for
    a CRC that does not match (as zipfile does). An LZMA dictionary is capped at ``room`` bytes: a match never
    reaches further back than the bytes inflated so far, and no more than ``room`` are kept."""

    def __init__(self, raw, compress_type: int, crc: int, room: int) -> None:
        self.raw, self.crc, self.running_crc, self.room = raw, crc, 0, room
        self.lzma_header = compress_type == zipfile.ZIP_LZMA
        self.decompressor = None if self.lzma_header else bz2.BZ2Decompressor()

    def _lzma_decompressor(self):
        # APPNOTE 5.8.8: 2 bytes of LZMA SDK version, 2 bytes of properties size, then the LZMA1 properties (one
        # byte lc/lp/pb, four bytes dictionary size; the .lzma header's first five bytes).
        header = self.raw.read(4)
        if len(header) < 4:
            raise zipfile.BadZipFile("truncated LZMA header")
        properties = self.raw.read(int.from_bytes(header[2:4], "little"))
        if len(properties) < 5:
            raise zipfile.BadZipFile("truncated LZMA properties")
        packed = properties[0]
        if packed >= 9 * 5 * 5:
            raise zipfile.BadZipFile("bad LZMA properties")
        lc, lp, pb = packed % 9, packed // 9 % 5, packed // 45
        dict_size = max(4096, min(int.from_bytes(properties[1:5], "little"), self.room + 1))
        return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[
            {"id": lzma.FILTER_LZMA1, "lc": lc, "lp": lp, "pb": pb, "dict_size": dict_size}])

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        size = CHUNK_BYTES if size is None or size < 0 else size
        if self.decompressor is None:
            self.decompressor = self._lzma_decompressor()
        while not self.decompressor.eof:
            data = b"" if self.decompressor.needs_input is False else self.raw.read(64 * 1024)
            if self.decompressor.needs_input and not data:
                break  # the compressed bytes ended (an LZMA stream may end without its end marker)
            chunk = self.decompressor.decompress(data, max_length=size)
            if chunk:
                self.running_crc = zlib.crc32(chunk, self.running_crc)
                return chunk
        if self.running_crc != self.crc:
            raise zipfile.BadZipFile("Bad CRC-32 for file")
        return b""

    def close(self) -> None:
        self.raw.close()
        super().close()
