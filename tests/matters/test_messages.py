"""What the verifier and the productions say: case names as the draft writes them, a fact's finding that
describes the fact, and Bates numbers two productions of a matter share, on both and in the verifier."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from matters.drafts.verifier.check import verify_text
from matters.incoming.services import import_production
from tests.support.record import by_text
from tests.support.volumes import build_volume

pytestmark = pytest.mark.django_db

CALVARY = "Calvary Chapel of Bangor v. Mills, 52 F.4th 40, 47 (1st Cir. 2022)"


def test_a_case_name_is_quoted_as_the_draft_writes_it(matter):
    findings = verify_text(matter=matter, text=f"The State may not treat churches worse. See {CALVARY}.")
    case = by_text(findings, CALVARY)
    assert case.status == "unverified_authority"
    assert "Calvary Chapel of Bangor v. Mills, 52 F.4th 40" in case.message and "  " not in case.message


def test_a_date_before_a_see_sentence_is_judged_as_a_date(matter, record):
    text = f"The hearing was held on March 9, 2020. See {CALVARY}. The lease was signed on March 3, 2021."
    findings = verify_text(matter=matter, text=text)
    invented, real = by_text(findings, "March 9, 2020"), by_text(findings, "March 3, 2021")
    assert invented.kind == "date" and invented.status == "ungrounded"
    assert "not in the evidence" in invented.message and "Calvary Chapel of Bangor v. Mills" in invented.message
    assert real.status == "needs_record_cite"
    assert by_text(findings, CALVARY).status == "unverified_authority"  # the citation keeps its own status


def test_a_received_production_reusing_our_numbers_is_a_discrepancy_on_both_and_in_the_verifier(
        matter, record, tmp_path, client, attorney):
    volume = build_volume(tmp_path, prefix="SMITH")  # SMITH000001-7 received over SMITH000001-3 sent
    out = io.StringIO()
    call_command("import_production", "--matter", str(matter.pk), "--origin", "opposing_party", str(volume),
                 stdout=out)
    discrepancies = json.loads(out.getvalue().splitlines()[-1])["discrepancies"]
    shared = [d for d in discrepancies if "are numbers of both" in d]
    assert shared and shared[0].startswith("SMITH000001–SMITH000003 (3 numbers)")
    assert "the production sent, SMITH000001–SMITH000003" in shared[0] and "the production received" in shared[0]

    client.force_login(attorney)
    productions = client.get(reverse("matters:productions", args=[matter.pk])).content.decode()
    assert 'id="bates-overlaps"' in productions and "Shares Bates numbers with another production" in productions
    incoming = matter.incoming_productions.get()
    page = client.get(reverse("matters:incoming", args=[matter.pk, incoming.pk])).content.decode()
    assert "SMITH000001–SMITH000003 (3 numbers) are numbers of both" in page

    findings = verify_text(matter=matter, text="The lease was signed on March 3, 2021. SMITH000001. "
                                               "Rent was received on March 5, 2021. SMITH000005.")
    cite = by_text(findings, "SMITH000001")
    assert cite.status == "ambiguous" and "more than one production" in cite.message
    assert "the production received" in cite.message
    assert by_text(findings, "SMITH000005").status == "grounded"  # only the received volume has it


def test_import_into_a_new_incoming_production_does_not_report_overlaps_of_others(matter, tmp_path):
    incoming = import_production(matter=matter, paths=[build_volume(tmp_path)], origin="opposing_party", user=None)
    assert not [item for item in incoming.report if "numbers of both" in item]
