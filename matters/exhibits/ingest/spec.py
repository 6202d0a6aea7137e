"""A child's job and its events: what the worker asks of :mod:`matters.exhibits.ingest.child` (``Spec``), the
callback every event goes to (``Emit``), and the one exception that stops a file with a reason for an attorney.

Imports nothing from Django, as the child does not.
"""

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image

Emit = Callable[[dict], None]



class IngestFailure(Exception):
    """Stops processing of this file with a glossary status and a reason written for an attorney."""

    def __init__(self, reason: str, status: str = "failed") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass(frozen=True)
class Spec:
    source: str
    kind: str
    out_dir: str
    original_name: str = ""
    password_file: str = ""
    ocr_dpi: int = 300
    ocr_workers: int = 2
    ocr_lang: str = "eng"
    max_image_pixels: int = 0
    max_sheet_cells: int = 0  # LAWDESK_SHEET_MAX_CELLS: a spreadsheet spanning more cells is refused (0: no limit)
    data_dir: str = ""  # hidden from converters' sandbox
    readers_unsandboxed: bool = False  # LAWDESK_READERS_UNSANDBOXED: Tesseract without its sandbox (docs/security.md)
    images: tuple[str, ...] = ()  # page files of a received volume, for the "assemble" job,
    image_pages: tuple[int, ...] = ()  # and which page (0-based) of each to take
    image_sources: tuple[str, ...] = ()  # where images are descriptors (reader_sandbox): the files they stand for
    display: str = ""  # the display PDF made earlier, where the child cannot read it from out_dir (reader_sandbox)


def print_event(event: dict) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _check_image_pixels(path: str, limit: int) -> None:
    """Refuse images past Pillow's decompression-bomb limit before any decoder allocates them."""
    if limit:
        Image.MAX_IMAGE_PIXELS = limit
    try:
        with Image.open(path) as image:
            frames = getattr(image, "n_frames", 1)
            for index in range(frames):
                image.seek(index)
                width, height = image.size
                if limit and width * height > limit:
                    raise IngestFailure(
                        f"The image is {width} x {height} pixels ({width * height / 1e6:.0f} megapixels), over the "
                        f"limit of {limit / 1e6:.0f} megapixels that protects the server from decompression bombs. "
                        "Scan it at a lower resolution and upload it again."
                    )
    except Image.DecompressionBombError as exc:
        raise IngestFailure(
            f"The image is over the size limit that protects the server from decompression bombs ({exc})."
        ) from exc
    except IngestFailure:
        raise
    except Exception as exc:  # Pillow raises many types for damaged images
        raise IngestFailure(f"The image could not be read: it is damaged or truncated ({exc}).") from exc
