"""The verifier and verify_draft given hostile input: empty and invisible drafts, long runs that make naive
matching quadratic, more Bates numbers than a query takes, files that are not drafts. Nothing may raise, every
finding's offsets index the original text, and a long draft verifies in seconds, not minutes."""

import json
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from matters.drafts.verifier.check import verify_text
from matters.drafts.verifier.dates import find_dates
from matters.drafts.verifier.money import find_amounts
from matters.drafts.verifier.quotes import find_quotations
from matters.drafts.verifier.text import Spans, sentences
from tests.support.record import CORRECT

pytestmark = pytest.mark.django_db


def offsets_hold(text, findings):
    for finding in findings:
        assert 0 <= finding.start <= finding.end <= len(text)
        assert text[finding.start:finding.end] == finding.text


@pytest.mark.parametrize("text", [
    "",
    " \t\n\r\x0b\x0c",
    "\u200b\u200c\u200d\ufeff\u202e\u202d\u2066\u2069",
    "".join(chr(i) for i in range(32)),
])
def test_an_empty_or_invisible_draft_has_no_findings(matter, record, text):
    assert verify_text(matter=matter, text=text) == []


@pytest.mark.parametrize("text", [
    "The lease was signed on\r\nMarch 3, 2021.\r\nSMITH000001.\r\n“we will not pay the rent for April,\r\nbecause "
    "the roof leaks.” SMITH000002.\r\n",
    "The lease\x00 was signed on March 3, 2021.\x00 SMITH000001. \x00“we will not\x00 pay”",
    "Signed on \u202eMarch 3, 2021\u202c. SMITH\u200b000001. Rent \u202e$1,250.00\u202c (Ex. 1 at 1).",
    "Договор подписан March 3, 2021. «цитата» SMITH000001. 合同于2021年3月3日签署。金额为$1,250.00。",
    'He said "we will not pay the rent. And “more without end. SMITH000001. She wrote “he said “we will” left”.',
    "“" + "\n".join(["we will not pay the rent for April"] * 50) + "” SMITH000002.",
])
def test_hostile_text_keeps_offsets_into_the_original(matter, record, text):
    offsets_hold(text, verify_text(matter=matter, text=text))


def test_odd_numbers_dates_and_ranges_are_findings_not_errors(matter, record):
    text = ("On February 29, 2023, 00/00/0000 and January 1, 0001 the debt was $99999999999999999999, $1,2,3, "
            "$.50 or € alone. See 99999999999999999999 U.S. 1 (2000); Doe v. Roe, 99999 U.S. 99999 (2013). "
            "See SMITH000001-SMITH999999 and SMITH000003-SMITH000001. Ex. 1 at 2-1. Ex. 1 at 0. "
            "Ex. Ex. Ex. $$$$ §§§§ ....")
    findings = verify_text(matter=matter, text=text)
    offsets_hold(text, findings)
    reversed_pages = next(f for f in findings if f.text == "Ex. 1 at 2-1")
    # Page 2 of Exhibit 1 exists: the range is what is wrong.
    assert reversed_pages.status == "ungrounded" and "ends before it starts" in reversed_pages.message


def test_runs_that_made_matching_quadratic_are_read_in_linear_time():
    cases = [
        (sentences, "Ex. " * 20_000),  # every abbreviation re-read the whole stretch since the last sentence
        (find_dates, "On March 3, 2021. " * 20_000),
        (find_amounts, "Paid $1,250.00. " * 20_000),
        (find_amounts, "five hundred dollars ($500). " * 10_000),
        (find_quotations, '"a b c" ' * 20_000),
    ]
    for read, text in cases:
        started = time.perf_counter()
        read(text)
        assert time.perf_counter() - started < 3, read.__name__  # 14-25 s each when every span was compared


def test_spans_answer_overlap_like_a_scan():
    held = [(0, 4), (2, 9), (12, 12), (20, 30)]
    spans = Spans(held)
    for start in range(0, 32):
        for end in range(start, 33):
            assert spans.overlaps(start, end) == any(s < end and start < e for s, e in held), (start, end)
    disjoint = Spans()
    for start, end in [(10, 12), (0, 3), (5, 7)]:
        assert not disjoint.overlaps(start, end)
        disjoint.add(start, end)
    assert disjoint.overlaps(11, 20) and disjoint.overlaps(2, 4) and not disjoint.overlaps(3, 5)


def test_more_bates_numbers_than_one_query_takes(matter, record):
    # 30 ranges of 4,999 numbers: 300,000 forms to look up, more than SQLite or PostgreSQL takes in one query.
    text = " ".join(f"See SMITH{n:06d}-SMITH{n + 4998:06d}." for n in range(1, 30 * 5000, 5000))
    findings = verify_text(matter=matter, text=text)
    assert len(findings) == 30 and all(f.kind == "bates_cite" for f in findings)
    assert findings[0].status == "ungrounded" and "SMITH000004" in findings[0].message
    offsets_hold(text, findings)


def test_a_2mb_draft_verifies_in_reasonable_time(matter, record):
    paragraph = CORRECT + "\n\n"
    text = (paragraph * (2_000_000 // len(paragraph) + 1))[:2_000_000]
    started = time.perf_counter()
    findings = verify_text(matter=matter, text=text)
    elapsed = time.perf_counter() - started
    # Every claim of the correct paragraph is checked in every copy of it (about 4,400 copies).
    assert len(findings) > 50_000 and not [f for f in findings[:100] if f.blocking]
    offsets_hold(text, findings[:2000] + findings[-2000:])
    assert elapsed < 120, f"{elapsed:.1f} s"  # over 4 minutes when spans were compared pairwise


# -- verify_draft -------------------------------------------------------------------------------------------------

def test_verify_draft_offsets_are_into_the_file_even_with_windows_line_endings(matter, record, tmp_path, capsys):
    raw = "The lease was signed\r\non March 3, 2021.\r\nSMITH000001.\r\n"
    path = tmp_path / "draft.md"
    path.write_bytes(raw.encode("utf-8"))
    call_command("verify_draft", "--matter", str(matter.pk), str(path))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {line["text"] for line in lines} == {"March 3, 2021", "SMITH000001"}
    for line in lines:
        assert raw[line["start"]:line["end"]] == line["text"]


def test_verify_draft_refuses_what_is_not_a_draft_file(matter, tmp_path):
    (tmp_path / "binary").write_bytes(bytes(range(256)))
    for path, says in [(tmp_path, "is a directory"), (tmp_path / "missing", "no such file"),
                       (tmp_path / "binary", "not UTF-8")]:
        with pytest.raises(CommandError, match=says):
            call_command("verify_draft", "--matter", str(matter.pk), str(path))
    with pytest.raises(CommandError, match="No matter"):
        call_command("verify_draft", "--matter", "99999999999999999999", str(tmp_path / "binary"))
