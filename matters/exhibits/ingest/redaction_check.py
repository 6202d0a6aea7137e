"""Find redactions that only look real: text that is still in the file under something that hides it.

Drawing over text hides it from the eye only; the text stays in the content stream and copies out of any viewer.
Found here, each with the words it hides (:func:`find_hidden_text`):
- a dark filled box (vector path or filled annotation). A character counts as hidden when its centre lies inside
  it and it cannot be seen there: it is dark itself (black on black, whatever the drawing order), or it was drawn
  before the box. Light text drawn after a dark box (white on a black table header) is readable and is not
  reported. Thin rules (underlines) are ignored: a box must be at least MIN_BOX_PT high and wide;
- marker and hatching strokes: dark stroked paths at least MIN_STROKE_PT wide drawn after the text (a felt-tip
  line, a cross-hatch). A letter or digit counts as hidden when more than half of 9 points spread over its box lie
  under the strokes, so a strike-through line or a frame around a line hides nothing;
- a Redact annotation marked but never applied, whatever its fill (an outline only, an overlay with no fill):
  every viewer shows it and the text under it is still on the page;
- invisible text (render mode 3: how an OCR layer is stored under a scan) under a dark box, or under an area of
  the page that renders solid dark (a box painted into the scan's pixels): the words are in the file, readable;
- an image drawn over text drawn before it, where the page as rendered shows nothing of the character (its
  box renders as one flat colour);
- a Stamp or FreeText annotation over text (a picture or a box pasted on as an annotation, of any colour), and
  a light opaque fill drawn over text drawn before it ("white-out": a white or pale box), each where the page as
  rendered with its annotations shows nothing of the character. A highlight (drawn under the text, translucent,
  or multiplied over it), table shading drawn before the text and form fields hide nothing and are not reported.
This module imports nothing from Django.

Not found: text hidden by a clip, by being drawn off the page or in white on white (no box hides it), and boxes
on scans without a text layer (their "text" is pixels; a box on a scan removes the pixels under it).

Reading a page's drawings (``get_drawings``) interprets the whole page again and costs most of what reading its text
does, yet most pages fill no dark area at all. :func:`read_text` therefore reads the text and, in the same pass, the
bounds and colour of every vector path (MuPDF's structured text with ``FZ_STEXT_COLLECT_VECTORS``); the drawings are
read only on a page where that shows a dark fill (:func:`may_hide_text`), a dark stroke over a text block
(:func:`may_stroke_over_text`) or an opaque fill of any colour over one (:func:`may_fill_over_text`). The
pre-tests are looser than the check itself, so they never pass over a box, a stroke or a fill the check would
find. Images are looked at on a page that has any (its resources list one), invisible text
on a page that has some; the page is then rendered once, at RENDER_DPI.
"""

import ctypes
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import pymupdf

mupdf = pymupdf.mupdf

MIN_BOX_PT = 4.0
# A stroke this wide or wider can hide text (a felt-tip marker, the lines of a cross-hatch); a character is hidden
# when HATCH_POINTS of 9 points spread over its box (3 x 3) lie under the strokes: more than half; a strike-through
# line covers 3, a frame around the line none.
MIN_STROKE_PT = 1.0
HATCH_POINTS = 5
# A light fill over this share of the page or more is a background, not white-out.
MAX_WHITE_OUT_SHARE = 0.5
# The rendering that shows whether a character can be seen: a character box whose grey levels spread no more than
# FLAT_SPREAD (0-255) shows nothing of it; for invisible text, that flat area must also be dark (mean grey up to
# DARK_PIXEL_MEAN) to count as a box painted into a scan.
RENDER_DPI = 72
FLAT_SPREAD = 24
DARK_PIXEL_MEAN = 60
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
    # A stroked path: its segments (x0, y0, x1, y1) and half its line width; empty for a filled area.
    segments: list[tuple[float, float, float, float]] = field(default_factory=list)
    half_width: float = 0.0


def _segments(items) -> list[tuple[float, float, float, float]]:
    """A path's pieces as straight segments (a curve by its control polygon, a rectangle by its edges)."""
    segments = []
    for item in items:
        kind = item[0]
        if kind == "l":
            points = [item[1], item[2]]
        elif kind == "c":
            points = [item[1], item[2], item[3], item[4]]
        elif kind == "re":
            rect = item[1]
            points = [rect.tl, rect.tr, rect.br, rect.bl, rect.tl]
        elif kind == "qu":
            quad = item[1]
            points = [quad.ul, quad.ur, quad.lr, quad.ll, quad.ul]
        else:
            continue
        segments += [(p.x, p.y, q.x, q.y) for p, q in zip(points, points[1:])]
    return segments


def _dark_boxes(page: pymupdf.Page, drawn: list[dict]) -> list[_Box]:
    boxes = []
    for drawing in drawn:
        kind = drawing.get("type") or ""
        if "f" in kind:
            luminance = _luminance(drawing.get("fill"))
            opacity = drawing.get("fill_opacity")
            if luminance is not None and luminance <= DARK_LUMINANCE and (opacity is None or opacity >= 0.9):
                rect = pymupdf.Rect(drawing["rect"])
                if rect.width >= MIN_BOX_PT and rect.height >= MIN_BOX_PT:
                    boxes.append(_Box(rect, luminance, drawing.get("seqno", 0)))
                    continue
        if "s" in kind and (drawing.get("width") or 0) >= MIN_STROKE_PT:
            luminance = _luminance(drawing.get("color"))
            opacity = drawing.get("stroke_opacity")
            if luminance is not None and luminance <= DARK_LUMINANCE and (opacity is None or opacity >= 0.9):
                half = drawing["width"] / 2
                boxes.append(_Box(pymupdf.Rect(drawing["rect"]) + (-half, -half, half, half), luminance,
                                  drawing.get("seqno", 0), _segments(drawing.get("items") or []), half))
    for annot in page.annots() or []:
        if annot.type[0] not in _FILLED_ANNOTATIONS:
            continue
        rect = pymupdf.Rect(annot.rect)
        if annot.type[0] == pymupdf.PDF_ANNOT_REDACT:
            # Marked and never applied: whatever it shows, the text under it is still on the page.
            if rect.width >= MIN_BOX_PT and rect.height >= MIN_BOX_PT:
                boxes.append(_Box(rect, 0.0, 1 << 30))
            continue
        colors = annot.colors or {}
        fill = colors.get("fill") or (colors.get("stroke") if annot.type[0] in (
            pymupdf.PDF_ANNOT_HIGHLIGHT, pymupdf.PDF_ANNOT_INK) else None)
        luminance = _luminance(fill)
        if luminance is None or luminance > DARK_LUMINANCE or (annot.opacity not in (-1, None) and annot.opacity < 0.9):
            continue
        if rect.width >= MIN_BOX_PT and rect.height >= MIN_BOX_PT:
            boxes.append(_Box(rect, luminance, 1 << 30))
    return boxes


def _light_fills(page: pymupdf.Page, drawn: list[dict]) -> list[tuple[int, pymupdf.Rect]]:
    """Opaque fills lighter than a redaction colour, at least MIN_BOX_PT each way and under MAX_WHITE_OUT_SHARE of
    the page (a larger one is the page's background, which some writers paint last), with their drawing order:
    white-out if drawn over text (:func:`_hidden_by_pixels` decides from the rendered page)."""
    fills = []
    largest = MAX_WHITE_OUT_SHARE * abs(page.mediabox)
    for drawing in drawn:
        if "f" not in (drawing.get("type") or ""):
            continue
        luminance, opacity = _luminance(drawing.get("fill")), drawing.get("fill_opacity")
        rect = pymupdf.Rect(drawing["rect"])
        if (luminance is not None and luminance > DARK_LUMINANCE and (opacity is None or opacity >= 0.9)
                and rect.width >= MIN_BOX_PT and rect.height >= MIN_BOX_PT and abs(rect & page.mediabox) < largest):
            fills.append((drawing.get("seqno", 0), rect))
    return fills


# Annotations that paste a picture or a box over the page: drawn after all of its content.
_COVERING_ANNOTATIONS = (pymupdf.PDF_ANNOT_STAMP, pymupdf.PDF_ANNOT_FREE_TEXT)
_AFTER_CONTENT = 1 << 30


def _covering_annotations(page: pymupdf.Page) -> list[tuple[int, pymupdf.Rect]]:
    covers = []
    for annot in page.annots(types=_COVERING_ANNOTATIONS) or []:
        rect = pymupdf.Rect(annot.rect)
        if rect.width >= MIN_BOX_PT and rect.height >= MIN_BOX_PT:
            covers.append((_AFTER_CONTENT, rect))
    return covers


def _near(x: float, y: float, segment, half: float) -> bool:
    x0, y0, x1, y1 = segment
    dx, dy = x1 - x0, y1 - y0
    length = dx * dx + dy * dy
    t = 0.0 if length == 0 else max(0.0, min(1.0, ((x - x0) * dx + (y - y0) * dy) / length))
    ex, ey = x0 + t * dx - x, y0 + t * dy - y
    return ex * ex + ey * ey <= half * half


def _stroke_cover(bbox: pymupdf.Rect, box: _Box) -> int:
    """How many of 9 points spread over ``bbox`` (3 x 3) lie under the strokes of ``box``."""
    covered = 0
    for i in (1, 3, 5):
        for j in (1, 3, 5):
            x, y = bbox.x0 + bbox.width * i / 6, bbox.y0 + bbox.height * j / 6
            covered += any(_near(x, y, segment, box.half_width) for segment in box.segments)
    return covered


def _hidden_char_centres(page: pymupdf.Page, boxes: list[_Box]) -> dict[int, list[pymupdf.Point]]:
    """Centres of hidden characters, by index of the box that hides them."""
    hidden: dict[int, list[pymupdf.Point]] = {}
    for span in page.get_texttrace():
        invisible = span.get("type") == 3  # an OCR layer's text: not drawn, and readable all the same
        text_luminance = _luminance(span.get("color")) or 0.0
        for char in span["chars"]:
            bbox = pymupdf.Rect(char[3])
            if chr(char[0]).isspace() or bbox.is_empty:
                continue
            centre = pymupdf.Point((bbox.x0 + bbox.x1) / 2, (bbox.y0 + bbox.y1) / 2)
            for index, box in enumerate(boxes):
                if box.segments:
                    # Only letters and digits: a cross in a checkbox drawn over a blank line covers underscores.
                    if (not chr(char[0]).isalnum() or not bbox.intersects(box.rect)
                            or _stroke_cover(bbox, box) < HATCH_POINTS):
                        continue
                elif centre not in box.rect:
                    continue
                painted_over = box.seqno > span["seqno"]
                unreadable = abs(text_luminance - box.luminance) < MIN_CONTRAST
                if painted_over or unreadable or invisible:
                    hidden.setdefault(index, []).append(centre)
                    break
    return hidden


def find_hidden_text(page: pymupdf.Page, drawings: bool = True) -> list[HiddenText]:
    """Return each box, stroke, unapplied Redact annotation, image, Stamp or FreeText annotation, white-out or
    solid dark area on ``page`` that hides extractable text, with the words under it (in reading order); see the
    module docstring.

    ``drawings=False`` skips reading the page's vector drawings, for a page :func:`may_hide_text`,
    :func:`may_stroke_over_text` and :func:`may_fill_over_text` cleared: only its annotations, images and
    rendered dark areas can then hide text. Coordinates are turned into the displayed page's space
    (``page.rotation_matrix``)."""
    drawn = page.get_drawings() if drawings else []
    boxes = _dark_boxes(page, drawn)
    found = []
    words = None
    if boxes:
        hidden = _hidden_char_centres(page, boxes)
        if hidden:
            words = page.get_text("words", sort=True)
        for index, centres in sorted(hidden.items()):
            box = boxes[index]
            under = [w[4] for w in words if any(c in pymupdf.Rect(w[:4]) for c in centres)]
            if under:
                found.append(_shown(page, box.rect, under))
    taken = [pymupdf.Rect(item.rect) for item in found]
    covers = _light_fills(page, drawn) + _covering_annotations(page)
    found += [item for item in _hidden_by_pixels(page, covers) if not any(
        pymupdf.Rect(item.rect).intersects(rect) for rect in taken)]
    return found


def _shown(page: pymupdf.Page, rect: pymupdf.Rect, under: list[str]) -> HiddenText:
    shown = pymupdf.Rect(rect) * page.rotation_matrix
    shown.normalize()
    return HiddenText(tuple(round(v, 2) for v in shown), " ".join(under))


# --- images over text, and invisible text under dark pixels ----------------------------------------------------

def _flat(samples, width: int, height: int, rect: pymupdf.Rect, scale: float):
    """The pixels of ``rect`` (page points) in a grey rendering: (mean, spread), or None when under a pixel."""
    x0, y0 = max(0, int(rect.x0 * scale)), max(0, int(rect.y0 * scale))
    x1, y1 = min(width, int(rect.x1 * scale) + 1), min(height, int(rect.y1 * scale) + 1)
    if x1 - x0 < 1 or y1 - y0 < 1:
        return None
    area = samples[y0:y1, x0:x1]
    return float(area.mean()), int(area.max()) - int(area.min())


_INVISIBLE_MODE = re.compile(rb"(?<![\w.])3\s+Tr\b")


def _may_have_invisible_text(page: pymupdf.Page) -> bool:
    """Whether the page's content or one of its forms sets text render mode 3 (invisible, ISO 32000-1, 9.3.6)."""
    doc = page.parent
    try:
        streams = [page.read_contents()] + [doc.xref_stream(item[0]) or b"" for item in page.get_xobjects()]
    except Exception:  # a stream MuPDF cannot decode: look at the page's text as drawn instead
        return True
    return any(_INVISIBLE_MODE.search(data) for data in streams)


def _hidden_by_pixels(page: pymupdf.Page, covers: list[tuple[int, pymupdf.Rect]] = ()) -> list[HiddenText]:
    """Text an image, or one of ``covers`` ((drawing order, rect): light fills, covering annotations), drawn after
    it covers (the rendered page shows its box as one flat colour), and invisible text (an OCR layer) on an area
    that renders solid dark; one item per image or cover, or per line of such words."""
    has_images = bool(page.get_images(full=False))
    if not has_images and not covers and not _may_have_invisible_text(page):
        return []  # most pages: nothing to render
    spans = [span for span in page.get_texttrace() if span["chars"]]
    invisible = [span for span in spans if span.get("type") == 3]
    if not spans or not (has_images or covers or invisible):
        return []
    images = []
    if has_images:
        images = [(seqno, pymupdf.Rect(rect)) for seqno, (kind, rect) in enumerate(page.get_bboxlog())
                  if kind in ("fill-image", "fill-imgmask")]
    images += list(covers)
    candidates: dict[int, list[pymupdf.Rect]] = {}  # image index (or -1: dark pixels) -> hidden character boxes
    for span in spans:
        mode3 = span.get("type") == 3
        sx0, sy0, sx1, sy1 = span["bbox"]
        # Only images drawn after the span, over some of it, can hide it (an OCR layer hides nothing of its own).
        overs = [] if mode3 else [i for i, (seqno, r) in enumerate(images) if seqno > span["seqno"]
                                  and r.x0 < sx1 and sx0 < r.x1 and r.y0 < sy1 and sy0 < r.y1]
        if not overs and not mode3:
            continue
        for char in span["chars"]:
            x0, y0, x1, y1 = char[3]
            if chr(char[0]).isspace() or x1 <= x0 or y1 <= y0:
                continue
            x, y = (x0 + x1) / 2, (y0 + y1) / 2
            if mode3:
                candidates.setdefault(-1, []).append(pymupdf.Rect(x0, y0, x1, y1))
                continue
            over = next((i for i in overs if images[i][1].x0 <= x <= images[i][1].x1
                         and images[i][1].y0 <= y <= images[i][1].y1), None)
            if over is not None:
                candidates.setdefault(over, []).append(pymupdf.Rect(x0, y0, x1, y1))
    if not candidates:
        return []
    import numpy  # only pages with images or invisible text get here

    pixmap = page.get_pixmap(dpi=RENDER_DPI, colorspace=pymupdf.csGRAY, alpha=False, annots=True)
    samples = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8).reshape(pixmap.height, pixmap.width)
    # The rendering is of the page as displayed; character boxes are in unrotated page space.
    to_shown = page.rotation_matrix
    scale = RENDER_DPI / 72
    words = page.get_text("words", sort=True)
    found = []
    for index, boxes in sorted(candidates.items()):
        hidden = []
        for bbox in boxes:
            shown = (bbox * to_shown).normalize()
            flat = _flat(samples, pixmap.width, pixmap.height, shown, scale)
            if flat is None:
                continue
            mean, spread = flat
            if spread <= FLAT_SPREAD and (index >= 0 or mean <= DARK_PIXEL_MEAN):
                hidden.append((bbox.tl + bbox.br) / 2)
        if not hidden:
            continue
        under = [w for w in words if any(c in pymupdf.Rect(w[:4]) for c in hidden)]
        if index >= 0:
            found.append(_shown(page, images[index][1], [w[4] for w in under]))
            continue
        lines: dict[tuple[int, int], list] = {}
        for word in under:
            lines.setdefault((word[5], word[6]), []).append(word)
        for line in lines.values():
            rect = pymupdf.Rect()
            for word in line:
                rect |= pymupdf.Rect(word[:4])
            found.append(_shown(page, rect, [w[4] for w in line]))
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


def read_page(page: pymupdf.Page) -> tuple[str, bool]:
    """Return the page's plain text (as ``page.get_text("text")``) and whether :func:`find_hidden_text` must read
    its drawings (:func:`may_hide_text`, :func:`may_stroke_over_text` or :func:`may_fill_over_text`), from one
    reading of the page. Raises what MuPDF raises for a page it cannot read."""
    textpage = page.get_textpage(flags=TEXT_AND_VECTORS)
    return textpage.extractText(), (may_hide_text(textpage) or may_stroke_over_text(textpage)
                                    or may_fill_over_text(textpage))


def _read_blocks(textpage: pymupdf.TextPage) -> list | None:
    """The blocks of the page read into ``textpage`` as MuPDF's C list holds them ([] for a page with none), or
    None when they cannot be read as this module expects (another MuPDF's layout): the caller then assumes the
    worst."""
    page = textpage.this.m_internal
    first, last = _address(page.first_block), _address(page.last_block)
    if first is None or last is None:
        return None
    if not first:
        return []
    if not _layout_checked:
        _layout_checked.append(_layout_matches(textpage, first))
    return _walk(first, last) if _layout_checked[0] else None


def may_fill_over_text(textpage: pymupdf.TextPage) -> bool:
    """Whether the page read into ``textpage`` (made with TEXT_AND_VECTORS) fills a possibly opaque path of any
    colour, at least about MIN_BOX_PT each way once its pieces are put together, across a block of text (white-out
    may hide it; shading under the text does not, which the check tells apart). True also when the blocks cannot be
    read as this module expects."""
    blocks = _read_blocks(textpage)
    if blocks is None:
        return True
    texts = [(b.x0, b.y0, b.x1, b.y1) for b in blocks if b.type == mupdf.FZ_STEXT_BLOCK_TEXT]
    if not texts:
        return False
    return any(piece[2] - piece[0] >= _MAY_BE_BOX_PT and piece[3] - piece[1] >= _MAY_BE_BOX_PT and any(
                   piece[0] < x1 and x0 < piece[2] and piece[1] < y1 and y0 < piece[3] for x0, y0, x1, y1 in texts)
               for piece in _filled_pieces(blocks, _may_be_opaque))


# A stroked path's bounds include its width: a path this thick or thicker each way may be a stroke of at least
# MIN_STROKE_PT (a hairline rule's bounds are about 1 pt high).
_MAY_BE_STROKE_PT = MIN_STROKE_PT + 0.5


def may_stroke_over_text(textpage: pymupdf.TextPage) -> bool:
    """Whether the page read into ``textpage`` (made with TEXT_AND_VECTORS) strokes a possibly dark, opaque path at
    least about MIN_STROKE_PT thick across a block of text. True also when the blocks cannot be read as this
    module expects."""
    blocks = _read_blocks(textpage)
    if blocks is None:
        return True
    texts = [(b.x0, b.y0, b.x1, b.y1) for b in blocks if b.type == mupdf.FZ_STEXT_BLOCK_TEXT]
    for vector in blocks:
        if (vector.type != mupdf.FZ_STEXT_BLOCK_VECTOR or not vector.flags & mupdf.FZ_STEXT_VECTOR_IS_STROKED
                or not _may_be_dark(vector.argb) or vector.x1 - vector.x0 < _MAY_BE_STROKE_PT
                or vector.y1 - vector.y0 < _MAY_BE_STROKE_PT):
            continue
        if any(vector.x0 < x1 and x0 < vector.x1 and vector.y0 < y1 and y0 < vector.y1 for x0, y0, x1, y1 in texts):
            return True
    return False


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


def _filled_pieces(blocks, colour_may_hide) -> Iterator[list[float]]:
    """The bounds ``[x0, y0, x1, y1]`` of each filled path among ``blocks`` (_VectorBlock, in page order) whose
    colour ``colour_may_hide(argb)`` accepts, yielded as each of its pieces is put together with those before it
    (MuPDF splits one path into pieces marked to continue)."""
    piece: list[float] | None = None  # bounds of the filled path being put together
    for vector in blocks:
        if vector.type != mupdf.FZ_STEXT_BLOCK_VECTOR:
            continue
        if vector.flags & mupdf.FZ_STEXT_VECTOR_IS_STROKED or not colour_may_hide(vector.argb):
            piece = None
            continue
        if piece is None:
            piece = [vector.x0, vector.y0, vector.x1, vector.y1]
        else:
            piece = [min(piece[0], vector.x0), min(piece[1], vector.y0), max(piece[2], vector.x1),
                     max(piece[3], vector.y1)]
        yield piece
        if not vector.flags & mupdf.FZ_STEXT_VECTOR_CONTINUES:
            piece = None  # the path's last piece


def _may_be_opaque(argb: int) -> bool:
    return (argb >> 24) & 255 >= _MAY_BE_OPAQUE * 255


def _dark_piece(blocks) -> bool:
    """Whether a filled, possibly dark and opaque path among ``blocks`` (_VectorBlock, in page order) covers at
    least about MIN_BOX_PT each way once the pieces of one path are put together."""
    return any(piece[2] - piece[0] >= _MAY_BE_BOX_PT and piece[3] - piece[1] >= _MAY_BE_BOX_PT
               for piece in _filled_pieces(blocks, _may_be_dark))


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
