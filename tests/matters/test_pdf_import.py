"""PyMuPDF is imported without its layout analysis (see matters/__init__.py)."""

import subprocess
import sys

from lawdesk.settings import BASE_DIR


def test_pymupdf_comes_without_layout_analysis_or_onnxruntime():
    code = ("import matters, pymupdf, sys; "
            "print('pymupdf.layout' in sys.modules and sys.modules['pymupdf.layout'] is not None, "
            "'onnxruntime' in sys.modules, pymupdf.Document is not None)")
    result = subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False", "True"]


def test_ingest_children_start_without_it():
    code = ("from matters.exhibits.ingest.pool import _context; import multiprocessing, sys; "
            "ctx = _context(); q = ctx.SimpleQueue(); "
            "p = ctx.Process(target=__import__('tests.matters.test_pdf_import', fromlist=['x'])._report, args=(q,)); "
            "p.start(); print(q.get()); p.join()")
    result = subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False"]


def _report(queue) -> None:
    queue.put(str("onnxruntime" in sys.modules))
