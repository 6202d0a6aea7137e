"""The case file: matters, exhibits, productions, drafts and their review."""

import sys

# PyMuPDF 2 imports its optional layout analysis and Markdown export (pymupdf.layout and pymupdf4llm, which load
# onnxruntime) on ``import pymupdf``: half a second and some 260 MiB of address space in every process, counted
# against each ingest child's memory limit (LAWDESK_INGEST_MEMORY_MB), and a file written under ~/.cache by
# onnxruntime at each start, all for Page.get_layout and to_markdown, which LawDesk never calls. A None entry makes
# those imports fail as PyMuPDF expects when the packages are absent (it catches the ImportError). Every process
# imports this package before PyMuPDF: Django loads its apps first, and the ingest fork server preloads
# matters.exhibits.ingest.child.
for _optional in ("pymupdf.layout", "pymupdf4llm"):
    sys.modules.setdefault(_optional, None)
