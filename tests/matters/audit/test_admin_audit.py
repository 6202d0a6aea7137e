"""Changes made in the Django admin are audited: a matter's members and exhibits in the matter's chain; users,
groups and passwords in the system chain, a superuser's reset of someone else's password recorded as such."""

import pytest
from django import forms
from django.contrib.auth.models import Group
from django.urls import reverse

from matters.audit.services import audit_verify
from matters.exhibits.services import exhibit_create
from matters.models import AuditEntry

pytestmark = pytest.mark.django_db


def admin_form_data(client, url: str, **changes) -> dict:
    """The change form's current values as a browser would post them, with ``changes`` applied."""
    response = client.get(url)
    assert response.status_code == 200, url
    form = response.context["adminform"].form
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is None or value is False:
            continue
        if isinstance(form.fields[name], forms.SplitDateTimeField):  # the admin's two-box date and time
            value = form.fields[name].to_python(value) if isinstance(value, list) else value
            data[f"{name}_0"], data[f"{name}_1"] = value.date().isoformat(), value.time().strftime("%H:%M:%S")
            continue
        data[name] = "on" if value is True else value
    for inline in response.context["inline_admin_formsets"]:
        management = inline.formset.management_form
        for name in management.fields:
            data[management.add_prefix(name)] = management[name].value()
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


@pytest.fixture
def boss(make_user):
    return make_user("boss", "attorney", is_superuser=True, is_staff=True)


def entries(chain: str, prefix: str = "admin.") -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(chain=chain, action__startswith=prefix).order_by("seq"))


def test_adding_a_member_to_a_matter_is_in_the_matters_chain(client, boss, matter, attorney, make_user):
    matter.members.add(boss)
    newcomer = make_user("nora", "assistant")
    client.force_login(boss)
    url = reverse("admin:matters_matter_change", args=[matter.pk])
    members = sorted([attorney.pk, boss.pk, newcomer.pk])
    response = client.post(url, admin_form_data(client, url, members=members))
    assert response.status_code == 302
    [entry] = entries(f"matter:{matter.pk}")
    assert entry.action == "admin.change" and entry.actor == "boss" and entry.matter == matter
    old, new = entry.detail["changes"]["members"]
    assert not any("nora" in member for member in old) and any("nora" in member for member in new)
    assert audit_verify(matter=matter).ok


def test_renaming_an_exhibit_is_in_the_matters_chain(client, boss, matter, attorney):
    import io

    matter.members.add(boss)
    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(b"%PDF-1.4 not really"), original_name="a.pdf",
                             origin="client", uploaded_by=attorney, enqueue=False)
    client.force_login(boss)
    url = reverse("admin:matters_exhibit_change", args=[exhibit.pk])
    response = client.post(url, admin_form_data(client, url, title="Lease, signed"))
    assert response.status_code == 302
    [entry] = entries(f"matter:{matter.pk}")
    assert entry.detail["changes"]["title"] == [exhibit.title, "Lease, signed"]
    assert entry.object_id == str(exhibit.pk)


def test_superuser_resetting_a_members_password_is_recorded_as_such(client, boss, make_user):
    member = make_user("member", "assistant")
    client.force_login(boss)
    url = reverse("admin:auth_user_password_change", args=[member.pk])
    response = client.post(url, {"password1": "a-new-long-passphrase", "password2": "a-new-long-passphrase"})
    assert response.status_code == 302
    [entry] = entries("system")
    assert entry.action == "admin.password_reset" and entry.actor == "boss"
    assert entry.detail["user"] == "member" and entry.detail["by_superuser"] is True
    assert "a-new-long-passphrase" not in str(entry.detail)


def test_own_password_change_in_the_admin_is_recorded(client, boss):
    client.force_login(boss)
    url = reverse("admin:password_change")
    response = client.post(url, {"old_password": "correct-horse-battery", "new_password1": "another-long-phrase",
                                 "new_password2": "another-long-phrase"})
    assert response.status_code == 302
    [entry] = entries("system")
    assert entry.action == "admin.password_change" and entry.detail["user"] == "boss"


def test_user_and_group_changes_are_in_the_system_chain(client, boss, make_user):
    member = make_user("member", "assistant")
    client.force_login(boss)
    url = reverse("admin:auth_user_change", args=[member.pk])
    attorney_group = Group.objects.get(name="attorney")
    response = client.post(url, admin_form_data(client, url, groups=[attorney_group.pk], is_active=None))
    assert response.status_code == 302
    group_url = reverse("admin:auth_group_change", args=[attorney_group.pk])
    response = client.post(group_url, admin_form_data(client, group_url, name="attorneys"))
    assert response.status_code == 302
    user_entry, group_entry = entries("system")
    assert user_entry.detail["changes"]["groups"][1] == [f"attorney (#{attorney_group.pk})"]
    assert user_entry.detail["changes"]["is_active"] == ["True", "False"]
    assert group_entry.detail["changes"]["name"] == ["attorney", "attorneys"]
    assert audit_verify(matter=None).ok
