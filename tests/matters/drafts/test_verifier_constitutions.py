"""Constitutional provisions, federal and state, read by the shared citation reader (The Bluebook rule 11 forms),
grounded by a stored authority or refused as not in the matter, and listed by the table of authorities under
"Constitutional Provisions"."""

import pytest

from matters.drafts.toa import CONSTITUTION, STATUTES, toa_build
from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.statutes import read_statutes
from matters.exhibits.services import exhibit_set_cites_as
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db

US_CONSTITUTION = [
    "THE CONSTITUTION OF THE UNITED STATES\nArticle I\nSection 8. The Congress shall have Power ...",
    "Article III\nSection 2. The judicial Power shall extend to all Cases, in Law and Equity ...",
    "Amendment XIV\nSection 1. All persons born or naturalized in the United States ...",
]
CALIFORNIA = ["CONSTITUTION OF THE STATE OF CALIFORNIA\nARTICLE I DECLARATION OF RIGHTS\nSEC. 7. (a) A person may "
              "not be deprived of life, liberty, or property without due process of law ..."]


@pytest.mark.parametrize(("text", "cite"), [
    ("See U.S. Const. art. III, § 2.", "U.S. Const. art. III, § 2"),
    ("U.S. Const. amend. XIV, § 1 guarantees it.", "U.S. Const. amend. XIV, § 1"),
    ("The Commerce Clause, U.S. Const. art. I, § 8, cl. 3, reaches it.", "U.S. Const. art. I, § 8, cl. 3"),
    ("Under Cal. Const. art. I, § 7, the state may not.", "Cal. Const. art. I, § 7"),
    ("N.Y. Const. art. I, § 12 protects it.", "N.Y. Const. art. I, § 12"),
    ("Ohio Const. art. I, § 16.", "Ohio Const. art. I, § 16"),
    ("U.S. Const. amend. 14, § 1.", "U.S. Const. amend. XIV, § 1"),
])
def test_a_constitutional_cite_is_read_whole_and_leaves_no_bare_section(text, cite):
    found, unreadable = read_statutes(text)
    assert [m.cite for m in found] == [cite]
    assert found[0].form == "constitution" and unreadable == []


def test_a_section_sign_after_a_constitution_is_another_section_of_its_article():
    found, unreadable = read_statutes("U.S. Const. art. I, § 8; id. § 9.")
    assert [m.cite for m in found] == ["U.S. Const. art. I, § 8", "U.S. Const. art. I, § 9"] and unreadable == []


def test_a_provision_a_stored_constitution_holds_is_grounded_and_its_twin_is_not(matter):
    ExhibitFactory(matter=matter, origin="authority", title="United States Constitution", pages=US_CONSTITUTION)
    [held] = verify_text(matter=matter, text="Jurisdiction lies. U.S. Const. art. III, § 2.", incremental=False)
    assert (held.kind, held.status) == ("statute_citation", "grounded")
    assert held.sources and held.sources[0]["page"] == 2  # the page where Article III stands
    [missing] = verify_text(matter=matter, text="No quartering. U.S. Const. amend. III.", incremental=False)
    assert (missing.kind, missing.status) == ("statute_citation", "unverified_authority")
    assert "Add the constitution (or the article or amendment)" in missing.message


def test_a_state_constitution_is_grounded_by_its_own_text_not_the_federal_one(matter):
    ExhibitFactory(matter=matter, origin="authority", title="United States Constitution", pages=US_CONSTITUTION)
    text = "Due process is owed. Cal. Const. art. I, § 7."
    [finding] = verify_text(matter=matter, text=text, incremental=False)
    assert finding.status == "unverified_authority"
    ExhibitFactory(matter=matter, origin="authority", title="California Constitution", pages=CALIFORNIA)
    [finding] = verify_text(matter=matter, text=text, incremental=False)
    assert finding.status == "grounded"


def test_an_authority_citing_itself_as_the_amendment_grounds_its_sections(matter, attorney):
    amendment = ExhibitFactory(matter=matter, origin="authority", title="Fourteenth Amendment",
                               pages=["Section 1. All persons born or naturalized ..."])
    exhibit_set_cites_as(exhibit=amendment, updated_by=attorney, cites_as="U.S. Const. amend. XIV")
    [finding] = verify_text(matter=matter, text="Equal protection. U.S. Const. amend. XIV, § 1.", incremental=False)
    assert finding.status == "grounded"


BRIEF = """Jurisdiction lies. U.S. Const. art. III, § 2.

Equal protection applies. U.S. Const. amend. XIV, § 1.

Congress may regulate it. U.S. Const. art. I, § 8, cl. 3.

The state guarantees the same. Cal. Const. art. I, § 7.

Identity theft is a separate crime. 18 U.S.C. § 1028A.

Again, U.S. Const. amend. XIV, § 1.
"""


def test_the_table_lists_constitutional_provisions_in_their_order(matter):
    ExhibitFactory(matter=matter, origin="authority", title="United States Constitution", pages=US_CONSTITUTION)
    ExhibitFactory(matter=matter, origin="authority", title="California Constitution", pages=CALIFORNIA)
    ExhibitFactory(matter=matter, origin="authority", title="title18",
                   pages=["TITLE 18 - CRIMES AND CRIMINAL PROCEDURE. § 1028A. Aggravated identity theft."])
    table = toa_build(matter=matter, text=BRIEF)
    assert table.ok, table.refused
    # The United States Constitution first, its articles in order (I before III), then the amendments; then the
    # states'; statutes after the heading.
    assert [(e.heading, e.name) for e in table.entries] == [
        (CONSTITUTION, "U.S. Const. art. I, § 8, cl. 3"),
        (CONSTITUTION, "U.S. Const. art. III, § 2"),
        (CONSTITUTION, "U.S. Const. amend. XIV, § 1"),
        (CONSTITUTION, "Cal. Const. art. I, § 7"),
        (STATUTES, "18 U.S.C. § 1028A"),
    ]
    fourteenth = table.entries[2]
    assert [BRIEF[p:p + 11] for p in fourteenth.positions] == ["U.S. Const.", "U.S. Const."]


def test_a_provision_no_authority_holds_refuses_the_table(matter):
    table = toa_build(matter=matter, text="Jurisdiction lies. U.S. Const. art. III, § 2.\n")
    assert not table.ok
    assert [r.name for r in table.refused] == ["U.S. Const. art. III, § 2"]
