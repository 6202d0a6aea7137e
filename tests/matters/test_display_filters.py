"""The filters every page shows figures with (matters/templatetags/display.py)."""

import pytest
from django.template import Context, Template


def render(source: str, **context) -> str:
    return Template("{% load display %}" + source).render(Context(context))


@pytest.mark.parametrize(("value", "noun", "shown"), [
    (1, "page", "1 page"), (3, "page", "3 pages"), (0, "page", "0 pages"), (1, "box", "1 box"),
    (2, "box", "2 boxes"), (1204, "page", "1,204 pages"), (2, "entry", "2 entries"),
])
def test_counts_say_their_plural(value, noun, shown):
    assert render('{{ n|count:noun }}', n=value, noun=noun) == shown


@pytest.mark.parametrize(("ms", "shown"), [
    (840, "840 ms"), (12_400, "12.4 s"), (111_068, "1 min 51 s"), (7_530_000, "2 h 05 min"), (None, "–"),
])
def test_durations_read_as_a_person_says_them(ms, shown):
    assert render("{{ ms|duration }}", ms=ms) == shown


def test_speeds_are_rounded_and_carry_their_unit():
    assert render("{{ v|tok_s }}", v=3.0238220603621215) == "3.0 tok/s"


@pytest.mark.parametrize(("n", "shown"), [(44, "44 bytes"), (1, "1 byte"), (2_203_118, "2.1\xa0MB (2,203,118 bytes)")])
def test_sizes_never_say_the_same_figure_twice(n, shown):
    assert render("{{ n|size }}", n=n) == shown


@pytest.mark.parametrize(("first", "last", "shown"), [
    ("X000117", "X000117", "X000117"), ("X000101", "X000117", "X000101–X000117"), ("X000101", "", "X000101"),
])
def test_a_one_page_range_is_one_number(first, last, shown):
    assert render("{% bates_range first last %}", first=first, last=last) == shown
