"""Word files as they really are: tracked changes accepted; deleted text, comments and hidden text never ground."""

import hashlib
import zipfile

import pytest
from django.urls import reverse

from matters.drafts.verifier.check import verify_text
from matters.exhibits.ingest.docx_revisions import WordChanges, accept_story, hidden_styles

pytestmark = pytest.mark.django_db

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
CONTENT_TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
<Override PartName="/word/comments.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.comments+xml"/>
</Types>"""
PACKAGE_RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>"""
DOCUMENT_RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rIdC" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments" Target="comments.xml"/>
</Relationships>"""
# The purchase price was revised from $250,000 to $175,000 with Track Changes on; a reviewer's comment names
# another figure, a hidden run a third, and a deleted paragraph a date.
DOCUMENT = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document {W}><w:body>
<w:p><w:r><w:t xml:space="preserve">ASSET PURCHASE AGREEMENT. The purchase price is </w:t></w:r>
<w:del w:id="1" w:author="Counsel A" w:date="2021-05-01T10:00:00Z"><w:r><w:delText>$250,000</w:delText></w:r></w:del>
<w:ins w:id="2" w:author="Counsel B" w:date="2021-05-02T10:00:00Z"><w:r><w:t>$175,000</w:t></w:r></w:ins>
<w:r><w:t xml:space="preserve">, payable at closing.</w:t></w:r>
<w:commentRangeStart w:id="0"/><w:r><w:t xml:space="preserve"> The buyer assumes the lease.</w:t></w:r><w:commentRangeEnd w:id="0"/>
<w:r><w:commentReference w:id="0"/></w:r></w:p>
<w:p><w:r><w:rPr><w:vanish/></w:rPr><w:t>Walk-away figure $90,000.</w:t></w:r><w:r><w:t xml:space="preserve">Signed by both parties.</w:t></w:r></w:p>
<w:p><w:pPr><w:rPr><w:del w:id="3" w:author="Counsel B" w:date="2021-05-02T10:00:00Z"/></w:rPr></w:pPr>
<w:del w:id="4" w:author="Counsel B" w:date="2021-05-02T10:00:00Z"><w:r><w:delText>Closing on June 30, 2021.</w:delText></w:r></w:del></w:p>
</w:body></w:document>"""
COMMENTS = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:comments {W}><w:comment w:id="0" w:author="Client" w:date="2021-05-03T10:00:00Z">
<w:p><w:r><w:t>We would pay up to $300,000.</w:t></w:r></w:p></w:comment></w:comments>"""


def word_file(path):
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("[Content_Types].xml", CONTENT_TYPES)
        package.writestr("_rels/.rels", PACKAGE_RELS)
        package.writestr("word/_rels/document.xml.rels", DOCUMENT_RELS)
        package.writestr("word/document.xml", DOCUMENT)
        package.writestr("word/comments.xml", COMMENTS)
    return path


def test_accepting_changes_keeps_inserted_text_and_sets_the_rest_aside():
    changes = WordChanges()
    accepted = accept_story(DOCUMENT.encode(), changes).decode()
    assert "$175,000" in accepted and "$250,000" not in accepted and "$90,000" not in accepted
    assert "commentReference" not in accepted and "June 30" not in accepted
    assert (changes.insertions, changes.deletions, changes.hidden) == (1, 2, 1)
    assert changes.deleted_text == ["$250,000", "Closing on June 30, 2021."]
    assert changes.inserted_text == ["$175,000"] and changes.hidden_text == ["Walk-away figure $90,000."]


STYLES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles {W}>
<w:style w:type="character" w:styleId="Secret"><w:name w:val="Secret"/><w:rPr><w:vanish/></w:rPr></w:style>
<w:style w:type="character" w:styleId="SecretBold"><w:basedOn w:val="Secret"/><w:rPr><w:b/></w:rPr></w:style>
<w:style w:type="character" w:styleId="Shown"><w:basedOn w:val="Secret"/><w:rPr><w:vanish w:val="0"/></w:rPr></w:style>
<w:style w:type="paragraph" w:styleId="HiddenNote"><w:rPr><w:vanish w:val="true"/></w:rPr></w:style>
</w:styles>"""
STYLED = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document {W}><w:body>
<w:p><w:r><w:t xml:space="preserve">The price is $175,000. </w:t></w:r>
<w:r><w:rPr><w:rStyle w:val="Secret"/></w:rPr><w:t>Floor $90,000.</w:t></w:r>
<w:r><w:rPr><w:rStyle w:val="SecretBold"/></w:rPr><w:t>Ceiling $310,000.</w:t></w:r>
<w:r><w:rPr><w:rStyle w:val="Shown"/></w:rPr><w:t>Deposit $5,000.</w:t></w:r>
<w:r><w:rPr><w:vanish w:val="false"/></w:rPr><w:t>Escrow $2,500.</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="HiddenNote"/></w:pPr><w:r><w:t>Walk away at $80,000.</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="HiddenNote"/></w:pPr><w:r><w:rPr><w:vanish w:val="0"/></w:rPr><w:t>Signed.</w:t></w:r></w:p>
</w:body></w:document>"""


def test_text_hidden_through_a_style_is_set_aside_and_text_shown_is_kept():
    changes = WordChanges()
    hidden = hidden_styles(STYLES.encode())
    assert hidden == {"Secret", "SecretBold", "HiddenNote"}  # "Shown" turns its base style's hiding off
    accepted = accept_story(STYLED.encode(), changes, hidden).decode()
    for shown in ("$175,000", "$5,000", "$2,500", "Signed."):
        assert shown in accepted
    for secret in ("$90,000", "$310,000", "$80,000"):
        assert secret not in accepted
    assert changes.hidden == 3
    assert changes.hidden_text == ["Floor $90,000.", "Ceiling $310,000.", "Walk away at $80,000."]


def test_a_word_exhibit_reads_with_changes_accepted_and_says_what_it_carries(matter, tmp_path, ingest, client,
                                                                              attorney):
    path = word_file(tmp_path / "apa.docx")
    exhibit = ingest(matter, path)
    assert exhibit.status == "ready", exhibit.reason
    text = " ".join(exhibit.pages.values_list("text", flat=True))
    assert "$175,000" in text and "Signed by both parties" in text
    for hidden in ("$250,000", "$300,000", "$90,000", "June 30"):
        assert hidden not in text
    assert exhibit.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()  # the upload is kept as it was
    changes = exhibit.word_changes
    assert (changes["insertions"], changes["deletions"], changes["comments"], changes["hidden"]) == (1, 2, 1, 1)
    assert changes["comment_text"] == [{"author": "Client", "text": "We would pay up to $300,000."}]

    client.force_login(attorney)
    page = client.get(reverse("matters:exhibit", args=[matter.pk, exhibit.pk])).content.decode()
    assert "1 tracked insertion, 2 tracked deletions, 1 comment and 1 hidden run" in page
    assert "<del>$250,000</del>" in page and "We would pay up to $300,000." in page


def test_a_claim_found_only_in_deleted_comment_or_hidden_text_says_so(matter, tmp_path, ingest):
    exhibit = ingest(matter, word_file(tmp_path / "apa.docx"))
    label = exhibit.label
    findings = verify_text(matter=matter, text=(
        f"The purchase price was $175,000. (Ex. {label} at 1.) The price had been $250,000. (Ex. {label} at 1.) "
        f"The buyer would pay $300,000. (Ex. {label} at 1.) The floor was $90,000. (Ex. {label} at 1.) "
        f"Closing was set for June 30, 2021. (Ex. {label} at 1.)"))
    by_text = {f.text: f for f in findings if f.kind in ("amount", "date")}
    assert by_text["$175,000"].status == "grounded"
    for value, where in (("$250,000", "deleted text (a tracked change)"), ("$300,000", "a comment"),
                         ("$90,000", "hidden text"), ("June 30, 2021", "deleted text (a tracked change)")):
        finding = by_text[value]
        assert finding.status == "ungrounded" and finding.blocking
        assert f"only in {where} of Exhibit {label}" in finding.message, finding.message
