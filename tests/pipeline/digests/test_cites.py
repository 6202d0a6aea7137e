"""A digest's key facts checked against the pages they cite."""

from pipeline.digests.cites import facts_check, key_words

PAGES = {1: "The tenant shall pay rent of $1,250.00 on the first of each month.",
         2: "The landlord shall keep the roof in good repair."}


def _statuses(facts: list[dict]) -> list[str]:
    return [f["status"] for f in facts_check(facts, PAGES)]


def test_a_fact_in_other_words_on_its_page_is_borne_out():
    assert _statuses([{"fact": "Tenant must pay rent of $1,250.00 each month.", "pages": [1]}]) == ["on_page"]


def test_a_fact_cited_to_the_wrong_page_is_flagged_with_its_missing_words():
    [checked] = facts_check([{"fact": "The landlord keeps the roof in repair.", "pages": [1]}], PAGES)
    assert checked["status"] == "not_on_cited_page" and {"landlord", "roof"} <= set(checked["missing"])


def test_a_figure_not_on_the_page_flags_the_fact_even_when_its_words_are_there():
    assert _statuses([{"fact": "The tenant shall pay rent of $1,500.00 each month.", "pages": [1]}]) == [
        "not_on_cited_page"]


def test_a_fact_over_two_cited_pages_is_read_against_both():
    assert _statuses([{"fact": "Rent is $1,250.00 and the landlord keeps the roof.", "pages": [1, 2]}]) == [
        "on_page"]


def test_a_fact_without_a_cite_or_citing_a_page_not_given_is_flagged():
    assert _statuses([{"fact": "Rent is $1,250.00.", "pages": []},
                      {"fact": "Rent is $1,250.00.", "pages": [7]}]) == ["no_cite", "page_not_read"]


def test_key_words_leave_out_function_words_and_keep_figures():
    assert key_words("The rent of $1,250.00 is due on the 1st.") == ["rent", "$1", "250", "00", "due", "1st"]
