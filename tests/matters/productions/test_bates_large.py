"""A production of 100,000 pages, built as the worker builds one (each document stamped, checked and appended with
its shared resources merged, saved with garbage=2): the bundle passes ``qpdf --check``, and every 1,000th page
shows its own Bates number once and the words of the page it was made from (as that document stamped on its own
shows them).

About a minute of work (52 s on two cores): marked ``slow``, left out of scripts/test.sh's passes; run it
on its own with ``.venv/bin/python -m pytest -m slow tests/matters/productions/test_bates_large.py``.
"""

import subprocess

import pymupdf
import pytest

from matters.productions.bates.dedup import ResourceMerger
from matters.productions.bates.pageobjects import pdf_of
from matters.productions.bates.stamp import StampSpec, stamp_and_append, stamp_document

pytestmark = pytest.mark.slow

PAGES = 100_000
EVERY = 1_000


def test_a_production_of_100000_pages_passes_qpdf_and_shows_every_sampled_stamp(corpus_dir, tmp_path):
    originals = sorted((corpus_dir / "court").glob("*.pdf"))
    combined, spec = pymupdf.open(), StampSpec()
    merger = ResourceMerger(pdf_of(combined))
    made_from: dict[int, tuple[int, int]] = {}  # sampled combined page -> (original's index, its page)
    number, index = 1, 0
    while number <= PAGES:
        source = pymupdf.open(originals[index % len(originals)])
        for page in range(source.page_count):
            if (number - 1 + page) % EVERY == 0:
                made_from[number - 1 + page] = (index % len(originals), page)
        stamp_and_append(combined, source, [f"BIG{n:07d}" for n in range(number, number + source.page_count)], spec,
                         merger=merger)
        number += source.page_count
        index += 1
    path = tmp_path / "bundle.pdf"
    combined.save(path, garbage=2, deflate=True)
    combined.close()
    assert merger.merged > 0

    checked = subprocess.run(["qpdf", "--check", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]

    # What each sampled page must read: its original stamped on its own (stamps aside, the same words).
    alone = {}
    with pymupdf.open(path) as bundle:
        assert bundle.page_count == number - 1
        for page_number, (original, page) in sorted(made_from.items()):
            stamp = f"BIG{page_number + 1:07d}"
            words = bundle[page_number].get_text().split()
            assert words.count(stamp) == 1, page_number
            if original not in alone:
                with pymupdf.open(originals[original]) as doc:
                    stamp_document(doc, [f"ALONE{n}" for n in range(doc.page_count)], spec)
                    alone[original] = [p.get_text().split() for p in doc]
            expected = [word for word in alone[original][page] if word != f"ALONE{page}"]
            assert [word for word in words if word != stamp] == expected, page_number
