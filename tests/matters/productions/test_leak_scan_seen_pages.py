"""A page of the combined PDF is taken as read (its text already looked in through the native it repeats) only when
what a viewer extracts its text from is the same: its content streams, and the fonts and maps they draw with. The
same glyph codes through another ToUnicode map are other text, and the scan reads it."""

import pymupdf

from matters.productions.bates.leaks import Scanner, Secrets

NAME = "Margaret Holloway"
SHOWN = "Closing paragraph"  # as many characters as NAME: the same codes stand for either through the map
CONTENT = b"BT /F1 12 Tf 72 700 Td <" + bytes(range(1, len(NAME) + 1)).hex().encode() + b"> Tj ET\n"


def page_showing(text: str, annotation: bool = False) -> bytes:
    """A one-page PDF whose content is CONTENT (codes 1 to 17, the same bytes whatever ``text`` is) in a font whose
    ToUnicode map reads those codes as ``text``."""
    assert len(text) == len(NAME)
    doc = pymupdf.open()
    page = doc.new_page()
    cmap = doc.get_new_xref()
    doc.update_object(cmap, "<<>>")
    pairs = "".join(f"<{code:02X}> <{ord(char):04X}>\n" for code, char in enumerate(text, start=1))
    doc.update_stream(cmap, (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Custom def /CMapType 2 def\n"
        "1 begincodespacerange <00> <FF> endcodespacerange\n"
        f"{len(text)} beginbfchar\n{pairs}endbfchar\nendcmap CMapName currentdict /CMap defineresource pop end end"
    ).encode(), compress=False)
    font = doc.get_new_xref()
    doc.update_object(font, f"<</Type/Font/Subtype/Type1/BaseFont/Helvetica/ToUnicode {cmap} 0 R>>")
    doc.xref_set_key(page.xref, "Resources", f"<</Font<</F1 {font} 0 R>>>>")
    contents = doc.get_new_xref()
    doc.update_object(contents, "<<>>")
    doc.update_stream(contents, CONTENT, compress=False)
    doc.xref_set_key(page.xref, "Contents", f"{contents} 0 R")
    if annotation:
        page.add_text_annot((300, 300), "A note")
    return doc.tobytes()


def scanned(*files: tuple[str, bytes]) -> Scanner:
    secrets = Secrets()
    secrets.add(NAME, "redacted")
    scanner = Scanner(secrets)
    for name, data in files:
        scanner.scan_pdf(data, name)
    return scanner


def test_the_map_decides_what_the_page_says():
    with pymupdf.open("pdf", page_showing(SHOWN)) as shown, pymupdf.open("pdf", page_showing(NAME)) as named:
        assert shown[0].get_text().strip() == SHOWN and named[0].get_text().strip() == NAME
        assert shown.xref_stream(shown[0].get_contents()[0]) == named.xref_stream(named[0].get_contents()[0])


def test_a_page_with_the_same_content_through_another_font_map_is_read():
    scanner = scanned(("NATIVES/SMITH000001.pdf", page_showing(SHOWN)), ("combined.pdf", page_showing(NAME)))
    assert scanner.pages_extracted == 2
    assert [(f.where, f.text) for f in scanner.findings] == [("combined.pdf, page 1", NAME.lower())]


def test_a_page_the_same_in_content_and_fonts_is_read_once():
    scanner = scanned(("NATIVES/SMITH000001.pdf", page_showing(NAME)), ("combined.pdf", page_showing(NAME)))
    assert scanner.pages_extracted == 1
    assert [(f.where, f.text) for f in scanner.findings] == [("NATIVES/SMITH000001.pdf, page 1", NAME.lower())]


def test_a_page_with_annotations_is_read_again():
    # An annotation's appearance is part of what a viewer extracts; the page is not taken as read.
    scanner = scanned(("NATIVES/SMITH000001.pdf", page_showing(NAME, annotation=True)),
                      ("combined.pdf", page_showing(NAME, annotation=True)))
    assert scanner.pages_extracted == 2
