"""reverse_ids gives the very URL Django's reverse gives, for any ids, under any script prefix; what it cannot
cut at its ids (an argument that is not an int part, a pattern that refuses its markers) goes to reverse."""

import pytest
from django.urls import NoReverseMatch, clear_script_prefix, reverse, set_script_prefix
from hypothesis import given
from hypothesis import strategies as st

from lawdesk.url_ids import reverse_ids

IDS = st.integers(min_value=0, max_value=10**12)


@given(matter=IDS, exhibit=IDS)
def test_the_url_of_an_exhibit_is_the_one_reverse_gives(matter, exhibit):
    assert reverse_ids("matters:exhibit", matter, exhibit) == reverse("matters:exhibit", args=[matter, exhibit])
    assert reverse_ids("matters:detail", matter) == reverse("matters:detail", args=[matter])


def test_a_script_prefix_is_kept_apart():
    reverse_ids("matters:exhibit", 3, 4)  # the pieces under "/" are made first
    set_script_prefix("/lawdesk/")
    try:
        assert reverse_ids("matters:exhibit", 3, 4) == "/lawdesk/matters/3/exhibits/4/"
    finally:
        clear_script_prefix()
    assert reverse_ids("matters:exhibit", 3, 4) == "/matters/3/exhibits/4/"


def test_what_is_not_an_id_goes_to_reverse():
    # members/<str:action>/: an argument that is not an int part is written as reverse writes it.
    assert reverse_ids("matters:member", 5, "add") == reverse("matters:member", args=[5, "add"])
    with pytest.raises(NoReverseMatch):
        reverse_ids("matters:exhibit", -1, 2)
    with pytest.raises(NoReverseMatch):
        reverse_ids("matters:exhibit", 1)  # too few
