"""Cost of privilege work on the way in and out, side by side with what it is added to.

Run from the repository root as ``.venv/bin/python bench/redaction.py``.

- Ingest: the improper-redaction check (:func:`matters.exhibits.ingest.redaction_check.find_hidden_text`) on every
  page of the born-digital court filings in ``corpus/court``, against the text extraction ingest already does on the
  same pages (``page.get_text``). Target: the check costs at most as much as the extraction (ratio <= 1.0).
- Production: stamping a page with three redaction boxes applied for real
  (:func:`matters.productions.bates.redact.apply_boxes`, or :func:`~matters.productions.bates.redact.redact_as_image`
  where MuPDF moved text, then the Bates stamp) against stamping the same page alone. Reported as a ratio; a
  redacted page also reads its text again, which is included.
"""

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.corpus import corpus_dir  # noqa: E402

CORPUS = corpus_dir() / "court"


def main() -> None:
    import pymupdf

    from matters.exhibits.ingest.redaction_check import find_hidden_text
    from matters.productions.bates.redact import apply_boxes, redact_as_image
    from matters.productions.bates.stamp import StampSpec, stamp_and_append

    paths = sorted(CORPUS.glob("*.pdf"))
    extract_s = check_s = 0.0
    pages = 0
    for path in paths:
        with pymupdf.open(path) as doc:
            for page in doc:
                started = time.perf_counter()
                page.get_text("text")
                extract_s += time.perf_counter() - started
                started = time.perf_counter()
                find_hidden_text(page)
                check_s += time.perf_counter() - started
                pages += 1
    print(f"ingest: {pages} pages; text extraction {1000 * extract_s / pages:.2f} ms/page, improper-redaction "
          f"check {1000 * check_s / pages:.2f} ms/page; ratio check/extraction {check_s / extract_s:.2f}")

    spec = StampSpec()
    plain_s = redacted_s = 0.0
    stamped = fallbacks = 0
    for path in paths:
        for redact in (False, True):
            doc = pymupdf.open(path)
            combined = pymupdf.open()
            started = time.perf_counter()
            if redact:
                original = pymupdf.open(path)
                for number in range(doc.page_count):
                    page = doc[number]
                    words = page.get_text("words")[5:8]
                    boxes = [(tuple((pymupdf.Rect(w[:4]) * page.rotation_matrix).normalize()), "AC") for w in words]
                    if not apply_boxes(page, boxes):
                        remade = redact_as_image(original[number], boxes)
                        doc.delete_page(number)
                        doc.insert_pdf(remade, start_at=number)
                        fallbacks += 1
                    doc[number].get_text("text")
            stamp_and_append(combined, doc, [f"B{n:06d}" for n in range(doc.page_count)], spec)
            elapsed = time.perf_counter() - started
            if redact:
                redacted_s += elapsed
            else:
                plain_s += elapsed
                stamped += doc.page_count
    print(f"production: {stamped} pages; stamping {1000 * plain_s / stamped:.2f} ms/page, redaction of 3 boxes "
          f"+ stamping {1000 * redacted_s / stamped:.2f} ms/page; ratio {redacted_s / plain_s:.2f}; "
          f"{fallbacks} pages made as images because MuPDF moved text outside the boxes")


if __name__ == "__main__":
    main()
