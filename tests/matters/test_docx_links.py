"""A Word file cannot pull other files into its exhibit: external links are cut before LibreOffice converts it."""

import zipfile

import pymupdf
import pytest

from matters import storage

pytestmark = pytest.mark.django_db

CONTENT_TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>"""
PACKAGE_RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>"""
DOCUMENT_RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rIdImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="file://{image}" TargetMode="External"/>
<Relationship Id="rIdWeb" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://www.uscourts.gov/" TargetMode="External"/>
</Relationships>"""
DOCUMENT = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"
 xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture">
<w:body>
<w:p><w:r><w:t>Letter from opposing counsel about the production; follow the link to the court.</w:t></w:r></w:p>
<w:p><w:r><w:drawing><wp:inline><wp:extent cx="5486400" cy="2743200"/><wp:docPr id="1" name="P"/>
<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="1" name="p"/><pic:cNvPicPr/></pic:nvPicPr>
<pic:blipFill><a:blip r:link="rIdImg"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="5486400" cy="2743200"/></a:xfrm><a:prstGeom prst="rect"/></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>
<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> INCLUDETEXT "{secret}" </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>placeholder</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>
</w:body></w:document>"""


def test_linked_image_and_included_text_are_not_pulled_in(matter, tmp_path, ingest):
    image = tmp_path / "other-matter-page.png"
    with pymupdf.open() as doc:  # stands in for another matter's stored page image
        page = doc.new_page(width=400, height=200)
        page.insert_text((20, 100), "PRIVILEGED OTHER MATTER", fontsize=28)
        page.get_pixmap().save(image)
    secret = tmp_path / "secret.txt"
    secret.write_text("PRIVILEGED WORK PRODUCT OF ANOTHER CLIENT")
    docx = tmp_path / "letter.docx"
    with zipfile.ZipFile(docx, "w") as package:
        package.writestr("[Content_Types].xml", CONTENT_TYPES)
        package.writestr("_rels/.rels", PACKAGE_RELS)
        package.writestr("word/_rels/document.xml.rels", DOCUMENT_RELS.format(image=image))
        package.writestr("word/document.xml", DOCUMENT.format(secret=secret))

    exhibit = ingest(matter, docx)
    assert exhibit.status == "ready"
    text = " ".join(exhibit.pages.values_list("text", flat=True))
    assert "Letter from opposing counsel" in text and "follow the link" in text
    assert "PRIVILEGED" not in text
    with pymupdf.open(storage.derived_dir(exhibit.pk) / "display.pdf") as converted:
        assert all(not page.get_images() for page in converted)
    assert any("2 link(s)" in note for note in exhibit.notes)  # the image and the field; not the hyperlink
    assert storage.blob_path(exhibit.sha256).read_bytes() == docx.read_bytes()  # the original is untouched
