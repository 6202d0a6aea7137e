"""The factories make rows the application treats as its own: a member's matter, a page search and the verifier
find without ingest, Bates numbers a draft can cite, findings that block approval, a server the topology rules
accept. A factory that drifted from the models would make every test built on it prove nothing."""

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from matters.drafts.verifier.check import verify_text
from matters.exhibits.search import matter_search
from matters.permissions import require
from pipeline.models import Role, RoleAssignment
from pipeline.topology.rules import ERROR, problems
from pipeline.topology.selectors import snapshot_load
from tests.factories import (
    DraftVersionFactory,
    ExhibitFactory,
    FindingFactory,
    MatterFactory,
    ModelServerFactory,
    PageFactory,
    ProductionFactory,
    UserFactory,
)
from tests.support.accounts import PASSWORD

pytestmark = pytest.mark.django_db


def test_a_matter_is_open_to_its_attorney_member_only(client):
    matter = MatterFactory()
    [member] = matter.members.all()
    require(member, "approve_draft", matter)  # an attorney's act, by a member
    with pytest.raises(PermissionDenied):
        require(UserFactory(), "approve_draft", matter)
    assert member.check_password(PASSWORD)
    client.force_login(member)
    assert client.get(reverse("matters:detail", args=[matter.pk])).status_code == 200
    client.force_login(UserFactory())
    assert client.get(reverse("matters:detail", args=[matter.pk])).status_code == 404


def test_a_page_with_text_is_found_by_search_without_ingest():
    page = PageFactory(text="The landlord never repaired the leaking roof.")
    [hit] = matter_search(matter=page.exhibit.matter, query="leaking roof")
    assert (hit.exhibit_id, hit.page_number) == (page.exhibit_id, 1)


def test_produced_pages_ground_their_bates_cites_and_facts():
    matter = MatterFactory()
    exhibit = ExhibitFactory(matter=matter, pages=["Cover letter.", "Rent of $1,250.00 paid on March 3, 2021."])
    production = ProductionFactory(matter=matter, pages=list(exhibit.pages.order_by("number")))
    assert (production.first, production.last) == ("SMITH000001", "SMITH000002")
    findings = verify_text(matter=matter, text="Rent of $1,250.00 was paid on March 3, 2021 (SMITH000002).")
    assert {(f.kind, f.status) for f in findings} == {("amount", "grounded"), ("date", "grounded"),
                                                       ("bates_cite", "grounded")}


def test_an_ungrounded_finding_blocks_its_version():
    version = DraftVersionFactory(text="Paid on May 9, 2022.")
    finding = FindingFactory(version=version, text="May 9, 2022", start=8, status="ungrounded")
    assert version.text[finding.start:finding.end] == finding.text
    assert list(version.open_blocking()) == [finding] and finding.verdict == "ungrounded"


def test_a_server_is_pinned_inside_one_board_of_its_host_and_breaks_no_rule():
    server = ModelServerFactory(roles=[Role.DRAFTER])
    [board] = server.host.boards.all()
    assert set(server.gpus.all()) == set(board.gpus.all()) and len(board.gpus.all()) == 2
    assert {gpu.host for gpu in server.gpus.all()} == {server.host}
    server.full_clean()
    assert [p for p in problems(snapshot_load()) if p.level == ERROR] == []
    assert RoleAssignment.objects.get(role=Role.DRAFTER).server == server
