"""The New production form: a refusal is shown on the form with everything the attorney entered kept."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from matters.models import Production
from matters.productions.reservation import AEO

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_exhibits(matter, corpus, ingest):
    return ingest(matter, corpus("court/ca7_3.pdf")), ingest(matter, corpus("court/cafc_3.pdf"))


def test_a_refused_production_keeps_every_choice_entered(client, attorney, matter, two_exhibits):
    first, second = two_exhibits
    client.force_login(attorney)
    url = reverse("matters:productions", args=[matter.pk])
    response = client.post(url, {
        "prefix": "9BAD", "digits": "8", "start": "40", "suffix": "", "position": "top-right",
        "cover_sheets": "none", "with_images": "on",
        f"order-{first.pk}": "2", f"confidentiality-{first.pk}": AEO,
        f"include-{second.pk}": "on", f"order-{second.pk}": "1", f"confidentiality-{second.pk}": "custom",
        f"custom-{second.pk}": "SUBJECT TO PROTECTIVE ORDER", f"withhold-{second.pk}": "work_product",
        f"withhold-description-{second.pk}": "Draft brief prepared by counsel",
    })
    page = response.content.decode()
    assert response.status_code == 400 and not Production.objects.exists()
    assert "A Bates prefix is a letter followed by" in page
    assert 'name="prefix" value="9BAD"' in page and 'name="digits" type="number" min="6" max="15" value="8"' in page
    assert 'value="40"' in page and '<option value="top-right" selected>' in page
    assert 'name="with_images" checked' in page and 'name="with_index">' in page  # unticked stays unticked
    assert f'name="include-{first.pk}" aria-label' in page  # left out, still left out
    assert f'name="include-{second.pk}" checked' in page
    assert f'<option value="{escape(AEO)}" selected>' in page
    assert 'value="SUBJECT TO PROTECTIVE ORDER"' in page
    assert '<option value="work_product" selected>' in page and 'value="Draft brief prepared by counsel"' in page


def test_an_order_that_is_not_a_number_is_said_on_its_exhibit(client, attorney, matter, two_exhibits):
    first, _ = two_exhibits
    client.force_login(attorney)
    response = client.post(reverse("matters:productions", args=[matter.pk]), {
        "prefix": "SMITH", "digits": "6", "position": "bottom-right", "cover_sheets": "none",
        f"include-{first.pk}": "on", f"order-{first.pk}": "two",
    })
    assert response.status_code == 400 and not Production.objects.exists()
    assert f"The order of {first.display_label} must be a whole number." in response.content.decode()


def test_a_refusal_keyed_by_a_field_the_form_does_not_show_is_still_shown(client, attorney, matter, two_exhibits):
    first, _ = two_exhibits
    client.force_login(attorney)
    response = client.post(reverse("matters:productions", args=[matter.pk]), {
        "prefix": "SMITH", "digits": "6", "position": "bottom-right", "cover_sheets": "none",
        f"include-{first.pk}": "on", f"order-{first.pk}": "1", f"confidentiality-{first.pk}": "custom",
        f"custom-{first.pk}": "VERTRAULICH ✠ 機密",
    })
    page = response.content.decode()
    assert response.status_code == 400 and not Production.objects.exists()
    assert "no stamp font can show" in page and 'id="production-refused"' in page


def test_an_assistant_who_sends_a_withholding_is_refused_not_ignored(client, make_user, matter, two_exhibits):
    first, _ = two_exhibits
    assistant = make_user("ann", "assistant")
    matter.members.add(assistant)
    client.force_login(assistant)
    page = client.get(reverse("matters:productions", args=[matter.pk])).content.decode()
    assert f'name="withhold-{first.pk}"' not in page
    response = client.post(reverse("matters:productions", args=[matter.pk]), {
        "prefix": "SMITH", "digits": "6", "position": "bottom-right", "cover_sheets": "none",
        f"include-{first.pk}": "on", f"order-{first.pk}": "1", f"withhold-{first.pk}": "work_product",
        f"withhold-description-{first.pk}": "x",
    })
    assert response.status_code == 403 and not Production.objects.exists()
