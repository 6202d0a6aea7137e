"""The chronology's filter form: a span that ends before it starts, a date that is not one, an exhibit of
another matter are each refused on their field, and the page shows no chronology for a filter it cannot read."""

import datetime

import pytest
from django.urls import reverse

from matters.chronology.forms import ChronologyFilterForm
from matters.models import Exhibit
from tests.factories import ExhibitFactory, MatterFactory

pytestmark = pytest.mark.django_db


def test_a_span_that_ends_before_it_starts_is_refused_on_its_end(matter):
    form = ChronologyFilterForm({"start": "2021-03-04", "end": "2021-03-01"}, exhibits=Exhibit.objects.none())
    assert not form.is_valid()
    assert form.errors == {"end": ["The end of the span comes before its start."]}
    assert form.cleaned_data["start"] == datetime.date(2021, 3, 4)


def test_an_exhibit_of_another_matter_and_a_date_that_is_not_one_are_refused(matter):
    mine = ExhibitFactory(matter=matter)
    theirs = ExhibitFactory(matter=MatterFactory())
    form = ChronologyFilterForm({"exhibit": [mine.pk, theirs.pk], "start": "March third"},
                                exhibits=matter.exhibits.all())
    assert not form.is_valid()
    assert set(form.errors) == {"exhibit", "start"}
    assert f"{theirs.pk} is not one of the available choices" in form.errors["exhibit"][0]


def test_the_page_shows_the_refusal_on_the_field_and_no_chronology(client, attorney, matter):
    client.force_login(attorney)
    response = client.get(reverse("matters:chronology", args=[matter.pk]), {"start": "2021-03-04",
                                                                           "end": "2021-03-01"})
    assert response.status_code == 200
    assert "The end of the span comes before its start." in response.content.decode()
    assert response.context["total"] is None and not response.context["page_obj"].object_list
