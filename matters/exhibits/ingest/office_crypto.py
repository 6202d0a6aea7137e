"""Password-protected Office files: found, and opened with the password an attorney gives, as PDFs are.

Word encrypts a DOCX by wrapping it in an OLE2 compound file whose ``EncryptedPackage`` stream holds the package
and whose ``EncryptionInfo`` stream says how ([MS-OFFCRYPTO] 2.3.4: Standard and Agile encryption); a Word
97-2003 file is encrypted in place, its ``WordDocument`` stream flagged (``fEncrypted``, [MS-DOC] 2.5.1) with
RC4 or CryptoAPI RC4 ([MS-OFFCRYPTO] 2.3.5-2.3.6). msoffcrypto-tool reads both (its ``OfficeFile``). The
original stays as uploaded, byte for byte; the decrypted copy lives in a temporary folder only while it is
converted. Django-free: runs in the ingest child.
"""

import io
import zipfile
from pathlib import Path

from .spec import IngestFailure

OLE2_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# What a decrypted OOXML package is, by the main part it holds (ECMA-376 Part 1, 11.3.10, 12.3.23, 13.3.6).
_PACKAGE_KINDS = (("word/document.xml", "Word document"), ("xl/workbook.xml", "Excel workbook"),
                  ("ppt/presentation.xml", "PowerPoint presentation"))


def _is_ole2(path: Path) -> bool:
    with open(path, "rb") as stream:
        return stream.read(len(OLE2_SIGNATURE)) == OLE2_SIGNATURE


def encrypted(path: Path) -> bool:
    """Whether the file at ``path`` is an Office file encrypted with a password (an OLE2 compound file that
    msoffcrypto-tool reads as encrypted). A file it cannot read as Office is not: its conversion says why."""
    if not _is_ole2(path):
        return False
    import msoffcrypto  # only for compound files: most uploads never need it

    try:
        with open(path, "rb") as stream:
            return bool(msoffcrypto.OfficeFile(stream).is_encrypted())
    except Exception:  # msoffcrypto raises several types for compound files that are not Office documents
        return False


def decrypt(source: Path, target: Path, password: str, description: str) -> str:
    """Write the decrypted content of ``source`` to ``target`` with ``password``; return what it holds ("Word
    document", ...; "" when it is not an OOXML package, e.g. a Word 97-2003 file). ``description`` names the file
    in messages. Raises IngestFailure with status ``needs_password`` when the password is missing or wrong, and
    ``failed`` when the encryption is one msoffcrypto-tool cannot undo."""
    import msoffcrypto
    from msoffcrypto import exceptions

    if not password:
        raise IngestFailure(f"The {description} is password-protected (encrypted by Office). Enter its password "
                            "on the exhibit page to process it.", status="needs_password")
    decrypted = io.BytesIO()
    try:
        with open(source, "rb") as stream:
            office = msoffcrypto.OfficeFile(stream)
            office.load_key(password=password)
            office.decrypt(decrypted)
    except (exceptions.InvalidKeyError, exceptions.DecryptionError) as exc:
        if isinstance(exc, exceptions.InvalidKeyError) or "password" in str(exc).lower() \
                or "key" in str(exc).lower():
            raise IngestFailure(f"The password was not accepted for this {description}. Enter the correct "
                                "password to process it.", status="needs_password") from exc
        raise IngestFailure(f"The {description} could not be decrypted ({exc}).") from exc
    except exceptions.FileFormatError as exc:
        raise IngestFailure(f"The {description} uses an encryption that cannot be opened here ({exc}). "
                            "Ask the sender for an unprotected copy or a PDF.") from exc
    except Exception as exc:  # a damaged container: olefile and cryptography raise several types
        raise IngestFailure(f"The {description} is password-protected but damaged: it could not be decrypted "
                            f"({type(exc).__name__}: {str(exc)[:200]}). Ask the sender for a new copy.") from exc
    target.write_bytes(decrypted.getvalue())
    return package_kind(target)


def package_kind(path: Path) -> str:
    """What an OOXML package at ``path`` holds ("Word document", "Excel workbook", ...); "" when it is not one."""
    if not zipfile.is_zipfile(path):
        return ""
    with zipfile.ZipFile(path) as package:
        names = set(package.namelist())
    return next((kind for part, kind in _PACKAGE_KINDS if part in names), "Office package")
