"""A combined PDF built by appending thousands of pages keeps its page tree shallow, its pages in order."""

import subprocess

import pymupdf

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
