"""The legal hold changes only through the hold service (attorney, reason, audit), whatever path tries it: the
admin's matter form, a save of the matter from anywhere else, a reason a reader cannot see."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from matters.models import Matter
from matters.retention.purge import matter_purge
from matters.retention.services import MatterOnHold, matter_hold, matter_hold_lift
from matters.validation import clean_reason

pytestmark = pytest.mark.django_db


@pytest.fixture
def held(matter, attorney):
    return matter_hold(matter=matter, user=attorney, reason="Preservation letter of 2 May")


def _admin_form(matter, **changes) -> dict:
    form = {"name": matter.name, "court": matter.court, "case_number": matter.case_number, "client": matter.client,
            "opposing_party": matter.opposing_party, "status": matter.status, "label_style": matter.label_style,
            "date_order": matter.date_order, "number_format": matter.number_format,
            "members": [str(pk) for pk in matter.members.values_list("pk", flat=True)]}
    return {**form, **changes}


def test_the_admin_form_cannot_lift_a_hold(client, held, attorney):
    attorney.is_staff = attorney.is_superuser = True
    attorney.save()
    client.force_login(attorney)
    url = reverse("admin:matters_matter_change", args=[held.pk])
    page = client.get(url).content.decode()
    assert 'name="legal_hold"' not in page  # shown, not editable
    # The hold box left unticked, as a browser sends a cleared checkbox (no value), and one sent as "off" too.
    response = client.post(url, _admin_form(held, court="D. Mass. (Boston)"))
    assert response.status_code == 302
    client.post(url, _admin_form(held, legal_hold="") | {"court": "D. Mass."})
    matter = Matter.objects.get(pk=held.pk)
    assert matter.legal_hold and matter.court == "D. Mass."
    assert not matter.audit_entries.filter(action="matter.hold_lift").exists()
    with pytest.raises(MatterOnHold):
        matter_purge(matter=matter, user=attorney, confirm_name=matter.name)


def test_a_save_from_any_other_path_cannot_set_or_lift_the_hold(held, attorney):
    stale = Matter.objects.get(pk=held.pk)
    stale.legal_hold = False
    with pytest.raises(ValidationError, match="can only be lifted by an attorney of the matter"):
        stale.save()
    assert Matter.objects.get(pk=held.pk).legal_hold

    lifted = matter_hold_lift(matter=held, user=attorney, reason="Case settled; release signed")
    lifted.legal_hold = True
    with pytest.raises(ValidationError, match="can only be set by an attorney"):
        lifted.save(update_fields=["legal_hold"])
    with pytest.raises(ValidationError, match="can only be set"):
        Matter(name="Born held v. Nobody", legal_hold=True).save()
    assert not Matter.objects.get(pk=held.pk).legal_hold
    # Saving anything else keeps working.
    lifted.legal_hold = False
    lifted.court = "D.N.H."
    lifted.save()
    assert Matter.objects.get(pk=held.pk).court == "D.N.H."


# Each made only of characters that show nothing: zero-width, bidirectional controls and isolates, the word
# joiner, variation selectors, the Hangul filler, tag characters, a combining mark on its own, Braille blank.
UNSEEN = ["\u200b" * 12, "\u202e\u202d" * 6, "\u2066\u2069" * 6, "\u2060\ufeff" * 6, "\ufe0f" * 12,
          "\u3164" * 12, "\U000e0041" * 12, "\u034f" * 12, "\u2800" * 12, " \u200d\u200c\u061c\u180e " * 3]


@pytest.mark.parametrize("reason", UNSEEN)
def test_hold_and_lift_reasons_a_reader_cannot_see_are_refused(matter, attorney, reason):
    with pytest.raises(ValidationError, match="Say why"):
        matter_hold(matter=matter, user=attorney, reason=reason)
    assert not Matter.objects.get(pk=matter.pk).legal_hold
    matter_hold(matter=matter, user=attorney, reason="Preservation letter")
    with pytest.raises(ValidationError, match="Say why"):
        matter_hold_lift(matter=matter, user=attorney, reason=reason)
    assert Matter.objects.get(pk=matter.pk).legal_hold
    assert not matter.audit_entries.filter(action="matter.hold_lift").exists()


@pytest.mark.parametrize("reason", UNSEEN + ["\ufe0f".join("Checked") + "\ufe0f"])
def test_waiver_reasons_count_only_what_shows(reason):
    with pytest.raises(ValidationError, match="at least 10 characters"):
        clean_reason(reason)


def test_real_reasons_with_accents_and_other_scripts_pass():
    assert clean_reason("Cafe\u0301 receipt checked") == "Cafe\u0301 receipt checked"
    assert clean_reason("法院命令第三号已核对") and clean_reason("Checked 👍🏽 in Westlaw")
