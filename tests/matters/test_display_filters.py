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


@pytest.mark.parametrize(("noun", "number", "shown"), [
    ("redaction box", 2, "redaction boxes"), ("redaction box", 1, "redaction box"), ("match", 3, "matches"),
    ("authority", 2, "authorities"), ("day", 2, "days"), ("blocking finding", 0, "blocking findings"),
])
def test_plurals_change_only_the_last_word(noun, number, shown):
    from matters.templatetags.display import plural

    assert plural(noun, number) == shown


def test_page_numbers_read_as_a_list():
    from matters.templatetags.display import numbers

    assert [numbers([3]), numbers([3, 7]), numbers([1, 4, 9])] == ["3", "3 and 7", "1, 4 and 9"]


@pytest.mark.parametrize(("key", "shown"), [
    ("USD:2500.00", "$2,500.00"), ("EUR:1000.00", "€1,000.00"), ("CHF:1200.50", "CHF 1,200.50"),
    ("PCT:12.5", "12.5%"), ("PCT:12.50", "12.5%"), ("4812.55", "4,812.55"), ("USD:-20.00", "-$20.00"),
    ("not an amount", "not an amount"), (None, "–"),
])
def test_amounts_are_written_as_a_brief_writes_them(key, shown):
    assert render("{{ k|amount }}", k=key) == shown


@pytest.mark.parametrize(("value", "shown"), [
    ("2018-11-19", "November 19, 2018"), ("2021-03-04T10:00:00", "March 4, 2021"), ("soon", "soon"), ("", "–"),
])
def test_dates_are_written_out(value, shown):
    assert render("{{ d|day }}", d=value) == shown


@pytest.mark.parametrize(("status", "shown"), [
    ("needs_password", "needs a password"), ("not_computed", "not computed"), ("ready", "ready"),
    ("needs_record_cite", "needs a record cite"),
])
def test_statuses_read_as_words(status, shown):
    assert render("{{ s|words }}", s=status) == shown


def test_a_findings_detail_is_labelled_words_not_raw_keys():
    rows = render("{% for label, value in d|detail_rows %}{{ label }}={{ value }};{% endfor %}",
                  d={"readings": ["2018-11-19", "2018-09-11"], "value": "USD:2500.00", "low_ocr_confidence": 41.2,
                     "only_in_word_change": {"exhibit": "3", "where": "a tracked insertion"}, "new_thing": [1, 2]})
    assert rows == ("Read as=November 19, 2018 or September 11, 2018;Amount=$2,500.00;"
                    "Lowest OCR confidence of its pages=41%;Only in a Word change=a tracked insertion of Exhibit 3;"
                    "New thing=1, 2;")
    asserted = render("{% for label, value in d|detail_rows %}{{ label }}={{ value }};{% endfor %}",
                      d={"asserts": "a person", "value": "Judge Fakename"})
    assert asserted == "Asserts=a person;Written=Judge Fakename;"
    assert "readings" not in rows and "[" not in rows


@pytest.mark.parametrize(("text", "shown"), [
    ('"a phrase"', "“a phrase”"), ("“a phrase”", "“a phrase”"), ("plain words", "“plain words”"),
    ('"a" AND "b"', "“\"a\" AND \"b\"”"),
])
def test_quoted_input_is_not_quoted_twice(text, shown):
    from matters.templatetags.display import quoted

    assert quoted(text) == shown


@pytest.mark.parametrize(("text", "length", "shown"), [
    ("Draft a motion to compel the landlord to repair the roof", 30, "Draft a motion to compel the…"),
    ("Short title", 30, "Short title"),
    ("Supercalifragilisticexpialidocious", 10, "Supercalif…"),
])
def test_clipping_stops_at_a_word_boundary(text, length, shown):
    from matters.templatetags.display import clip

    assert clip(text, length) == shown
