"""A run of characters without a space (a pasted key, an encoded blob, a URL with its query) is laid out whole:
MuPDF never breaks a line inside a word, so such a run ran off the page (87 characters of 20,000 kept in the text
layer) and took time growing with the square of its length. The page breaks it into pieces that fit a line."""

import re
from email.message import EmailMessage

import pymupdf
from hypothesis import given, settings
from hypothesis import strategies as st

from matters.email.parse import parse_eml
from matters.email.render import RUN_CHARACTERS, broken_markup_runs, broken_runs, message_pdf

RUN = "".join(chr(0x41 + (i * 7) % 26) for i in range(60_000))  # letters in a known order, no space


def message(body: str, subtype: str = "plain") -> bytes:
    mail = EmailMessage()
    mail["From"] = "Ana Ruiz <ana@ruiz-law.example>"
    mail["To"] = "ben@stone.example"
    mail["Subject"] = "Key " + "K" * 300
    mail["Date"] = "Tue, 03 Mar 2026 23:30:00 -0800"
    mail.set_content(body, subtype=subtype)
    return mail.as_bytes()


def layer(pdf: bytes) -> str:
    with pymupdf.open("pdf", pdf) as document:
        return "".join(page.get_text() for page in document)


def test_a_long_run_in_a_plain_body_is_in_the_text_layer_whole_and_in_order():
    text = layer(message_pdf(parse_eml(message(f"Start {RUN} end"))))
    assert RUN in re.sub(r"\s+", "", text)
    assert "K" * 300 in re.sub(r"\s+", "", text)  # the subject's run too


def test_a_long_run_in_an_html_body_is_in_the_text_layer_whole_and_in_order():
    parsed = parse_eml(message(f"<p>Start <b>{RUN}</b> &amp; end</p>", "html"))
    assert parsed.body_html
    text = layer(message_pdf(parsed))
    assert RUN in re.sub(r"\s+", "", text)
    assert "&" in text


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from("ab &;#<>x\n"), max_size=400))
def test_breaking_runs_adds_only_line_breaks_and_leaves_no_run_longer_than_a_line(text):
    broken = broken_runs(text)
    assert broken.replace("\n", "") == text.replace("\n", "")
    assert all(len(run) <= RUN_CHARACTERS for run in re.split(r"\s", broken))


@settings(max_examples=200)
@given(st.lists(st.one_of(st.text(alphabet="abc", min_size=1, max_size=120), st.just("&amp;"), st.just("&#233;"),
                          st.just("<b>"), st.just("</b>"), st.just(" "), st.just('<td class="x">')), max_size=40))
def test_breaking_runs_in_markup_keeps_tags_and_entities_whole(pieces):
    markup = "".join(pieces)
    broken = broken_markup_runs(markup)
    assert broken.replace("<br>", "") == markup
    for text in re.split(r"<[^>]*>", broken):
        for run in text.split():
            assert len(re.findall(r"&#?\w+;|[^&]|&", run)) <= RUN_CHARACTERS
