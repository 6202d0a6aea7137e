"""Spreadsheets (XLSX, XLS, ODS, CSV) as exhibits: every sheet rendered as LibreOffice prints it, hidden parts shown.

A workbook's pages are what printing it gives (LibreOffice Calc's PDF export, in the same sandbox as Word files:
:func:`matters.exhibits.ingest.convert.office_to_pdf`): cell values as displayed, never formulas, so the text of
each page is the figures a reader sees, searchable and indexed for the verifier's amount and date checks.

Hidden sheets, rows and columns are shown, as review platforms do, and reported: before rendering, a copy of the
workbook has them unhidden (the ``state`` of ``<sheet>`` in ``xl/workbook.xml`` and the ``hidden`` attribute of
``<row>`` and ``<col>`` in each worksheet, ECMA-376 Part 1 18.2.19, 18.3.1.73, 18.3.1.13), and each one is named
in the exhibit's notes. They are read with openpyxl. The copy printed also holds each formula's saved value in its
place and columns as wide as their text (:func:`printable_copy`): the page shows what Excel last showed, whole. An
XLS or ODS is first saved as XLSX by LibreOffice in the sandbox, so the same reading and unhiding apply to it. A
CSV is laid out as a workbook of one sheet, every field as the text written (no number or date guessing:
"03/04/2021" and "=1+1" stay as they are).

The original is never changed: all of this happens to copies in a temporary folder. Django-free: runs in the
ingest child.
"""

import csv
import io
import math
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
        report += printable_copy(xlsx, shown)
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
    cells = 0
    try:
        for row in csv.reader(io.StringIO(text, newline="")):
            cells += len(row)
            if max_cells and cells > max_cells:
                raise IngestFailure(_too_big(f"more than {max_cells:,} fields", max_cells))
            rows.append(row)
    except csv.Error as exc:
        raise IngestFailure(f"The CSV table could not be read ({exc}). The original is kept unchanged.") from exc
    for row in rows:  # columns are sized to their fields with every workbook's: printable_copy
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


def printable_copy(source: Path, target: Path) -> list[str]:
    """Copy the XLSX at ``source`` to ``target`` as it is printed; return notes naming the print areas set aside,
    the formulas LibreOffice had to calculate and any cell too long to print whole (empty when none). Every other
    part is copied byte for byte. Raises IngestFailure for a damaged package. In the copy:

    - every sheet is visible and no row or column hidden (a row hidden at height 0 gets its height back), and no
      print area leaves cells off the pages (:func:`_drop_print_areas`, named in a note);
    - a formula with a value saved in the file (``<v>`` beside ``<f>``, ECMA-376 Part 1 18.3.1.4) becomes that value:
      LibreOffice recalculates volatile functions on opening (``=TODAY()`` would print the day of printing, not the
      day the file was saved), so the page shows the figure Excel last showed. A formula with no saved value (a file
      written by a program that does not calculate) is left for LibreOffice to calculate, and named in a note;
    - each column is at least as wide as its widest cell's text as displayed (:func:`_display_chars`), up to
      _MAX_COLUMN_WIDTH characters: Calc cuts text at the edge of a cell whose neighbour holds a value, and prints
      ``###`` for a number wider than its column, so a narrow column would hide a figure or part of a label. Text
      longer than that wraps from the top of its cell (a copy of its style with ``wrapText``), its row as tall as the
      lines need up to _MAX_ROW_HEIGHT points (past that, named in a note).
    """
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    notes: list[str] = []
    try:
        with zipfile.ZipFile(source) as package, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
            names = set(package.namelist())
            strings = _shared_strings(package, names, parser)
            styles = _Styles(package, names, parser)
            titles = _sheet_titles(package, names, parser)
            # The sheets first: a cell too long for its column gets a wrapping style, added to the styles part.
            sheets = {}
            for info in package.infolist():
                if _WORKSHEET.fullmatch(info.filename):
                    root = etree.fromstring(package.read(info), parser)
                    calculated, cut = _prepare_sheet(root, strings, styles)
                    title = titles.get(info.filename, info.filename)
                    if calculated:
                        notes.append(f"Sheet “{title}”: {len(calculated)} formula cell(s) had no value saved in the "
                                     f"file ({_named(calculated)}); the values printed there were calculated by "
                                     "LibreOffice.")
                    if cut:
                        notes.append(f"Sheet “{title}”: cell(s) {_named(cut)} hold more text than a printed cell "
                                     f"shows ({int(_MAX_ROW_HEIGHT)} points of lines); the pages show the beginning, "
                                     "the native all of it.")
                    sheets[info.filename] = _xml(root)
            for info in package.infolist():
                data = sheets.get(info.filename) or package.read(info)
                if info.filename == "xl/workbook.xml":
                    root = etree.fromstring(data, parser)
                    for element in root.iter(f"{{{_MAIN}}}sheet"):
                        element.attrib.pop("state", None)
                    notes.extend(_drop_print_areas(root))
                    data = _xml(root)
                elif info.filename == styles.part and styles.changed:
                    data = _xml(styles.root)
                out.writestr(info, data)
    except (zipfile.BadZipFile, etree.XMLSyntaxError, OSError, KeyError, ValueError) as exc:
        raise IngestFailure(f"The spreadsheet is damaged and could not be read ({exc}). The original is kept "
                            "unchanged; ask the sender for a new copy.") from exc
    return notes


def _drop_print_areas(workbook) -> list[str]:
    """Remove the print areas (defined names ``_xlnm.Print_Area``, ECMA-376 Part 1 18.2.5) of the ``workbook.xml``
    root ``workbook``, in place: Calc prints only a sheet's print area, and a cell outside it would be left off the
    pages without a word. Return a note for each sheet that had one."""
    titles = [sheet.get("name", "") for sheet in workbook.iter(_q("sheet"))]
    notes = []
    for names in workbook.iter(_q("definedNames")):
        for name in list(names):
            if name.get("name", "").lower() != "_xlnm.print_area":
                continue
            index = name.get("localSheetId", "")
            title = titles[int(index)] if index.isdigit() and int(index) < len(titles) else "?"
            notes.append(f"Sheet “{title}”: its print area ({(name.text or '').strip()[:200]}) is set aside; every "
                         "cell of the sheet is printed.")
            names.remove(name)
        if len(names) == 0:
            names.getparent().remove(names)
    return notes


def _named(cells: list[str]) -> str:
    """``["B2", "B3"]`` -> ``B2, B3``; past _NAMED_MAX cells, the rest is counted."""
    more = f" and {len(cells) - _NAMED_MAX} more" if len(cells) > _NAMED_MAX else ""
    return ", ".join(cells[:_NAMED_MAX]) + more


def _xml(root) -> bytes:
    from lxml import etree

    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def _q(tag: str) -> str:
    return f"{{{_MAIN}}}{tag}"


def _text_of(element) -> str:
    """The text of a ``<si>`` or ``<is>`` element: its runs' ``<t>``, without phonetic guides (``<rPh>``)."""
    return "".join(t.text or "" for t in element.iter(_q("t")) if t.getparent().tag != _q("rPh"))


def _part_targets(package: zipfile.ZipFile, names: set[str], parser) -> dict[str, str]:
    """The workbook's relationships: id -> part name inside the package (``rId3`` -> ``xl/worksheets/sheet1.xml``),
    plus each relationship type's last word -> part name (``styles`` -> ``xl/styles.xml``)."""
    from lxml import etree

    rels = "xl/_rels/workbook.xml.rels"
    if rels not in names:
        return {}
    targets = {}
    for rel in etree.fromstring(package.read(rels), parser):
        target = rel.get("Target", "")
        target = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
        targets[rel.get("Id", "")] = target
        targets[rel.get("Type", "").rsplit("/", 1)[-1]] = target
    return targets


def _sheet_titles(package: zipfile.ZipFile, names: set[str], parser) -> dict[str, str]:
    """Worksheet part name -> the sheet's title."""
    from lxml import etree

    targets = _part_targets(package, names, parser)
    root = etree.fromstring(package.read("xl/workbook.xml"), parser)
    rel_id = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    return {targets.get(sheet.get(rel_id, ""), ""): sheet.get("name", "") for sheet in root.iter(_q("sheet"))}


def _shared_strings(package: zipfile.ZipFile, names: set[str], parser) -> list[str]:
    from lxml import etree

    part = _part_targets(package, names, parser).get("sharedStrings", "xl/sharedStrings.xml")
    if part not in names:
        return []
    return [_text_of(item) for item in etree.fromstring(package.read(part), parser).iter(_q("si"))]


class _Styles:
    """What a cell's style index (``s``) says about its width on the page: its number format code and how much
    wider than the workbook's default font its font is (size, bold); and, through :meth:`wrapping`, a copy of a
    style that wraps text within its cell (``changed`` then: ``root`` is written in place of ``part``)."""

    def __init__(self, package: zipfile.ZipFile, names: set[str], parser):
        from lxml import etree
        from openpyxl.styles.numbers import BUILTIN_FORMATS

        self.formats: list[str] = []
        self.scales: list[float] = []
        self.root = None
        self.changed = False
        self._wrapping: dict[int, int] = {}
        self.part = part = _part_targets(package, names, parser).get("styles", "xl/styles.xml")
        if part not in names:
            return
        self.root = root = etree.fromstring(package.read(part), parser)
        codes = dict(BUILTIN_FORMATS)
        for fmt in root.iter(_q("numFmt")):
            codes[int(fmt.get("numFmtId", "0"))] = fmt.get("formatCode", "General")
        fonts = []
        for font in root.iterfind(f"{_q('fonts')}/{_q('font')}"):
            size = font.find(_q("sz"))
            bold = font.find(_q("b"))
            fonts.append(float(size.get("val", "11")) if size is not None else 11.0)
            fonts[-1] *= 1.1 if bold is not None and bold.get("val", "1") not in ("0", "false") else 1.0
        base = fonts[0] if fonts and fonts[0] else 11.0
        for xf in root.iterfind(f"{_q('cellXfs')}/{_q('xf')}"):
            self.formats.append(codes.get(int(xf.get("numFmtId", "0")), "General"))
            font = int(xf.get("fontId", "0"))
            self.scales.append(max(1.0, fonts[font] / base) if font < len(fonts) else 1.0)

    def wrapping(self, index: str | None) -> str | None:
        """The style index (``s``) of a copy of style ``index`` whose text wraps within the cell, from its top;
        None where the workbook has no cell styles to copy."""
        from copy import deepcopy

        from lxml import etree

        number = int(index) if index and index.isdigit() else 0
        xfs = self.root.find(_q("cellXfs")) if self.root is not None else None
        if xfs is None or number >= len(xfs):
            return None
        if number not in self._wrapping:
            xf = deepcopy(xfs[number])
            alignment = xf.find(_q("alignment"))
            if alignment is None:
                alignment = etree.Element(_q("alignment"))
                xf.insert(0, alignment)  # <alignment> comes first in <xf> (ECMA-376 Part 1 18.8.45)
            alignment.set("wrapText", "1")
            alignment.set("vertical", "top")  # a cell taller than its row then loses its end, not its beginning
            xf.set("applyAlignment", "1")
            xfs.append(xf)
            xfs.set("count", str(len(xfs)))
            self.formats.append(self.formats[number])
            self.scales.append(self.scales[number])
            self._wrapping[number] = len(xfs) - 1
            self.changed = True
        return str(self._wrapping[number])

    def of(self, index: str | None) -> tuple[str, float]:
        number = int(index) if index and index.isdigit() else 0
        if number < len(self.formats):
            return self.formats[number], self.scales[number]
        return "General", 1.0


# The widest a column is made, in characters: about a page's width, so a long note is not pushed onto pages of its
# own. A text cell longer than this wraps within its cell instead, its row as tall as the lines need.
_MAX_COLUMN_WIDTH = 90
# A line of 11-point text takes 15 points of row height (Excel's default row); a row is at most 409 points tall
# (Excel's limit, ECMA-376 Part 1 18.3.1.73 ``ht``), about 27 lines.
_LINE_HEIGHT, _MAX_ROW_HEIGHT = 15.0, 409.0
_DEFAULT_COLUMN_WIDTH = 8.43  # Excel's default for an 11-point Calibri workbook, ECMA-376 Part 1 18.3.1.81
_CELL_REF = re.compile(r"([A-Z]+)([0-9]+)")


def _prepare_sheet(root, strings: list[str], styles: _Styles) -> tuple[list[str], list[str]]:
    """Unhide the rows and columns of the worksheet ``root``, put saved values in place of formulas and widen its
    columns to their text, in place (see :func:`printable_copy`). Return the references of formula cells without a
    saved value (``["C10"]``), and of cells whose text is longer than the tallest row shows."""
    from lxml import etree
    from openpyxl.utils import column_index_from_string

    for element in root.iter(_q("row"), _q("col")):
        if element.attrib.pop("hidden", None) is not None and element.tag == _q("row") \
                and _float(element.get("ht")) == 0:
            element.attrib.pop("ht", None)
            element.attrib.pop("customHeight", None)
    cells = list(root.iter(_q("c")))
    # A shared formula is written once, in its first cell; a later cell of the group without a saved value needs it.
    needed_shared = {f.get("si") for c in cells if (f := c.find(_q("f"))) is not None and f.get("t") == "shared"
                     and not _saved(c)}
    calculated: list[str] = []
    uncut: list[str] = []
    widths: dict[int, float] = {}
    for cell in cells:
        formula = cell.find(_q("f"))
        value = cell.find(_q("v"))
        saved = _saved(cell)
        if formula is not None:
            if not saved:
                calculated.append(cell.get("r", "?"))
            elif not (formula.get("t") == "shared" and formula.get("ref") and formula.get("si") in needed_shared):
                cell.remove(formula)
                if cell.get("t") == "str":  # a formula's text result: kept as the text it is
                    cell.set("t", "inlineStr")
                    cell.remove(value)
                    inline = etree.SubElement(cell, _q("is"))
                    text = etree.SubElement(inline, _q("t"))
                    text.text = value.text or ""
                    text.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        match = _CELL_REF.match(cell.get("r", ""))
        if match:
            column = column_index_from_string(match.group(1))
            chars = _display_chars(cell, strings, styles) if saved or formula is None else 12.0
            widths[column] = max(widths.get(column, 0.0), _column_width(chars))
            if _column_width(chars) >= _MAX_COLUMN_WIDTH and cell.get("t") in ("s", "inlineStr") \
                    and (wrapped := styles.wrapping(cell.get("s"))) is not None:
                # Too long for any column: wrapped within its cell, its row made as tall as the lines need (Calc
                # 7.4 takes a row's height from the file, and lets a wrapped cell's first lines fall off its top).
                cell.set("s", wrapped)
                row = cell.getparent()
                lines = _wrapped_lines(cell, strings, styles, _MAX_COLUMN_WIDTH)
                height = lines * _LINE_HEIGHT * styles.of(wrapped)[1] + 2
                if height > _MAX_ROW_HEIGHT:
                    uncut.append(cell.get("r", "?"))
                row.set("ht", str(round(max(_float(row.get("ht")) or 0.0, min(height, _MAX_ROW_HEIGHT)), 1)))
                row.set("customHeight", "1")
    _widen(root, {column: width for column, width in widths.items() if width})
    return calculated, uncut


def _saved(cell) -> bool:
    """Whether ``cell`` holds a value saved in the file: an empty ``<v>`` is one only for a text result (``t="str"``,
    a formula giving ""); a number is never empty."""
    value = cell.find(_q("v"))
    return value is not None and (bool(value.text) or cell.get("t") == "str")


def _column_width(chars: float) -> float:
    """A column's width (in characters of the default font, as ``<col width>``) that shows ``chars`` characters
    whole: 15% more for letters wider than a digit, and a character's margin each side; at most _MAX_COLUMN_WIDTH."""
    return min(_MAX_COLUMN_WIDTH, round(chars * 1.15 + 2, 1)) if chars else 0.0


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _cell_text(cell, strings: list[str]) -> str | None:
    """The text a text, boolean or error ``cell`` shows; None for a number or date."""
    kind = cell.get("t", "n")
    raw = cell.findtext(_q("v")) or ""
    if kind == "s":
        return strings[int(raw)] if raw.isdigit() and int(raw) < len(strings) else ""
    if kind == "inlineStr":
        inline = cell.find(_q("is"))
        return _text_of(inline) if inline is not None else ""
    if kind == "b":
        return "FALSE"
    return None if kind in ("n", "d") and raw else raw


def _display_chars(cell, strings: list[str], styles: _Styles) -> float:
    """About how many characters of the default font the value of ``cell`` takes on the page: its longest line of
    text, or its number as its format shows it (thousands separators, decimals, dates with month names)."""
    fmt, scale = styles.of(cell.get("s"))
    text = _cell_text(cell, strings)
    if text is None:
        return _number_chars(cell.findtext(_q("v")) or "", fmt) * scale
    return max((len(line) for line in text.splitlines()), default=0) * scale


def _wrapped_lines(cell, strings: list[str], styles: _Styles, width: float) -> int:
    """How many lines the text of ``cell`` takes wrapped in a column ``width`` characters wide (estimated as
    :func:`_column_width` sizes a column)."""
    _, scale = styles.of(cell.get("s"))
    per_line = max(1.0, (width - 2) / 1.15)
    lines = (_cell_text(cell, strings) or "").split("\n")
    return sum(max(1, math.ceil(len(line) * scale / per_line)) for line in lines)


def _number_chars(raw: str, fmt: str) -> float:
    """Characters a number stored as ``raw`` takes when shown with the format code ``fmt`` (an estimate that errs
    wide: a date's month and day names at their longest, every literal character counted)."""
    from openpyxl.styles.numbers import is_date_format

    section = fmt.split(";")[0]
    plain = re.sub(r"\[[^\]]*\]|\"[^\"]*\"|\\.|_.|\*.", "", section)  # colours, literals, padding
    literals = sum(len(lit) - 2 for lit in re.findall(r"\"[^\"]*\"", section)) + len(re.findall(r"\\.", section))
    if section in ("General", "@", ""):
        value = _float(raw)
        return float(min(len(raw), 11) if value is None or abs(value) < 1e11 else 11)
    if is_date_format(section):
        words = re.sub(r"(?i)m{4,}|d{4,}", "x" * 9, plain)  # September, Wednesday
        words = re.sub(r"(?i)m{3}|d{3}", "xxx", words)
        return float(len(words) + literals + 2)
    value = _float(raw) or 0.0
    if "E" in plain.upper():
        return float(len(plain) + literals + 4)
    if "%" in plain:
        value *= 100
    decimals = len(re.sub(r"[^0#?]", "", plain.split(".", 1)[1])) if "." in plain else 0
    digits = f"{abs(value):,.{decimals}f}" if "," in plain else f"{abs(value):.{decimals}f}"
    others = len(re.sub(r"[0#?.,]", "", plain))  # currency signs, %, spaces, brackets
    return float(len(digits) + others + literals + 1)  # one for a minus sign


def _widen(root, needed: dict[int, float]) -> None:
    """Set each column of ``needed`` (1-based index -> width in characters) at least that wide in the worksheet
    ``root``, splitting ``<col>`` ranges where only some of their columns grow."""
    from lxml import etree

    if not needed:
        return
    form = root.find(_q("sheetFormatPr"))
    default = _float(form.get("defaultColWidth")) if form is not None else None
    default = default or _DEFAULT_COLUMN_WIDTH
    cols = root.find(_q("cols"))
    data = root.find(_q("sheetData"))
    if cols is None:
        if data is None:
            return
        cols = etree.Element(_q("cols"))  # its place: just before <sheetData> (ECMA-376 Part 1 18.3.1.99)
    covered: set[int] = set()
    pieces = []
    for col in list(cols):
        low, high = int(col.get("min", "1")), int(col.get("max", col.get("min", "1")))
        width = _float(col.get("width")) or default
        grow = sorted(c for c in needed if low <= c <= high and needed[c] > width)
        covered.update(c for c in needed if low <= c <= high)
        if not grow:
            pieces.append(col)
            continue
        # Split [low, high] into runs that keep their width and single columns that grow.
        start = low
        for column in grow + [high + 1]:
            if start < column:
                pieces.append(_col_copy(col, start, column - 1, None))
            if column <= high:
                pieces.append(_col_copy(col, column, column, needed[column]))
            start = column + 1
    for column, width in needed.items():
        if column not in covered and width > default:
            pieces.append(etree.Element(_q("col"), min=str(column), max=str(column), width=str(width),
                                        customWidth="1"))
    if not pieces:
        return
    if cols.getparent() is None:
        data.addprevious(cols)
    for col in list(cols):
        cols.remove(col)
    for col in sorted(pieces, key=lambda element: int(element.get("min", "1"))):
        cols.append(col)


def _col_copy(col, low: int, high: int, width: float | None):
    from copy import deepcopy

    piece = deepcopy(col)
    piece.set("min", str(low))
    piece.set("max", str(high))
    if width is not None:
        piece.set("width", str(width))
        piece.set("customWidth", "1")
    return piece
