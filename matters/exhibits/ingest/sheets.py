"""Spreadsheets (XLSX, XLS, ODS, CSV) as exhibits: every sheet rendered as LibreOffice prints it, hidden parts shown.

A workbook's pages are what printing it gives (LibreOffice Calc's PDF export, in the same sandbox as Word files:
:func:`matters.exhibits.ingest.convert.office_to_pdf`): cell values as displayed, never formulas, so the text of
each page is the figures a reader sees, searchable and indexed for the verifier's amount and date checks.

Hidden sheets, rows and columns are shown, as review platforms do, and reported: before rendering, a copy of the
workbook has them unhidden (the ``state`` of ``<sheet>`` in ``xl/workbook.xml`` and the ``hidden`` attribute of
``<row>`` and ``<col>`` in each worksheet, ECMA-376 Part 1 18.2.19, 18.3.1.73, 18.3.1.13), and each one is named
in the exhibit's notes. They are read with openpyxl. An XLS or ODS is first saved as XLSX by LibreOffice in the
sandbox, so the same reading and unhiding apply to it. A CSV is laid out as a workbook of one sheet, every field
as the text written (no number or date guessing: "03/04/2021" and "=1+1" stay as they are).

The original is never changed: all of this happens to copies in a temporary folder. Django-free: runs in the
ingest child.
"""

import csv
import io
import re
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from . import office_crypto
from .convert import ConversionRefused, office_convert, office_to_pdf
from .spec import IngestFailure, Spec

DESCRIPTION = "spreadsheet"
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ODS_MIME = b"application/vnd.oasis.opendocument.spreadsheet"
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_WORKSHEET = re.compile(r"xl/worksheets/[^/]+\.xml")
# A CSV column is as wide as its longest field, between these numbers of characters (Calc cuts text off at the
# edge of a cell whose neighbour holds a value, so a too narrow column would hide part of a field on the page).
_CSV_MIN_WIDTH, _CSV_MAX_WIDTH = 8, 80
# How many hidden rows or columns a note names one by one before it gives only how many more.
_NAMED_MAX = 20


def calc_installed() -> bool:
    """Whether LibreOffice Calc is installed beside the ``soffice`` on the PATH (its core library, libsclo.so, in
    the same program folder): Writer alone opens no spreadsheet."""
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    return soffice is not None and (Path(soffice).resolve().parent / "libsclo.so").is_file()


def _require_calc() -> None:
    if not calc_installed():
        raise IngestFailure("A spreadsheet is printed to pages with LibreOffice Calc, which is not installed on this "
                            "server. Ask the operator to install it (Debian package libreoffice-calc-nogui), then "
                            "reprocess. The original is kept unchanged.")


def spreadsheet_suffix(path: Path) -> str:
    """The suffix LibreOffice is handed for the spreadsheet at ``path``, judged by its content: ``.xlsx``,
    ``.ods``, ``.xls`` (a compound file, encrypted or not) or ``.csv`` (anything else: sniff accepted it as one)."""
    with open(path, "rb") as stream:
        head = stream.read(8)
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as package:
                names = set(package.namelist())
                mimetype = package.read("mimetype")[:100].strip() if "mimetype" in names else b""
        except (zipfile.BadZipFile, OSError, KeyError) as exc:
            raise IngestFailure(f"The spreadsheet is damaged: its ZIP package could not be read ({exc}). The "
                                "original is kept unchanged; ask the sender for a new copy.") from exc
        return ".ods" if mimetype == _ODS_MIME else ".xlsx"
    return ".xls" if head == _OLE2 else ".csv"


def workbook_to_pdf(spec: Spec, out_dir: Path, notes: list[str], *, source: Path | None = None,
                    suffix: str = "") -> Path:
    """Render the spreadsheet of ``spec`` (or the decrypted copy ``source``, of type ``suffix``) to
    ``out_dir/display.pdf``; return that path. Hidden sheets, rows and columns are shown and named in ``notes``.

    Raises IngestFailure: ``needs_password`` for a password-protected workbook without the right password;
    ``failed`` for a damaged file, one over ``spec.max_sheet_cells`` cells, or a conversion LibreOffice refuses."""
    source = source or Path(spec.source)
    suffix = suffix or spreadsheet_suffix(source)
    hidden_dirs = (spec.data_dir,) if spec.data_dir else ()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "display.pdf"
    with tempfile.TemporaryDirectory(prefix="lawdesk-sheet-") as work_dir:
        work = Path(work_dir)
        if suffix == ".xls" and office_crypto.encrypted(source):
            source, suffix = _decrypted(spec, source, work, notes)
        if suffix == ".csv":
            xlsx = work / "table.xlsx"
            _csv_to_xlsx(source, xlsx, spec.max_sheet_cells)
        elif suffix == ".xlsx":
            xlsx = source
        else:
            _require_calc()
            xlsx = work / "saved.xlsx"
            try:
                office_convert(source, xlsx, suffix=suffix, description=DESCRIPTION, hidden=hidden_dirs,
                               convert_to="xlsx:Calc MS Excel 2007 XML", produced_suffix=".xlsx")
            except ConversionRefused as exc:
                raise IngestFailure(str(exc)) from exc
            notes.append(f"The {suffix[1:].upper()} workbook was saved as XLSX by LibreOffice to find its hidden "
                         "sheets, rows and columns; the original is kept as uploaded.")
        report = inspect_workbook(xlsx, spec.max_sheet_cells)
        shown = work / "shown.xlsx"
        unhide(xlsx, shown)
        _require_calc()
        try:
            office_to_pdf(shown, target, suffix=".xlsx", description=DESCRIPTION, hidden=hidden_dirs)
        except ConversionRefused as exc:
            raise IngestFailure(str(exc)) from exc
    notes.extend(report)
    notes.append("The pages are the workbook's sheets as LibreOffice prints them: cell values as displayed "
                 "(formulas give their values), every sheet in order.")
    return target


def _decrypted(spec: Spec, source: Path, work: Path, notes: list[str]) -> tuple[Path, str]:
    """Decrypt a password-protected workbook with the password given on the exhibit page; return the copy and its
    suffix. Raises IngestFailure (``needs_password`` when the password is missing or wrong)."""
    password = Path(spec.password_file).read_text() if spec.password_file else ""
    decrypted = work / "decrypted"
    holds = office_crypto.decrypt(source, decrypted, password, "Excel workbook")
    if holds and holds != "Excel workbook":
        raise IngestFailure(f"The password-protected file is a {holds}, not a spreadsheet.")
    suffix = ".xlsx" if holds else ".xls"
    decrypted = decrypted.rename(work / f"decrypted{suffix}")
    notes.append("Password-protected Excel workbook opened with the password given; the original is kept as "
                 "uploaded, encrypted.")
    return decrypted, suffix


def _csv_to_xlsx(source: Path, target: Path, max_cells: int) -> None:
    """Lay the CSV at ``source`` out as a workbook of one sheet, each field a text cell as written. Raises
    IngestFailure past ``max_cells`` cells or for a CSV that does not parse."""
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell

    raw = source.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")  # spreadsheet programs' usual export on Windows
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("CSV")
    rows: list[list[str]] = []
    widths: dict[int, int] = {}
    cells = 0
    try:
        for row in csv.reader(io.StringIO(text, newline="")):
            cells += len(row)
            if max_cells and cells > max_cells:
                raise IngestFailure(_too_big(f"more than {max_cells:,} fields", max_cells))
            rows.append(row)
            for index, value in enumerate(row):
                widths[index] = max(widths.get(index, 0), max((len(line) for line in value.splitlines()), default=0))
    except csv.Error as exc:
        raise IngestFailure(f"The CSV table could not be read ({exc}). The original is kept unchanged.") from exc
    from openpyxl.utils import get_column_letter

    for index, width in widths.items():
        sheet.column_dimensions[get_column_letter(index + 1)].width = min(_CSV_MAX_WIDTH,
                                                                          max(_CSV_MIN_WIDTH, width + 2))
    for row in rows:
        out = []
        for value in row:
            cell = WriteOnlyCell(sheet, value=value)
            cell.data_type = "s"  # a field that starts with "=" is text written in the file, not a formula
            out.append(cell)
        sheet.append(out)
    workbook.save(target)


def _too_big(what: str, max_cells: int) -> str:
    return (f"The spreadsheet is too large to print as pages: it holds {what}, over the limit of {max_cells:,} "
            "cells (LAWDESK_SHEET_MAX_CELLS) that keeps one file from taking the server for hours. The original is "
            "kept unchanged; ask for the part that matters, or for the figures as a PDF.")


def inspect_workbook(path: Path, max_cells: int) -> list[str]:
    """Return notes naming the hidden sheets, rows and columns of the XLSX at ``path`` (empty when none). Raises
    IngestFailure for a damaged workbook, or one whose sheets span more than ``max_cells`` cells (0: no limit)."""
    import openpyxl

    try:
        # openpyxl judges a file name by its suffix, and a stored original has none: it is handed open files.
        with open(path, "rb") as stream:
            # Read-only first: the sheets' sizes come from their <dimension> without loading a cell.
            quick = openpyxl.load_workbook(stream, read_only=True, data_only=True)
            try:
                total = sum((sheet.max_row or 0) * (sheet.max_column or 0) for sheet in quick.worksheets)
            finally:
                quick.close()
        if max_cells and total > max_cells:
            raise IngestFailure(_too_big(f"{total:,} cells in its sheets' used ranges", max_cells))
        with open(path, "rb") as stream:
            workbook = openpyxl.load_workbook(stream, data_only=True)
    except IngestFailure:
        raise
    except Exception as exc:  # zipfile, lxml and openpyxl raise several types for a damaged workbook
        raise IngestFailure(f"The spreadsheet is damaged and could not be read ({type(exc).__name__}: "
                            f"{str(exc)[:200]}). The original is kept unchanged; ask the sender for a new copy.") \
            from exc
    notes = []
    for sheet in workbook.worksheets + list(workbook.chartsheets):
        if sheet.sheet_state != "visible":
            how = "very hidden (shown only by editing the file)" if sheet.sheet_state == "veryHidden" else "hidden"
            notes.append(f"Sheet “{sheet.title}” is {how} in the workbook; it is shown on these pages.")
    for sheet in workbook.worksheets:
        rows = [number for number, dim in sheet.row_dimensions.items() if dim.hidden]
        columns = []
        for dim in sheet.column_dimensions.values():
            if dim.hidden:
                columns.extend(range(dim.min or 1, (dim.max or dim.min or 1) + 1))
        if rows:
            notes.append(f"Sheet “{sheet.title}”: hidden row(s) {_spans(sorted(rows), str)} shown on these pages.")
        if columns:
            from openpyxl.utils import get_column_letter

            notes.append(f"Sheet “{sheet.title}”: hidden column(s) {_spans(sorted(set(columns)), get_column_letter)} "
                         "shown on these pages.")
    workbook.close()
    return notes


def _spans(numbers: Sequence[int], name) -> str:
    """``[3, 4, 5, 9]`` -> ``3-5, 9`` (``name`` turns a number into its label: a row number, a column letter);
    past _NAMED_MAX spans, the rest is counted."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    words = [name(a) if a == b else f"{name(a)}-{name(b)}" for a, b in spans[:_NAMED_MAX]]
    if len(spans) > _NAMED_MAX:
        words.append(f"and {len(spans) - _NAMED_MAX} more range(s)")
    return ", ".join(words)


def unhide(source: Path, target: Path) -> None:
    """Copy the XLSX at ``source`` to ``target`` with every sheet visible and no row or column hidden; every other
    part is copied byte for byte. Raises IngestFailure for a damaged package."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    try:
        with zipfile.ZipFile(source) as package, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
            for info in package.infolist():
                data = package.read(info)
                if info.filename == "xl/workbook.xml" or _WORKSHEET.fullmatch(info.filename):
                    root = etree.fromstring(data, parser)
                    for element in root.iter(f"{{{_MAIN}}}sheet"):
                        element.attrib.pop("state", None)
                    for tag in ("row", "col"):
                        for element in root.iter(f"{{{_MAIN}}}{tag}"):
                            element.attrib.pop("hidden", None)
                    data = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
                out.writestr(info, data)
    except (zipfile.BadZipFile, etree.XMLSyntaxError, OSError, KeyError) as exc:
        raise IngestFailure(f"The spreadsheet is damaged and could not be read ({exc}). The original is kept "
                            "unchanged; ask the sender for a new copy.") from exc
