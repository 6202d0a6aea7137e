"""HTML laid out as pages keeps every word: MuPDF's Story loses lines where a paragraph crosses the foot of a page
at some line heights, so each layout is checked against its input, tried again a little shorter, and refused
rather than returned with text missing (matters.html_pdf)."""

import re

import pymupdf
import pytest

from matters.drafts.export_pdf import draft_pdf_bytes
from matters.html_pdf import LayoutLostText, html_pdf, html_text, missing_characters

LETTER = pymupdf.paper_rect("letter")
PARAGRAPHS = "".join("<p>" + " ".join(f"word{i}" for i in range(j * 100, (j + 1) * 100)) + "</p>" for j in range(50))


def numbered_words(pdf: bytes) -> set[int]:
    with pymupdf.open("pdf", pdf) as document:
        return {int(n) for page in document for n in re.findall(r"word(\d+)", page.get_text())}


@pytest.mark.parametrize("line_height", ["1", "1.2", "1.5", "2", "17pt", "18pt", "normal"])
@pytest.mark.parametrize("size_pt", [9, 10, 12])
def test_fifty_paragraphs_come_out_whole_at_any_line_height(size_pt, line_height):
    # 12 pt serif at line-height 1.5, the draft export's style, gave 3,227 of these 5,000 words before the check.
    css = f"body {{ font-family: serif; font-size: {size_pt}pt; line-height: {line_height}; }}"
    assert numbered_words(html_pdf(PARAGRAPHS, css, page=LETTER, margin_pt=72)) == set(range(5000))


def test_a_long_draft_exported_as_pdf_keeps_every_word():
    text = "\n\n".join(" ".join(f"word{i}" for i in range(j * 100, (j + 1) * 100)) for j in range(50))
    assert numbered_words(draft_pdf_bytes(text=text, title="Motion", footer="sha256 0")) == set(range(5000))


def test_a_table_that_runs_over_many_pages_keeps_every_row():
    rows = "".join(f"<tr><td>row{r}</td><td>Attorney-client communication about the lease</td></tr>"
                   for r in range(900))
    with pymupdf.open("pdf", html_pdf(f"<table>{rows}</table>", "td { font-size: 7pt; }", page=LETTER,
                                      margin_pt=36)) as document:
        found = {int(n) for page in document for n in re.findall(r"row(\d+)", page.get_text())}
    assert found == set(range(900))


def test_text_the_layout_cannot_place_is_refused_not_returned_short():
    # A word wider than the page is never broken by MuPDF: all but its first characters fall off the page.
    with pytest.raises(LayoutLostText) as refused:
        html_pdf("<p>" + "W" * 5000 + "</p>", "", page=LETTER, margin_pt=72)
    assert refused.value.missing > 4000
    assert "left out" in str(refused.value)


def test_what_the_html_shows_is_what_is_counted():
    shown = html_text("<html><head><title>T</title><style>p { color: red }</style></head>"
                      "<body><!-- hidden --><p>A&amp;B &#233;t&eacute;</p><script>x=1</script></body></html>")
    assert shown.split() == ["A&B", "été"]
    # A ligature in the layout's text is the two letters it joins; bullets and punctuation are not counted.
    from matters.html_pdf import _characters
    assert missing_characters(_characters("file, office."), _characters("• ﬁle ofﬁce")) == 0
    assert missing_characters(_characters("file 2021"), _characters("ﬁle 202")) == 1
