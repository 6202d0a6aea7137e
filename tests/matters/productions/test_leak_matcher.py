"""The leak scan's matcher (matters.productions.bates.leaks.Secrets.find, one Aho-Corasick pass for every run)
finds what comparing the text's runs of words one length at a time finds, on a filing's own text."""

import random

import pymupdf
import pytest
from hypothesis import given
from hypothesis import strategies as st

from matters.productions.bates.leaks import SHINGLE_WORDS, Secrets, _grams, word_line, words


def runs_compared_one_length_at_a_time(secrets: Secrets, text: str) -> list[tuple[str, str]]:
    """The matcher as it was before the automaton: the text's runs of each length looked up in that length's
    table, the first of each length, the longest first."""
    tokens, found = words(text), []
    for length, table in sorted(secrets.runs.items(), reverse=True):
        run = next(filter(table.__contains__, _grams(tokens, length)), None)
        if run is not None:
            found.append((" ".join(run), table[run]))
    return found


@pytest.mark.parametrize("seed", range(5))
def test_the_automaton_finds_what_the_runs_compared_one_length_at_a_time_find(corpus, seed):
    with pymupdf.open(corpus("court/scotus-slip-2012.pdf")) as doc:
        pages = [page.get_text() for page in doc]
    chance = random.Random(seed)
    withheld, produced = pages[0], "\n".join(pages[1:])
    secrets = Secrets()
    secrets.add_document(withheld, "withheld")
    tokens = words(produced)
    for _ in range(20):  # redacted strings of one to four words, some of them from the produced text
        start, length = chance.randrange(len(tokens)), chance.randint(1, 4)
        secrets.add(" ".join(tokens[start:start + length]) if chance.random() < 0.5
                    else f"Zorbatek {chance.randint(1000, 9999)}", "redacted")
    secrets.allow(pages[1])  # a page produced without a box
    # Texts as the scan meets them: whole pages, pieces of them with odd punctuation, case and underscores.
    texts = [produced, withheld, withheld.upper().replace(" ", "_"), produced[:2000] + " ZORBATEK-" + "1234"]
    for _ in range(30):
        start = chance.randrange(len(produced))
        texts.append(produced[start:start + chance.randint(10, 400)])
    assert sum(map(len, secrets.runs.values())) > SHINGLE_WORDS
    for text in texts:
        assert secrets.find(text) == runs_compared_one_length_at_a_time(secrets, text)
    assert secrets.find(withheld)  # the withheld filing's own text is found


@given(st.text(alphabet=st.characters(codec="ascii")) | st.text()
       | st.lists(st.sampled_from(["Straße", "İstanbul", "ﬁle", "“Holloway”", "§ 12", "DX‑44127", "Ⅻ", "٣", "é",
                                   "e\u0301", "\ud800", "_", "\x00", "—", "½", "ǅ"])).map("".join))
def test_a_texts_word_line_is_its_words_with_one_space_between(text):
    # The C string methods read the same words as the regular expression does, case folded the same way.
    assert word_line(text) == " ".join(words(text))


@given(st.lists(st.sampled_from(["Margaret", "HOLLOWAY", "4417", "_", "-", " ", "\t\n", "é", "ß", "\x00", "\x7f"]),
                max_size=12))
def test_a_redacted_name_is_found_whatever_ascii_separates_its_words(pieces):
    secrets = Secrets()
    secrets.add("Margaret Holloway", "redacted")
    text = "".join(pieces)
    expected = ["margaret", "holloway"] in [words(text)[i:i + 2] for i in range(len(words(text)))]
    assert bool(secrets.find(text)) == expected
