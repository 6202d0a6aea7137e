"""Find redactions that only look real: a dark filled box over text that is still in the file.

Drawing a black rectangle over text (or a black-filled annotation) hides it from the eye only; the text stays in
the content stream and copies out of any viewer. A character counts as hidden when its centre lies inside a dark
box and it cannot be seen there: it is dark itself (black on black, whatever the drawing order), or it was drawn
before the box (the box paints over it). Light text drawn after a dark box (white on a black table header) is
readable and is not reported. Thin rules (underlines) are ignored: a box must be at least MIN_BOX_PT high and wide.

What this does not see: a box that is an image rather than a vector path or annotation, and scanned pages (their
"text" is pixels; a box on a scan removes the pixels under it). This module imports nothing from Django.

Reading a page's drawings (``get_drawings``) interprets the whole page again and costs most of what reading its text
does, yet most pages fill no dark area at all. :func:`read_text` therefore reads the text and, in the same pass, the
bounds and colour of every vector path (MuPDF's structured text with ``FZ_STEXT_COLLECT_VECTORS``); the drawings are
read only on a page where that shows a dark fill (:func:`may_hide_text`). The pre-test is looser than the check
itself, so it never passes over a box the check would find.
"""

import ctypes
from dataclasses import dataclass

import pymupdf

mupdf = pymupdf.mupdf

MIN_BOX_PT = 4.0
# Relative luminance (0-1) below which a fill counts as a redaction colour, and the largest difference between
# text and box luminance at which text on the box cannot be read.
DARK_LUMINANCE = 0.25
MIN_CONTRAST = 0.3
# Annotation types that can paint a filled area over text.
_FILLED_ANNOTATIONS = {pymupdf.PDF_ANNOT_SQUARE, pymupdf.PDF_ANNOT_POLYGON, pymupdf.PDF_ANNOT_REDACT,
                       pymupdf.PDF_ANNOT_HIGHLIGHT, pymupdf.PDF_ANNOT_INK}


@dataclass(frozen=True)
class HiddenText:
    """A box (x0, y0, x1, y1 in points on the page as displayed, top-left origin) and the words under it."""

    rect: tuple[float, float, float, float]
    text: str


def _luminance(color) -> float | None:
    if color is None:
        return None
    values = list(color)
    if len(values) == 1:
        return float(values[0])
    if len(values) == 3:
        red, green, blue = values
        return 0.2126 * red + 0.7152 * green + 0.0722 * blue
    if len(values) == 4:  # CMYK
        cyan, magenta, yellow, black = values
        return (1 - min(1, cyan + black)) * 0.2126 + (1 - min(1, magenta + black)) * 0.7152 + (
            1 - min(1, yellow + black)) * 0.0722
    return None


@dataclass
class _Box:
    rect: pymupdf.Rect
    luminance: float
    seqno: int  # drawing order; annotations are painted after all page content


def _dark_boxes(page: pymupdf.Page, drawings: bool = True) -> list[_Box]:
    boxes = []
    for drawing in page.get_drawings() if drawings else ():
        if "f" not in (drawing.get("type") or ""):
            continue
        luminance = _luminance(drawing.get("fill"))
        opacity = drawing.get("fill_opacity")
        if luminance is None or luminance > DARK_LUMINANCE or (opacity is not None and opacity < 0.9):
            continue
        rect = pymupdf.Rect(drawing["rect"])
        if rect.width >= MIN_BOX_PT and rect.height >= MIN_BOX_PT:
            boxes.append(_Box(rect, luminance, drawing.get("seqno", 0)))
    for annot in page.annots() or []:
        if annot.type[0] not in _FILLED_ANNOTATIONS:
            continue
        colors = annot.colors or {}
        fill = colors.get("fill") or (colors.get("stroke") if annot.type[0] in (
            pymupdf.PDF_ANNOT_HIGHLIGHT, pymupdf.PDF_ANNOT_INK) else None)
        luminance = _luminance(fill)
        if luminance is None or luminance > DARK_LUMINANCE or (annot.opacity not in (-1, None) and annot.opacity < 0.9):
            continue
        rect = pymupdf.Rect(annot.rect)
        if rect.width >= MIN_BOX_PT and rect.height >= MIN_BOX_PT:
            boxes.append(_Box(rect, luminance, 1 << 30))
    return boxes


def _hidden_char_centres(page: pymupdf.Page, boxes: list[_Box]) -> dict[int, list[pymupdf.Point]]:
    """Centres of hidden characters, by index of the box that hides them."""
    hidden: dict[int, list[pymupdf.Point]] = {}
    for span in page.get_texttrace():
        if span.get("type") == 3:  # invisible text (an OCR layer under a scan) is not drawn at all
            continue
        text_luminance = _luminance(span.get("color")) or 0.0
        for char in span["chars"]:
            bbox = pymupdf.Rect(char[3])
            if chr(char[0]).isspace() or bbox.is_empty:
                continue
            centre = pymupdf.Point((bbox.x0 + bbox.x1) / 2, (bbox.y0 + bbox.y1) / 2)
            for index, box in enumerate(boxes):
                if centre not in box.rect:
                    continue
                painted_over = box.seqno > span["seqno"]
                unreadable = abs(text_luminance - box.luminance) < MIN_CONTRAST
                if painted_over or unreadable:
                    hidden.setdefault(index, []).append(centre)
                    break
    return hidden


def find_hidden_text(page: pymupdf.Page, drawings: bool = True) -> list[HiddenText]:
    """Return each dark box on ``page`` that hides extractable text, with the words under it (in reading order).

    ``drawings=False`` skips reading the page's vector drawings, for a page :func:`may_hide_text` cleared: only its
    annotations can then hold a box. Coordinates are turned into the displayed page's space
    (``page.rotation_matrix``)."""
    boxes = _dark_boxes(page, drawings)
    if not boxes:
        return []
    hidden = _hidden_char_centres(page, boxes)
    if not hidden:
        return []
    words = page.get_text("words", sort=True)
    found = []
    for index, centres in sorted(hidden.items()):
        box = boxes[index]
        under = [w[4] for w in words if any(c in pymupdf.Rect(w[:4]) for c in centres)]
        if not under:
            continue
        shown = box.rect * page.rotation_matrix
        shown.normalize()
        found.append(HiddenText(tuple(round(v, 2) for v in shown), " ".join(under)))
    return found


# --- the pre-test ---------------------------------------------------------------------------------------------

# MuPDF's plain-text flags (what ``page.get_text("text")`` uses) with the page's vector paths collected in the same
# pass. LAZY keeps each path out of the text line it crosses (an underline would otherwise split the line), so the
# text is the same as ``get_text("text")`` gives.
TEXT_AND_VECTORS = pymupdf.TEXTFLAGS_TEXT | mupdf.FZ_STEXT_COLLECT_VECTORS | mupdf.FZ_STEXT_LAZY_VECTORS
# Looser than the check's own limits: MuPDF reports a colour converted to RGB (a CMYK fill reads lighter than the
# check's own conversion), a path split into its rectangles, each cut to the clip, so a fill counts here when it may
# be dark, opaque and large enough once its pieces are put together.
_MAY_BE_DARK = 0.6
_MAY_BE_OPAQUE = 0.85
_MAY_BE_BOX_PT = MIN_BOX_PT - 0.5


class _VectorBlock(ctypes.Structure):
    """MuPDF's ``fz_stext_block`` (fitz/structured-text.h, MuPDF 1.26-1.28): the Python bindings give a block's
    type and bounds but not the union holding a vector's flags and colour, and stepping through the blocks with
    them costs about 10 us a block (a court page has 25), a sixth of what reading the page's text costs; so the
    blocks are read here as a C list: the union's largest member (an image block's matrix and pointer) is 32 bytes,
    and ``prev`` and ``next`` follow it."""

    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int), ("x0", ctypes.c_float), ("y0", ctypes.c_float),
                ("x1", ctypes.c_float), ("y1", ctypes.c_float), ("flags", ctypes.c_uint32), ("argb", ctypes.c_uint32),
                ("_union_rest", ctypes.c_byte * 24), ("prev", ctypes.c_void_p), ("next", ctypes.c_void_p)]


# Whether _VectorBlock matches the MuPDF loaded here: None until the first page with blocks is read both ways.
_layout_checked: list[bool] = []
# More blocks than any page holds: a list this long is not read as this module expects.
_MAX_BLOCKS = 1_000_000


def read_text(page: pymupdf.Page) -> tuple[str, bool]:
    """Return the page's plain text (as ``page.get_text("text")``) and :func:`may_hide_text` for it, from one
    reading of the page. Raises what MuPDF raises for a page it cannot read."""
    textpage = page.get_textpage(flags=TEXT_AND_VECTORS)
    return textpage.extractText(), may_hide_text(textpage)


def may_hide_text(textpage: pymupdf.TextPage) -> bool:
    """Whether the page read into ``textpage`` (made with TEXT_AND_VECTORS) may fill a dark box: some filled vector
    path, its pieces put together, is dark, opaque and at least about MIN_BOX_PT each way. False means
    :func:`find_hidden_text` would find no box among the page's drawings. True also when the blocks cannot be read
    as this module expects (another MuPDF), so the full check runs."""
    page = textpage.this.m_internal
    first, last = _address(page.first_block), _address(page.last_block)
    if first is None or last is None:
        return True
    if not first:
        return False  # a page with no blocks at all
    if not _layout_checked:
        _layout_checked.append(_layout_matches(textpage, first))
    if not _layout_checked[0]:
        return _may_hide_text_by_bindings(textpage)
    blocks = _walk(first, last)
    if blocks is None:
        return True
    return _dark_piece(blocks)


def _address(block) -> int | None:
    """The C address of a block the bindings give (0 for none); None when the bindings give no address."""
    if block is None:
        return 0
    try:
        return int(block.this)
    except (AttributeError, TypeError, ValueError):
        return None


def _walk(first: int, last: int) -> list[_VectorBlock] | None:
    """The blocks from ``first`` along ``next``; None unless the list ends at ``last`` (the page's own last block)
    within _MAX_BLOCKS."""
    blocks = []
    address = first
    for _ in range(_MAX_BLOCKS):
        block = _VectorBlock.from_address(address)
        blocks.append(block)
        if address == last:
            return blocks if not block.next else None
        address = block.next
        if not address:
            return None
    return None


def _layout_matches(textpage: pymupdf.TextPage, first: int) -> bool:
    """Whether _VectorBlock reads the same blocks (types, bounds, each ``next`` pointing at the block after it) as
    the bindings' own iteration over ``textpage`` gives: checked once per process, on the first page that has
    blocks. No pointer is followed before the bindings have confirmed it."""
    try:
        expected = [(int(block.m_internal.this), block.m_internal.type, block.m_internal.bbox.x0,
                     block.m_internal.bbox.y0, block.m_internal.bbox.x1, block.m_internal.bbox.y1)
                    for block in textpage.this]
    except (AttributeError, TypeError, ValueError):
        return False
    if not expected or expected[0][0] != first:
        return False
    following = [address for address, *_ in expected[1:]] + [0]
    for (address, *fields), next_address in zip(expected, following, strict=True):
        block = _VectorBlock.from_address(address)
        if [block.type, block.x0, block.y0, block.x1, block.y1] != fields or (block.next or 0) != next_address:
            return False
    return True


def _dark_piece(blocks) -> bool:
    """Whether a filled, possibly dark and opaque path among ``blocks`` (_VectorBlock, in page order) covers at
    least about MIN_BOX_PT each way once the pieces of one path are put together."""
    piece: list[float] | None = None  # bounds of the filled path being put together
    for vector in blocks:
        if vector.type != mupdf.FZ_STEXT_BLOCK_VECTOR:
            continue
        if vector.flags & mupdf.FZ_STEXT_VECTOR_IS_STROKED or not _may_be_dark(vector.argb):
            piece = None
            continue
        if piece is None:
            piece = [vector.x0, vector.y0, vector.x1, vector.y1]
        else:
            piece = [min(piece[0], vector.x0), min(piece[1], vector.y0), max(piece[2], vector.x1),
                     max(piece[3], vector.y1)]
        if piece[2] - piece[0] >= _MAY_BE_BOX_PT and piece[3] - piece[1] >= _MAY_BE_BOX_PT:
            return True
        if not vector.flags & mupdf.FZ_STEXT_VECTOR_CONTINUES:
            piece = None  # the path's last piece
    return False


def _may_hide_text_by_bindings(textpage: pymupdf.TextPage) -> bool:
    """:func:`may_hide_text` through the bindings' iteration, each block checked against them: for a MuPDF whose
    block list _VectorBlock does not read."""
    blocks = []
    for block in textpage.this:
        raw = block.m_internal
        if raw.type != mupdf.FZ_STEXT_BLOCK_VECTOR:
            continue
        try:
            vector = _VectorBlock.from_address(int(raw.this))
        except (TypeError, ValueError):  # bindings that give no address: read the drawings
            return True
        bbox = raw.bbox
        if (vector.type, vector.x0, vector.y0, vector.x1, vector.y1) != (raw.type, bbox.x0, bbox.y0, bbox.x1, bbox.y1):
            return True
        blocks.append(vector)
    return _dark_piece(blocks)


def _may_be_dark(argb: int) -> bool:
    alpha, red, green, blue = (argb >> 24) & 255, (argb >> 16) & 255, (argb >> 8) & 255, argb & 255
    if alpha < _MAY_BE_OPAQUE * 255:
        return False
    return _luminance((red / 255, green / 255, blue / 255)) <= _MAY_BE_DARK
