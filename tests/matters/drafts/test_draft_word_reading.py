"""A draft back from Word, read and merged without the database: the project's own export reads back word for
word, tracked changes read as Word shows the final text, comments stay beside their paragraphs, italics are no
change, and only what Word changed is written anew."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from matters.drafts.export_docx import docx_bytes
from matters.drafts.markdown import source_blocks
from matters.drafts.word_merge import merge
from matters.drafts.word_reading import WordUnreadable, read_word
from tests.matters.drafts.word_files import WordEdit, packed, parts

BRIEF = (
    "# Motion to Compel\n\n"
    "## I. Background\n\n"
    "The tenant paid $4,812.55 on March 3, 2019. *Smith v. Jones*, 728 F.2d 911, 915 (5th Cir. 1984).[^1]\n\n"
    "The landlord refused the payment and kept the deposit of $1,200 for a further six months.\n\n"
    "- the lease of 2018 was signed by both parties\n"
    "- the deposit was paid\n"
    "  - in cash, on delivery of the keys\n\n"
    "> The tenant shall pay the rent on the first day of each month.\n\n"
    "---\n\n"
    "1. first, the notice was late\n"
    "2. second, it named the wrong premises\n\n"
    "```\nSMITH000123\nSMITH000124\n```\n\n"
    "A **bold** claim and an _underscored_ one,\nwrapped on two lines, with a \\*literal star.\n\n"
    "[^1]: See Ex. 3 at 2; *see also* Compl. ¶ 12.\n"
)


def export(text: str, tmp_path, name="brief.docx"):
    path = tmp_path / name
    path.write_bytes(docx_bytes(text=text, title="Motion", footer="Version 1 SHA-256 " + "a" * 64))
    return path


def written(content: bytes, tmp_path, name="edited.docx"):
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_the_projects_own_export_reads_back_as_the_same_text(tmp_path):
    word = read_word(export(BRIEF, tmp_path))
    merged = merge(BRIEF, word)
    assert merged.text == BRIEF
    blocks, _, _ = source_blocks(BRIEF)
    assert (merged.kept, merged.changed, merged.added, merged.removed) == (len(blocks), 0, 0, 0)
    assert word.version_sha256s == ["a" * 64]


# Words an attorney writes, with the marks a brief uses; no Markdown markup of their own.
_WORDS = st.lists(st.sampled_from(["court", "tenant", "paid", "$4,812.55", "March", "3,", "2019.", "§", "1983",
                                   "“held”", "Id.", "at", "5", "(5th", "Cir.", "1984)", "Café", "naïve", "—", "¶"]),
                  min_size=1, max_size=12).map(" ".join)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paragraphs=st.lists(st.tuples(st.sampled_from(["", "# ", "- ", "> "]), _WORDS, st.booleans()),
                           min_size=1, max_size=6))
def test_any_draft_of_plain_paragraphs_survives_the_round_trip(tmp_path, paragraphs):
    text = "\n\n".join(f"{prefix}{'*' + words + '*' if italic else words}" for prefix, words, italic in paragraphs)
    merged = merge(text, read_word(export(text, tmp_path)))
    assert merged.text == text
    assert merged.changed == merged.added == merged.removed == 0


def test_tracked_changes_read_as_word_shows_the_final_text(tmp_path):
    edit = (WordEdit(export(BRIEF, tmp_path).read_bytes())
            .track_replace("The landlord refused", "six months", "nine months")
            .track_insert_paragraph("The landlord refused", "The tenant wrote to the landlord on April 2, 2019.")
            .track_delete_paragraph("first, the notice"))
    word = read_word(written(edit.bytes(), tmp_path))
    merged = merge(BRIEF, word)
    assert "kept the deposit of $1,200 for a further nine months." in merged.text
    assert "six months" not in merged.text and "first, the notice was late" not in merged.text
    assert "\n\nThe tenant wrote to the landlord on April 2, 2019.\n\n" in merged.text
    assert (merged.changed, merged.added, merged.removed) == (1, 1, 1)
    assert word.changes.insertions == 2 and word.changes.deletions >= 2
    # Every paragraph Word did not touch is the previous version's text, Markdown and all.
    for kept in ("*Smith v. Jones*, 728 F.2d 911, 915 (5th Cir. 1984).[^1]", "  - in cash, on delivery of the keys",
                 "```\nSMITH000123\nSMITH000124\n```", "_underscored_ one,\nwrapped on two lines, with a \\*literal",
                 "[^1]: See Ex. 3 at 2; *see also* Compl. ¶ 12.\n", "2. second, it named the wrong premises"):
        assert kept in merged.text


def test_a_deleted_paragraph_mark_joins_the_paragraph_to_the_next(tmp_path):
    edit = WordEdit(export(BRIEF, tmp_path).read_bytes()).delete_mark("The tenant paid")
    word = read_word(written(edit.bytes(), tmp_path))
    texts = [p.text for p in word.paragraphs]
    joined = [t for t in texts if t.startswith("The tenant paid")]
    assert len(joined) == 1 and joined[0].endswith("for a further six months.")
    assert "(5th Cir. 1984).The landlord refused" in joined[0]


def test_comments_stay_beside_their_paragraphs(tmp_path):
    edit = (WordEdit(export(BRIEF, tmp_path).read_bytes())
            .comment("The landlord refused", "Do we have the bank record of the refusal?")
            .comment("the deposit was paid", "Confirm the amount with the client.", author="Ann Lee"))
    word = read_word(written(edit.bytes(), tmp_path))
    merged = merge(BRIEF, word)
    anchored = {}
    for index, paragraph in enumerate(word.paragraphs):
        start, end = merged.paragraphs[index]
        for comment_id in paragraph.comments:
            anchored[word.comments[comment_id]["text"]] = (word.comments[comment_id]["author"],
                                                          merged.text[start:end])
    assert anchored == {
        "Do we have the bank record of the refusal?": (
            "Dana Whitfield", "The landlord refused the payment and kept the deposit of $1,200 for a further six "
                              "months."),
        "Confirm the amount with the client.": ("Ann Lee", "- the deposit was paid"),
    }
    assert merged.text == BRIEF  # a comment is no change to the text


def test_italics_and_bold_added_in_word_are_no_change(tmp_path):
    members = parts(export(BRIEF, tmp_path).read_bytes())
    # The attorney italicised every run of the document: the words are the same.
    document = members["word/document.xml"].decode().replace("<w:r>", "<w:r><w:rPr><w:i/><w:b/></w:rPr>")
    merged = merge(BRIEF, read_word(written(packed({**members, "word/document.xml": document.encode()}),
                                             tmp_path)))
    assert merged.text == BRIEF and merged.changed == 0


def test_a_paragraph_rewritten_in_word_is_written_as_markdown(tmp_path):
    edit = WordEdit(export(BRIEF, tmp_path).read_bytes()).set_text(
        "The landlord refused", "The landlord kept *all* of the $1,200 deposit_fund. # not a heading")
    merged = merge(BRIEF, read_word(written(edit.bytes(), tmp_path)))
    # Markdown's marks typed in Word are the attorney's characters, not formatting: they are escaped.
    assert "\n\nThe landlord kept \\*all\\* of the $1,200 deposit\\_fund. # not a heading\n\n" in merged.text
    assert merged.changed == 1


def test_a_new_footnote_in_word_gets_a_label_of_its_own(tmp_path):
    text = "The tenant paid the rent for March of that year.[^a]\n\nA second paragraph of the brief, unchanged.\n\n" \
           "[^a]: Ex. 3 at 2.\n"
    edit = WordEdit(export(text, tmp_path).read_bytes())
    # The footnote's text changed in Word: the paragraph that refers to it is changed, the other kept.
    members = parts(edit.bytes())
    members["word/footnotes.xml"] = members["word/footnotes.xml"].replace(b"Ex. 3 at 2.", b"Ex. 4 at 7.")
    merged = merge(text, read_word(written(packed(members), tmp_path)))
    assert merged.text == ("The tenant paid the rent for March of that year.[^1]\n\n"
                           "A second paragraph of the brief, unchanged.\n\n[^1]: Ex. 4 at 7.\n")
    assert (merged.kept, merged.changed) == (1, 1)


@pytest.mark.parametrize(("content", "message"), [
    (b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n", r"is a PDF document, not a Word document \(DOCX\)"),
    (b"", "The file is empty"),
    (b"Dear counsel, plain text.", r"not a Word document \(DOCX\)"),
])
def test_a_file_that_is_not_a_docx_is_named_for_what_it_is(tmp_path, content, message):
    with pytest.raises(WordUnreadable, match=message):
        read_word(written(content, tmp_path))


def test_a_damaged_docx_says_so(tmp_path):
    members = parts(export(BRIEF, tmp_path).read_bytes())
    members["word/document.xml"] = members["word/document.xml"][:-40]  # cut short: the XML does not close
    with pytest.raises(WordUnreadable, match="damaged and could not be read"):
        read_word(written(packed(members), tmp_path))
    truncated = export(BRIEF, tmp_path).read_bytes()
    with pytest.raises(WordUnreadable, match="damaged|not a Word document"):
        read_word(written(truncated[: len(truncated) // 2], tmp_path, "half.docx"))


def test_a_password_protected_docx_asks_for_the_password_to_be_removed(tmp_path):
    from msoffcrypto.format.ooxml import OOXMLFile

    plain = export(BRIEF, tmp_path)
    target = tmp_path / "locked.docx"
    with open(plain, "rb") as source, open(target, "wb") as out:
        OOXMLFile(source).encrypt("Tr1al-Draft", out)
    with pytest.raises(WordUnreadable, match="password-protected"):
        read_word(target)
