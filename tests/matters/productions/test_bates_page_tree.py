"""A combined PDF built by appending thousands of pages keeps its page tree shallow, its pages in order."""

import subprocess

import pymupdf

from matters.productions.bates import pageobjects
from matters.productions.bates.pageobjects import PAGES_PER_NODE, nest_page_tree


def test_appended_pages_move_under_nodes_in_order_and_the_file_stays_valid(tmp_path):
    combined = pymupdf.open()
    total = 5 * PAGES_PER_NODE + 7
    for number in range(total):
        source = pymupdf.open()
        source.new_page(width=612, height=792).insert_text((72, 72), f"page {number}")
        combined.insert_pdf(source)
        nest_page_tree(combined)
    root = combined.xref_get_key(combined.pdf_catalog(), "Pages")[1]
    kids = combined.xref_get_key(int(root.split()[0]), "Kids")[1]
    assert len(kids.split()) // 3 < 2 * PAGES_PER_NODE + 5  # nodes and the latest pages, not every page
    path = tmp_path / "combined.pdf"
    combined.save(path, garbage=4, deflate=True)
    with pymupdf.open(path) as saved:
        assert saved.page_count == total
        assert [saved[n].get_text().strip() for n in (0, PAGES_PER_NODE, 3 * PAGES_PER_NODE + 1, total - 1)] == [
            "page 0", f"page {PAGES_PER_NODE}", f"page {3 * PAGES_PER_NODE + 1}", f"page {total - 1}"]
    check = subprocess.run(["qpdf", "--check", str(path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


def test_nodes_of_one_size_merge_into_a_node_above_them_and_every_page_stays_in_place(tmp_path, monkeypatch):
    # Small nodes, so that three levels of them come of a few hundred pages.
    monkeypatch.setattr(pageobjects, "PAGES_PER_NODE", 4)
    monkeypatch.setattr(pageobjects, "NODES_PER_NODE", 3)
    combined, total = pymupdf.open(), 300
    for number in range(0, total, 3):  # appended three pages at a time, as documents are
        source = pymupdf.open()
        for page in range(number, number + 3):
            source.new_page(width=612, height=792).insert_text((72, 72), f"page {page}")
        combined.insert_pdf(source)
        nest_page_tree(combined)
    root = int(combined.xref_get_key(combined.pdf_catalog(), "Pages")[1].split()[0])
    kids = combined.xref_get_key(root, "Kids")[1]
    # Under three nodes of each size (4, 12, 36, 108 pages) and under eight pages: not 300 // 4 nodes.
    assert len(kids.split()) // 3 <= 4 * 2 + 8
    path = tmp_path / "combined.pdf"
    combined.save(path, garbage=2, deflate=True)
    with pymupdf.open(path) as saved:
        assert [page.get_text().strip() for page in saved] == [f"page {n}" for n in range(total)]
    check = subprocess.run(["qpdf", "--check", str(path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
