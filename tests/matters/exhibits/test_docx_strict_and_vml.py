"""The DOCX cleaning reads fields in ISO/IEC 29500 Strict's namespace as in the transitional one, and cuts every
VML source that is not a reference inside the document (absolute, relative, drive-letter and UNC paths, not only
URLs)."""

import zipfile

import pytest

from matters.exhibits.ingest.docx_safety import sanitize_docx

from .docx_forms import CONTENT_TYPES, PACKAGE_RELS

STRICT_W = "http://purl.oclc.org/ooxml/wordprocessingml/main"
HEADER = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
EMPTY_RELS = f'{HEADER}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>'


def package(tmp_path, body: str, w_namespace: str = STRICT_W):
    document = (f'{HEADER}<w:document xmlns:w="{w_namespace}" xmlns:v="urn:schemas-microsoft-com:vml" '
                'xmlns:o="urn:schemas-microsoft-com:office:office"><w:body>'
                f'<w:p><w:r><w:t>Letter from opposing counsel.</w:t></w:r></w:p>{body}</w:body></w:document>')
    path = tmp_path / "in.docx"
    with zipfile.ZipFile(path, "w") as docx:
        docx.writestr("[Content_Types].xml", CONTENT_TYPES)
        docx.writestr("_rels/.rels", PACKAGE_RELS)
        docx.writestr("word/document.xml", document)
        docx.writestr("word/_rels/document.xml.rels", EMPTY_RELS)
    return path


def cleaned(tmp_path, path) -> tuple[int, str]:
    out = tmp_path / "out.docx"
    cut = sanitize_docx(path, out)
    with zipfile.ZipFile(out) as docx:
        return cut, docx.read("word/document.xml").decode()


def complex_field(*runs: str) -> str:
    instructions = "".join(f'<w:r><w:instrText xml:space="preserve">{run}</w:instrText></w:r>' for run in runs)
    return (f'<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r>{instructions}'
            '<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>shown</w:t></w:r>'
            '<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>')


@pytest.mark.parametrize("body", [
    '<w:p><w:fldSimple w:instr=\' INCLUDEPICTURE "file:///srv/lawdesk/derived/7/pages/0001.jpg" \\d \'>'
    '<w:r><w:t>x</w:t></w:r></w:fldSimple></w:p>',
    complex_field(' INCLUDETEXT "/srv/lawdesk/originals/ab/secret" '),
    complex_field(" INCLUDEPIC", 'TURE "file:///srv/lawdesk/derived/7/pages/0001.jpg" '),
], ids=["simple_includepicture", "complex_includetext", "split_includepicture"])
def test_strict_namespace_fields_lose_their_instruction(tmp_path, body):
    cut, document = cleaned(tmp_path, package(tmp_path, body))
    assert cut == 1 and "/srv/lawdesk" not in document
    assert "Letter from opposing counsel." in document


def test_strict_namespace_safe_fields_keep_theirs(tmp_path):
    body = '<w:p><w:fldSimple w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple></w:p>'
    cut, document = cleaned(tmp_path, package(tmp_path, body))
    assert cut == 0 and 'w:instr=" PAGE "' in document


@pytest.mark.parametrize("source", ["/srv/lawdesk/derived/7/pages/0001.jpg", "../../../../srv/lawdesk/x.png",
                                    "C:\\Users\\clerk\\secret.png", "\\\\fileserver\\share\\a.png", "media/x.png",
                                    "file:///etc/passwd", " /etc/passwd"])
def test_vml_sources_outside_the_document_are_cut(tmp_path, source):
    body = ('<w:p><w:r><w:pict><v:shape id="s1" style="width:300pt;height:150pt">'
            f'<v:imagedata src="{source}" o:href="{source}" o:althref="{source}"/></v:shape></w:pict></w:r></w:p>')
    for namespace in (STRICT_W, "http://schemas.openxmlformats.org/wordprocessingml/2006/main"):
        cut, document = cleaned(tmp_path, package(tmp_path, body, namespace))
        assert cut == 3 and source.strip() not in document.replace("&#10;", "")


def test_a_vml_reference_inside_the_document_is_kept(tmp_path):
    body = ('<w:p><w:r><w:pict><v:shape id="s2" o:href="#_x0000_s1025" style="width:30pt;height:15pt"/>'
            '</w:pict></w:r></w:p>')
    cut, document = cleaned(tmp_path, package(tmp_path, body))
    assert cut == 0 and "#_x0000_s1025" in document
