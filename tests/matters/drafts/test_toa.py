"""The table of authorities: built from the verifier's readings (headings, order, short forms folded in), refused
while a citation is not grounded by an authority of the matter, paged as the DOCX export prints the brief, shown
on its preview page."""

import io
import re
import tempfile
from pathlib import Path

import docx
import pymupdf
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from matters.drafts.exports import draft_export
from matters.drafts.markdown import blocks, mark_places, unmarked
from matters.drafts.services import draft_approve, draft_create, draft_verify
from matters.drafts.toa import CASES, OTHER, REGULATIONS, RULES, STATUTES, Entry, case_sort_key, toa_build
from matters.exhibits.ingest.convert import office_to_pdf
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db

AUTHORITIES = {
    "tarrant": "TARRANT REGIONAL WATER DISTRICT v. HERRMANN ET AL. 569 U.S. 614 (2013). Decided June 13, 2013.",
    "brown": "BROWN v. GREENFIELD PROPERTIES, INC. 512 F.3d 441 (9th Cir. 2008). Opinion of the court.",
    "grand_jury": "IN RE GRAND JURY SUBPOENA 123 F.3d 456 (2d Cir. 1999). Opinion of the court.",
    "abbott": "ABBOTT v. ZETA CORP. 77 F.4th 100 (1st Cir. 2023). Opinion of the court.",
    "title18": "TITLE 18 - CRIMES AND CRIMINAL PROCEDURE. § 1028A. Aggravated identity theft. (a) Offenses.",
    "title15": "TITLE 15 - COMMERCE AND TRADE. § 78j. Manipulative and deceptive devices.",
    "frcp": "FEDERAL RULES OF CIVIL PROCEDURE\nRule 56. Summary Judgment\n(a) Motion for Summary Judgment.",
    "cfr": "TITLE 17 - COMMODITY AND SECURITIES EXCHANGES\n§ 240.10b-5. Employment of manipulative devices.",
}


@pytest.fixture
def authorities(matter):
    """The matter's authorities, one exhibit each, by name."""
    return {name: ExhibitFactory(matter=matter, origin="authority", title=name, pages=[text])
            for name, text in AUTHORITIES.items()}


# Each paragraph cites in a different order from the table's; short forms stand in paragraphs of their own, so each
# is read apart from the full citations before it.
BRIEF = """Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013), decides the point.

The duty is plain. Id. at 620.

See also Brown v. Greenfield Props., Inc., 512 F.3d 441 (9th Cir. 2008).

Identity theft is a separate crime. 18 U.S.C. § 1028A.

The penalty runs consecutively. § 1028A(b).

Fraud in securities is forbidden. 15 U.S.C. § 78j(b). The rule implementing it is 17 C.F.R. § 240.10b-5.

In re Grand Jury Subpoena, 123 F.3d 456 (2d Cir. 1999), is not to the contrary.

Abbott v. Zeta Corp., 77 F.4th 100 (1st Cir. 2023), agrees.

Summary judgment is proper. Fed. R. Civ. P. 56(a).

The landlord must repair. Brown, 512 F.3d at 443.

As the Court held, the state line governs. Tarrant, supra, at 630.
"""


def test_headings_order_and_short_forms_folded_into_their_authority(matter, authorities):
    table = toa_build(matter=matter, text=BRIEF)
    assert table.ok, table.refused
    listed = [(e.heading, e.name) for e in table.entries]
    assert listed == [
        (CASES, "Abbott v. Zeta Corp., 77 F.4th 100 (1st Cir. 2023)"),
        (CASES, "Brown v. Greenfield Props., Inc., 512 F.3d 441 (9th Cir. 2008)"),
        # "In re" is a procedural phrase: the case sorts under G, before Tarrant and after Brown.
        (CASES, "In re Grand Jury Subpoena, 123 F.3d 456 (2d Cir. 1999)"),
        (CASES, "Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013)"),
        (STATUTES, "15 U.S.C. § 78j"),
        (STATUTES, "18 U.S.C. § 1028A"),
        (RULES, "Fed. R. Civ. P. 56"),
        (REGULATIONS, "17 C.F.R. § 240.10b-5"),
    ]
    by_name = {e.name.split(",")[0]: e for e in table.entries}
    tarrant = by_name["Tarrant Regional Water Dist. v. Herrmann"]
    # The full citation, "Id. at 620" and "Tarrant, supra": three citations of one authority.
    assert [BRIEF[p:p + 7] for p in tarrant.positions] == ["Tarrant", "Id. at ", "Tarrant"]
    assert tarrant.exhibit_id == authorities["tarrant"].pk and tarrant.italic == \
        "Tarrant Regional Water Dist. v. Herrmann"
    brown = by_name["Brown v. Greenfield Props."]
    assert [BRIEF[p:p + 5] for p in brown.positions] == ["Brown", "Brown"]  # the short cite "Brown, 512 F.3d at 443"
    assert by_name["18 U.S.C. § 1028A"].positions == [BRIEF.index("18 U.S.C. § 1028A"), BRIEF.index("§ 1028A(b)")]
    assert by_name["17 C.F.R. § 240.10b-5"].exhibit_id == authorities["cfr"].pk


def test_a_citation_no_authority_grounds_refuses_the_table_and_is_listed(matter, authorities):
    text = (BRIEF + "\nA tenant may withhold rent. Smith v. Jones, 999 F.3d 111 (4th Cir. 2021).\n\n"
            "Smith, 999 F.3d at 115.\n\nThe motion is timely. Fed. R. App. P. 4(a)(1).\n")
    table = toa_build(matter=matter, text=text)
    assert not table.ok
    refused = {r.name: r for r in table.refused}
    assert set(refused) == {"Smith v. Jones, 999 F.3d 111 (4th Cir. 2021)", "Fed. R. App. P. 4"}
    assert len(refused["Smith v. Jones, 999 F.3d 111 (4th Cir. 2021)"].positions) == 2  # its short cite too
    assert "No authority in this matter matches" in refused["Smith v. Jones, 999 F.3d 111 (4th Cir. 2021)"].why
    message = table.refusal()
    assert "Smith v. Jones" in message and "Fed. R. App. P. 4" in message and "2 cited authorities" in message


def test_a_blocked_citation_and_a_case_cited_only_inside_a_parenthetical_refuse_it(matter, authorities):
    # "Rule 12(b)(6)" names no set of rules in a matter whose court names none: the verifier cannot read it.
    matter.court = ""
    matter.save(update_fields=["court"])
    table = toa_build(matter=matter, text="The claim fails. Rule 12(b)(6).\n")
    assert [r.name for r in table.refused] == ["Rule 12(b)(6)"]
    assert "names no set of rules" in table.refused[0].why
    # A case the matter holds only as cited within another opinion is not in the matter: never listed.
    ExhibitFactory(matter=matter, origin="authority", title="citing", pages=[
        "CALLER v. CITED 55 F.4th 5 (3d Cir. 2022).\nOpinion of the court.",
        "Opinion of the court, continued.\nWe follow Quoted v. Source, 11 F.3d 22 (3d Cir. 1993)."])
    table = toa_build(matter=matter, text="Caller v. Cited, 55 F.4th 5 (3d Cir. 2022) (quoting Quoted v. Source, "
                                          "11 F.3d 22 (3d Cir. 1993)).\n")
    assert [r.name for r in table.refused] == ["Quoted v. Source, 11 F.3d 22 (3d Cir. 1993)"]
    assert table.refused[0].why.startswith("not itself in the matter")


def test_a_draft_that_cites_nothing_has_an_empty_table(matter, authorities):
    table = toa_build(matter=matter, text="The tenant paid the rent on time.\n")
    assert table.ok and table.entries == [] and table.sections() == []


def test_passim_from_the_setting(settings):
    entry = Entry(CASES, "A v. B", "A v. B", 1, "1", "a", ("a",), pages=[1, 2, 3, 4])
    assert entry.pages_text() == "1, 2, 3, 4"  # default 5: four pages are listed
    entry.pages.append(9)
    assert entry.pages_text() == "passim"
    settings.LAWDESK_TOA_PASSIM_PAGES = 0
    assert entry.pages_text() == "1, 2, 3, 4, 9"
    settings.LAWDESK_TOA_PASSIM_PAGES = 3
    assert Entry(OTHER, "x", "", 1, "1", "a", ("x",), pages=[2, 7]).pages_text() == "2, 7"
    assert entry.pages_text() == "passim"


_NAME = st.text(alphabet=st.sampled_from("abcdefghij KLMNOP.,'"), min_size=1, max_size=30).filter(
    lambda s: s.strip() and re.search(r"[A-Za-z]", s))


@given(_NAME, st.sampled_from(["In re ", "Ex parte ", "In the Matter of ", "Matter of ", "in re "]))
def test_a_procedural_phrase_never_changes_where_a_case_sorts(name, phrase):
    assert case_sort_key(phrase + name.strip())[0] == case_sort_key(name.strip())[0]


@given(st.text(alphabet=st.sampled_from("ab *_\n#-[]^1\ue002\ue0033"), max_size=60), st.data())
@hypothesis_settings(max_examples=200)
def test_marks_leave_the_text_as_it_was_and_come_out_in_order(text, data):
    places = data.draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=6, unique=True))
    marked = mark_places(text, [(offset, n) for n, offset in enumerate(sorted(places))])
    assert unmarked(marked) == text.replace("\ue002", "").replace("\ue003", "")
    body, notes = blocks(marked)
    found = [r.mark for b in body for r in b.runs if r.mark is not None]
    found += [r.mark for note in notes for r in note if r.mark is not None]
    assert found == sorted(found)  # what the export prints keeps the marks' order
    assert all(r.mark is None or r.text == "" for b in body for r in b.runs)


# -- the export ------------------------------------------------------------------------------------------------

FILLER = " ".join(["The parties dispute what the covenant requires of a landlord in a residential lease."] * 16)


def long_brief() -> str:
    """A brief of about five pages whose citations of each authority all carry a token found only in them
    (``569 U.S.``, ``512 F.3d``, ``1028A``), so the test can find their pages in the PDF by itself."""
    parts = ["Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013), decides the point.", FILLER, FILLER,
             "Identity theft is a separate crime. 18 U.S.C. § 1028A.", FILLER, FILLER, FILLER,
             "See also Brown v. Greenfield Props., Inc., 512 F.3d 441 (9th Cir. 2008).", FILLER, FILLER,
             "The landlord must repair. Tarrant, 569 U.S. at 620.", FILLER, FILLER, FILLER,
             "The penalty runs consecutively. 18 U.S.C. § 1028A(b).", FILLER,
             "Brown, 512 F.3d at 443."]
    return "\n\n".join(parts) + "\n"


def printed_pages(content: bytes, tmp_path: Path) -> list[tuple[str, str]]:
    """The DOCX ``content`` converted to PDF as exhibits are (no bookmark option): each page's printed number (the
    footer's last line) and its text."""
    source, target = tmp_path / "export.docx", tmp_path / "export.pdf"
    source.write_bytes(content)
    office_to_pdf(source, target, suffix=".docx", description="Word document", hidden=(tempfile.gettempdir(),))
    with pymupdf.open(target) as document:
        pages = []
        for page in document:
            lines = [line for line in page.get_text().splitlines() if line.strip()]
            pages.append((lines[-1].strip(), " ".join(" ".join(lines[:-1]).split())))
    return pages


@pytest.fixture
def approved_brief(matter, authorities, attorney):
    version = draft_create(matter=matter, title="Opposition", text=long_brief(), author_kind="person",
                           author=attorney)
    draft_verify(version=version)
    return draft_approve(version=version, user=attorney)


def test_the_docx_opens_with_the_table_whose_pages_are_the_printed_pages(approved_brief, attorney, tmp_path):
    export = draft_export(version=approved_brief, user=attorney, kind="docx")
    document = docx.Document(io.BytesIO(export.content))
    texts = [p.text for p in document.paragraphs]
    assert texts[:3] == ["TABLE OF AUTHORITIES", "Page(s)", "Cases"]
    assert len(document.sections) == 2  # the table's section, then the brief's from a new page
    listed = dict(t.split("\t") for t in texts if "\t" in t)
    pages = printed_pages(export.content, tmp_path)
    assert [number for number, _ in pages[:1]] == ["i"]  # the table's page, numbered apart
    body = [(int(number), text) for number, text in pages if number.isdigit()]
    assert [n for n, _ in body] == list(range(1, len(body) + 1)) and len(body) >= 4

    def on(token: str) -> str:
        return ", ".join(str(n) for n, text in body if token in text)

    assert listed == {
        "Brown v. Greenfield Props., Inc., 512 F.3d 441 (9th Cir. 2008)": on("512 F.3d"),
        "Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013)": on("569 U.S."),
        "18 U.S.C. § 1028A": on("1028A"),
    }
    assert len(on("569 U.S.").split(", ")) == 2  # cited on two pages, each found on its own
    italic = [r.text for r in document.paragraphs[3].runs if r.italic]
    assert italic == ["Brown v. Greenfield Props., Inc."]


def test_the_docx_export_is_refused_while_the_table_cannot_be_built(matter, authorities, attorney):
    version = draft_create(matter=matter, title="Brief", author_kind="person", author=attorney,
                           text="A tenant may withhold rent. Smith v. Jones, 999 F.3d 111 (4th Cir. 2021).\n")
    draft_verify(version=version)
    from matters.drafts.services import finding_confirm
    finding_confirm(finding=version.findings.get(kind="case_citation"), user=attorney,
                    reason="Checked in Westlaw on 2026-12-01: good law.")
    approved = draft_approve(version=version, user=attorney)
    with pytest.raises(ValidationError, match=r"Not exported as DOCX\. .*Smith v\. Jones, 999 F\.3d 111"):
        draft_export(version=approved, user=attorney, kind="docx")
    assert draft_export(version=approved, user=attorney, kind="pdf").content.startswith(b"%PDF")


# -- the preview page ------------------------------------------------------------------------------------------

def test_the_preview_shows_entries_pages_and_links(approved_brief, authorities, client, attorney, matter):
    client.force_login(attorney)
    review = client.get(reverse("matters:draft", args=[matter.pk, approved_brief.draft_id])).content.decode()
    url = reverse("matters:draft_authorities", args=[matter.pk, approved_brief.draft_id, approved_brief.number])
    assert f'href="{url}"' in review
    page = client.get(url).content.decode()
    rows = re.findall(r'<tr class="toa-entry">(.*?)</tr>', page, re.DOTALL)
    assert len(rows) == 3
    tarrant = next(r for r in rows if "Tarrant" in r)
    assert "<em>Tarrant Regional Water Dist. v. Herrmann</em>, 569 U.S. 614 (2013)" in tarrant
    assert re.search(r'<td class="toa-pages">1, \d</td>', tarrant)
    exhibit_url = reverse("matters:exhibit", args=[matter.pk, authorities["tarrant"].pk])
    assert f'href="{exhibit_url}"' in tarrant
    assert page.index(">Cases<") < page.index(">Statutes<")


def test_the_preview_shows_the_refusal_with_its_list(matter, authorities, client, attorney):
    version = draft_create(matter=matter, title="Brief", author_kind="person", author=attorney,
                           text="Tarrant Regional Water Dist. v. Herrmann, 569 U.S. 614 (2013).\n\n"
                                "Smith v. Jones, 999 F.3d 111 (4th Cir. 2021).\n")
    client.force_login(attorney)
    page = client.get(reverse("matters:draft_authorities", args=[matter.pk, version.draft_id, 1])).content.decode()
    assert 'id="toa-refused"' in page and 'id="toa"' not in page
    listed = re.findall(r"<li><strong>(.*?)</strong>", page)
    assert listed == ["Smith v. Jones, 999 F.3d 111 (4th Cir. 2021)"]


def test_a_citation_in_a_footnote_is_on_the_page_its_note_prints_on(matter, authorities, tmp_path):
    from matters.drafts.export_docx import docx_bytes
    from matters.drafts.toa_pages import toa_paginate

    text = "\n\n".join([FILLER] * 5 + ["The covenant binds the landlord.[^1]", FILLER, FILLER]) + (
        "\n\n[^1]: See Brown v. Greenfield Props., Inc., 512 F.3d 441 (9th Cir. 2008).\n")
    table = toa_build(matter=matter, text=text)
    assert [e.name for e in table.entries] == ["Brown v. Greenfield Props., Inc., 512 F.3d 441 (9th Cir. 2008)"]
    toa_paginate(table, text=text, title="t", footer="f")
    pages = printed_pages(docx_bytes(text=text, title="t", footer="f"), tmp_path)
    assert [str(p) for p in table.entries[0].pages] == [n for n, page in pages if "512 F.3d 441" in page]
    assert table.entries[0].pages != [1]  # the note is past the first page: its page was read, not guessed
