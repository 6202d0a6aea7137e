"""The exported Word document carries no character that shows nothing yet changes what a reader sees: what the
review page showed as U+XXXX marks is not in the file, in the text, the footnotes, the title or the footer."""

import io
import zipfile

import docx

from matters.drafts.export_docx import docx_bytes

HIDDEN = ["\u202e", "\u202d", "\u202a", "\u202b", "\u202c", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
          "\u200f", "\u061c", "\u200b", "\u200c", "\u200d", "\u2060", "\u2061", "\ufeff", "\u00ad", "\u180e",
          "\U000e0041", "\x07"]
DRAFT = ("# Motion\u200b to compel\n\n"
         "The tenant paid \u202e55.218,4$\u202c on March\u2060 3, 2019[^1] and owes\u200b\u00ad nothing.\n\n"
         "- the \u2066lease\u2069 of 2018\n\n"
         "[^1]: Ex.\u200f 3 at\u061c 2, \U000e0041Bates SMITH000012.\n")


def test_bidirectional_zero_width_and_format_characters_are_not_in_the_file():
    content = docx_bytes(text=DRAFT, title="Motion\u202e to compel", footer="sha256 ab\u200bcd")
    with zipfile.ZipFile(io.BytesIO(content)) as package:
        xml = {name: package.read(name).decode("utf-8") for name in package.namelist()
               if name.endswith(".xml") or name.endswith(".rels")}
    found = {(name, f"U+{ord(char):04X}") for name, text in xml.items() for char in HIDDEN if char in text}
    assert found == set()
    document = docx.Document(io.BytesIO(content))
    text = "\n".join(p.text for p in document.paragraphs)
    assert "The tenant paid 55.218,4$ on March 3, 2019" in text and "owes nothing." in text
    assert "Motion to compel" in text and "the lease of 2018" in text
    assert "Ex. 3 at 2, Bates SMITH000012." in xml["word/footnotes.xml"].replace("</w:t><w:t", "")
    assert document.core_properties.title == "Motion to compel"
    assert document.sections[0].footer.paragraphs[0].text == "sha256 abcd"


def test_ordinary_text_other_scripts_and_tabs_pass_unchanged():
    draft = "Caf\u00e9 \u00fcber \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627 \u6cd5\u9662\tend."
    document = docx.Document(io.BytesIO(docx_bytes(text=draft, title="T", footer="F")))
    assert document.paragraphs[0].text == draft


def test_the_pdf_export_leaves_them_out_too():
    """The PDF export is the other file an attorney files or sends: the same characters are not in its text or its
    properties."""
    import pymupdf

    from matters.drafts.export_pdf import draft_pdf_bytes

    content = draft_pdf_bytes(text=DRAFT, title="Motion\u202e to compel", footer="sha256 ab\u200bcd")
    with pymupdf.open(stream=content, filetype="pdf") as document:
        text = "".join(page.get_text() for page in document)
        title = document.metadata["title"]
    assert {f"U+{ord(char):04X}" for char in HIDDEN if char in text or char in title} == set()
    assert "The tenant paid 55.218,4$ on March 3, 2019" in " ".join(text.split())
    assert title == "Motion to compel" and "sha256 abcd" in text
