"""Word packages built by hand, each reaching outside itself in one way, for the conversion tests."""

import zipfile
from pathlib import Path

R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
CONTENT_TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Default Extension="html" ContentType="text/html"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
<Override PartName="/word/settings.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"/>
<Override PartName="/word/fontTable.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.fontTable+xml"/>
<Override PartName="/word/webSettings.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.webSettings+xml"/>
</Types>"""
PACKAGE_RELS = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="{REL}/officeDocument" Target="word/document.xml"/>
</Relationships>"""
NAMESPACES = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    f'xmlns:r="{R_NS}" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture" '
    'xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"'
)
INTRO = "Letter from opposing counsel about the production schedule."


def picture(attribute: str) -> str:
    """A DrawingML picture whose blip carries ``attribute`` (``r:link="rIdX"`` or ``r:embed="rIdX"``)."""
    return (
        '<w:p><w:r><w:drawing><wp:inline><wp:extent cx="5486400" cy="2743200"/><wp:docPr id="1" name="P"/>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>'
        '<pic:nvPicPr><pic:cNvPr id="1" name="p"/><pic:cNvPicPr/></pic:nvPicPr>'
        f'<pic:blipFill><a:blip {attribute}/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>'
        '<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="5486400" cy="2743200"/></a:xfrm>'
        '<a:prstGeom prst="rect"/></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>'
    )


def complex_field(*instruction_runs: str) -> str:
    runs = "".join(f'<w:r><w:instrText xml:space="preserve">{text}</w:instrText></w:r>' for text in instruction_runs)
    return (f'<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r>{runs}'
            '<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>field</w:t></w:r>'
            '<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>')


def relationship(rid: str, kind: str, target: str, mode: str | None = "External") -> str:
    mode_attribute = f' TargetMode="{mode}"' if mode is not None else ""
    return f'<Relationship Id="{rid}" Type="{kind}" Target="{target}"{mode_attribute}/>'


def write_docx(path: Path, *, body: str = "", rels: tuple[str, ...] = (), parts: dict[str, str] | None = None,
               part_rels: dict[str, tuple[str, ...]] | None = None) -> Path:
    """Write a DOCX with ``body`` after an introductory paragraph, ``rels`` in document.xml.rels, extra ``parts``
    and their own relationships ``part_rels`` (keyed by part name, e.g. ``word/settings.xml``)."""
    header = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    relationships_open = '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    document = (f'{header}<w:document {NAMESPACES}><w:body><w:p><w:r><w:t>{INTRO}</w:t></w:r></w:p>{body}'
                '</w:body></w:document>')
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("[Content_Types].xml", CONTENT_TYPES)
        package.writestr("_rels/.rels", PACKAGE_RELS)
        package.writestr("word/document.xml", document)
        package.writestr("word/_rels/document.xml.rels", f"{header}{relationships_open}{''.join(rels)}</Relationships>")
        for name, content in (parts or {}).items():
            package.writestr(name, content)
        for name, items in (part_rels or {}).items():
            folder, _, leaf = name.rpartition("/")
            package.writestr(f"{folder}/_rels/{leaf}.rels", f"{header}{relationships_open}{''.join(items)}</Relationships>")
    return path


def forms(target_file: Path) -> dict[str, dict]:
    """Every way a Word file can name ``target_file`` (an absolute host path) that the allowlist must cut, as
    keyword arguments of :func:`write_docx`."""
    url = f"file://{target_file}"
    header = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    settings_rel = relationship("rIdSettings", f"{REL}/settings", "settings.xml", mode=None)
    climb = "../" * 12 + str(target_file).lstrip("/")
    return {
        "blip_link_hyperlink_type": {"body": picture('r:link="rIdX"'), "rels": (relationship("rIdX", f"{REL}/hyperlink", url),)},
        "blip_link_image_type": {"body": picture('r:link="rIdX"'), "rels": (relationship("rIdX", f"{REL}/image", url),)},
        "mode_in_odd_case_and_spaces": {"body": picture('r:link="rIdX"'),
                                        "rels": (relationship("rIdX", f" {REL.upper()}/IMAGE ", url, mode=" EXTERNAL "),)},
        "type_with_fragment": {"body": picture('r:link="rIdX"'), "rels": (relationship("rIdX", f"{REL}/image#x", url),)},
        "internal_mode_absolute_url": {"body": picture('r:embed="rIdX"'), "rels": (relationship("rIdX", f"{REL}/image", url, mode=None),)},
        "internal_mode_climbing_path": {"body": picture('r:embed="rIdX"'), "rels": (relationship("rIdX", f"{REL}/image", climb, mode=None),)},
        "internal_mode_encoded_climb": {"body": picture('r:embed="rIdX"'),
                                        "rels": (relationship("rIdX", f"{REL}/image", climb.replace("../", "..%2F"), mode=None),)},
        "includepicture_split_over_runs": {"body": complex_field(" INCLUDEPIC", f'TURE "{url}" \\d ')},
        "includetext_field": {"body": complex_field(f' INCLUDETEXT "{target_file}" ')},
        "simple_field_link": {"body": f'<w:p><w:fldSimple w:instr=\' INCLUDEPICTURE "{url}" \\d \'><w:r><w:t>x</w:t></w:r></w:fldSimple></w:p>'},
        "ole_link": {"body": ('<w:p><w:r><w:object><v:shape id="s" style="width:300pt;height:150pt"/>'
                              '<o:OLEObject Type="Link" ProgID="Package" ShapeID="s" r:id="rIdOle" UpdateMode="Always"/>'
                              '</w:object></w:r></w:p>'),
                     "rels": (relationship("rIdOle", f"{REL}/oleObject", url),)},
        "vml_imagedata_src": {"body": ('<w:p><w:r><w:pict><v:shape style="width:300pt;height:150pt">'
                                       f'<v:imagedata src="{url}" o:href="{url}"/></v:shape></w:pict></w:r></w:p>')},
        "alt_chunk": {"body": '<w:altChunk r:id="rIdChunk"/>',
                      "rels": (relationship("rIdChunk", f"{REL}/aFChunk", "chunk.html", mode=None),),
                      "parts": {"word/chunk.html": f'<html><body><p>Chunk</p><img src="{url}"></body></html>'}},
        "sub_document": {"body": '<w:p><w:subDoc r:id="rIdSub"/></w:p>',
                         "rels": (relationship("rIdSub", f"{REL}/subDocument", url),)},
        "attached_template": {"rels": (settings_rel,),
                              "parts": {"word/settings.xml": f'{header}<w:settings {NAMESPACES}><w:attachedTemplate r:id="rIdT"/></w:settings>'},
                              "part_rels": {"word/settings.xml": (relationship("rIdT", f"{REL}/attachedTemplate", url),)}},
        "frame": {"rels": (relationship("rIdWeb", f"{REL}/webSettings", "webSettings.xml", mode=None),),
                  "parts": {"word/webSettings.xml": (f'{header}<w:webSettings {NAMESPACES}><w:frameset><w:frame>'
                                                     '<w:sourceFileName r:id="rIdF"/></w:frame></w:frameset></w:webSettings>')},
                  "part_rels": {"word/webSettings.xml": (relationship("rIdF", f"{REL}/frame", url),)}},
        "font_table_link": {"rels": (relationship("rIdFonts", f"{REL}/fontTable", "fontTable.xml", mode=None),),
                            "parts": {"word/fontTable.xml": (f'{header}<w:fonts {NAMESPACES}><w:font w:name="Evil">'
                                                             '<w:embedRegular r:id="rIdFont"/></w:font></w:fonts>')},
                            "part_rels": {"word/fontTable.xml": (relationship("rIdFont", f"{REL}/font", url),)}},
    }
