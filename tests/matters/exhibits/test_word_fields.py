"""Word fields read as Word last displayed them: a letter's DATE field shows the letter's date, not the upload's."""

import datetime
import hashlib

import docx
import pytest
from django.urls import reverse
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls

from matters.exhibits.ingest.docx_fields import freeze_fields

pytestmark = pytest.mark.django_db

W = nsdecls("w")


def simple(instruction: str, result: str) -> str:
    runs = f"<w:r><w:t xml:space=\"preserve\">{result}</w:t></w:r>" if result else ""
    return f"<w:fldSimple {W} w:instr='{instruction}'>{runs}</w:fldSimple>"


def complex_runs(instruction: str, result: str | None) -> list[str]:
    """The runs of a complex field; ``result`` None: no separate mark, nothing stored."""
    runs = [f'<w:r {W}><w:fldChar w:fldCharType="begin"/></w:r>',
            f'<w:r {W}><w:instrText xml:space="preserve"> {instruction} </w:instrText></w:r>']
    if result is not None:
        runs += [f'<w:r {W}><w:fldChar w:fldCharType="separate"/></w:r>',
                 f'<w:r {W}><w:t xml:space="preserve">{result}</w:t></w:r>']
    return [*runs, f'<w:r {W}><w:fldChar w:fldCharType="end"/></w:r>']


def paragraph_with(document, lead: str, *fragments: str) -> None:
    paragraph = document.add_paragraph(lead)
    for fragment in fragments:
        paragraph._p.append(parse_xml(fragment))


def letter(path):
    """A letter whose date, time, file name, author and print date are Word fields holding what Word showed."""
    document = docx.Document()
    document.add_paragraph("RE: Notice of default under the lease of 12 Elm Street.")
    paragraph_with(document, "Dated: ", simple(' DATE \\@ "MMMM d, yyyy" ', "March 3, 2021"))
    paragraph_with(document, "Sent at ", *complex_runs('TIME \\@ "h:mm am/pm"', "10:15 AM"))
    paragraph_with(document, "File: ", *complex_runs("FILENAME \\p", "Default-Notice-Final.docx"))
    paragraph_with(document, "Prepared by ", simple(" USERNAME ", "Margaret Okafor"))
    paragraph_with(document, "Printed ", *complex_runs('PRINTDATE \\@ "M/d/yyyy"', "3/4/2021"))
    paragraph_with(document, "Last saved ", *complex_runs('SAVEDATE \\@ "MMMM d, yyyy"', None),
                   f'<w:r {W}><w:t xml:space="preserve"> (no value stored).</w:t></w:r>')
    document.save(path)
    return path


def today_forms() -> list[str]:
    today = datetime.date.today()
    return [f"{today:%B} {today.day}, {today.year}", f"{today.month}/{today.day}/{today.year}", today.isoformat()]


def test_stored_results_replace_fields_and_layout_fields_stay():
    document = (f'<w:document {W}><w:body><w:p>{"".join(complex_runs("PAGE", "1"))}</w:p>'
                f'<w:p>{simple(" DATE ", "March 3, 2021")}</w:p>'
                f'<w:p>{"".join(complex_runs("SAVEDATE", None))}</w:p>'
                f'<w:p>{"".join(complex_runs("AUTHOR", None))}</w:p></w:body></w:document>')
    found: list[dict] = []
    frozen = freeze_fields(document.encode(), found).decode()
    assert "March 3, 2021" in frozen and "fldSimple" not in frozen
    assert frozen.count("<w:fldChar ") == 5  # PAGE keeps its three marks (laid out per page), AUTHOR its two
    assert "SAVEDATE" not in frozen and "PAGE" in frozen and "AUTHOR" in frozen
    assert [(f["name"], f["result"], f["shown"]) for f in found] == [
        ("DATE", "March 3, 2021", "result"), ("SAVEDATE", "", "removed")]


def test_a_nested_field_in_an_instruction_goes_with_its_field():
    nested = complex_runs("MERGEFIELD Tenant", "Acme LLC")
    runs = [*complex_runs('IF "x" = "x" "Overdue" "Current"', "Overdue")]
    runs[1:1] = nested  # the MERGEFIELD sits inside the IF's instruction
    found: list[dict] = []
    frozen = freeze_fields(f'<w:document {W}><w:body><w:p>{"".join(runs)}</w:p></w:body></w:document>'.encode(),
                           found).decode()
    assert "Overdue" in frozen and "Acme LLC" not in frozen and "fldChar" not in frozen
    assert [f["name"] for f in found] == ["IF"]


def test_a_letter_dated_by_fields_reads_as_written(matter, tmp_path, ingest, client, attorney):
    path = letter(tmp_path / "notice.docx")
    exhibit = ingest(matter, path)
    assert exhibit.status == "ready", exhibit.reason
    text = " ".join(exhibit.pages.values_list("text", flat=True))
    for shown in ("Dated: March 3, 2021", "Sent at 10:15 AM", "File: Default-Notice-Final.docx",
                  "Prepared by Margaret Okafor", "Printed 3/4/2021", "Last saved (no value stored)."):
        assert shown in " ".join(text.split()), (shown, text)
    for today in today_forms():
        assert today not in text
    assert exhibit.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()  # the upload is kept as it was
    fields = exhibit.word_changes["fields"]
    assert [(f["name"], f["shown"]) for f in fields] == [
        ("DATE", "result"), ("TIME", "result"), ("FILENAME", "result"), ("USERNAME", "result"),
        ("PRINTDATE", "result"), ("SAVEDATE", "removed")]

    client.force_login(attorney)
    page = client.get(reverse("matters:exhibit", args=[matter.pk, exhibit.pk])).content.decode()
    assert "This Word file has 6 fields" in page
    assert "<td>DATE</td>" in page and "March 3, 2021" in page and "nothing: no value was stored" in page
    assert 'id="word-changes"' not in page  # no tracked changes, comments or hidden text to speak of
