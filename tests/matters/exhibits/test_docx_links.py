"""A Word file cannot pull other files into its exhibit: only what lies inside the package survives, and
LibreOffice converts in a sandbox that cannot see the data directory."""

import shutil
import subprocess
import zipfile

import pymupdf
import pytest

from matters import storage
from matters.exhibits.ingest import convert, sandbox
from matters.exhibits.ingest.docx_safety import sanitize_docx
from matters.exhibits.processing import exhibit_process
from matters.exhibits.search import matter_search
from matters.exhibits.services import exhibit_create
from matters.models import Exhibit
from matters.services import matter_create

from .docx_forms import INTRO, REL, forms, picture, relationship, write_docx

pytestmark = pytest.mark.django_db

UNIQUE_WORD = "QUOKKAVELLUM"


@pytest.fixture
def other_matter_page(make_user, tmp_path):
    """Matter 2, which matter 1's members cannot open, holding a page with a unique word (text and page image)."""
    bob = make_user("bob", "attorney")
    other = matter_create(name="Doe v. Roe", created_by=bob)
    pdf = tmp_path / "other.pdf"
    with pymupdf.open() as doc:
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 200), f"{UNIQUE_WORD} privileged settlement terms", fontsize=30)
        doc.save(pdf)
    with open(pdf, "rb") as stream:
        uploaded = exhibit_create(matter=other, stream=stream, original_name=pdf.name, origin="client",
                                  uploaded_by=bob, enqueue=False)
    exhibit = exhibit_process(exhibit_id=uploaded.pk, previews="inline")
    assert exhibit.status == "ready"
    image = storage.derived_dir(exhibit.pk) / "pages" / "0001.jpg"
    assert image.is_file()
    return exhibit, image


def _assert_nothing_crossed(exhibit: Exhibit) -> None:
    assert exhibit.status == "ready", exhibit.reason
    text = " ".join(exhibit.pages.values_list("text", flat=True))
    assert "opposing counsel" in text
    assert UNIQUE_WORD.lower() not in text.lower()
    assert matter_search(matter=exhibit.matter, query=UNIQUE_WORD) == []
    with pymupdf.open(storage.derived_dir(exhibit.pk) / "display.pdf") as converted:
        assert all(not page.get_images() for page in converted)
        assert UNIQUE_WORD not in " ".join(page.get_text() for page in converted)
    assert (storage.derived_dir(exhibit.pk) / "pages" / "0001.jpg").is_file()


@pytest.mark.parametrize("form", sorted(forms(storage.Path("/x"))))
def test_no_outside_link_brings_another_matters_page_in(form, matter, other_matter_page, ingest, tmp_path):
    other_exhibit, image = other_matter_page
    text_target = storage.blob_path(other_exhibit.sha256)
    spec = forms(text_target if form in {"includetext_field", "sub_document", "alt_chunk"} else image)[form]
    docx = write_docx(tmp_path / f"{form}.docx", **spec)

    exhibit = ingest(matter, docx)

    _assert_nothing_crossed(exhibit)
    assert any("link(s)" in note for note in exhibit.notes)
    assert storage.blob_path(exhibit.sha256).read_bytes() == docx.read_bytes()  # the original is untouched


def test_page_image_of_the_converted_exhibit_does_not_show_the_word(matter, other_matter_page, ingest, tmp_path):
    _, image = other_matter_page
    docx = write_docx(tmp_path / "letter.docx", body=picture('r:link="rIdX"'),
                      rels=(relationship("rIdX", f"{REL}/hyperlink", f"file://{image}"),))
    exhibit = ingest(matter, docx)
    assert exhibit.status == "ready"
    tesseract = subprocess.run(["tesseract", str(storage.derived_dir(exhibit.pk) / "pages" / "0001.jpg"), "-"],
                               capture_output=True, text=True, check=True)
    assert "opposing counsel" in tesseract.stdout.replace("\n", " ")
    assert UNIQUE_WORD not in tesseract.stdout.upper()


def test_links_inside_the_package_are_kept(tmp_path):
    docx = write_docx(tmp_path / "inside.docx", body=picture('r:embed="rIdImg"'),
                      rels=(relationship("rIdImg", f"{REL}/image", "media/image1.png#frag", mode=" internal "),
                            relationship("rIdHere", f"{REL}/image", "/word/media/image1.png", mode=None)),
                      parts={"word/media/image1.png": "not really a picture"})
    cleaned = tmp_path / "clean.docx"
    assert sanitize_docx(docx, cleaned) == 0
    with zipfile.ZipFile(cleaned) as package:
        rels = package.read("word/_rels/document.xml.rels").decode()
    assert "rIdImg" in rels and "rIdHere" in rels


def test_safe_fields_keep_their_instructions(tmp_path):
    body = ('<w:p><w:fldSimple w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple></w:p>'
            '<w:p><w:fldSimple w:instr=" HYPERLINK &quot;https://example.com/&quot; ">'
            '<w:r><w:t>x</w:t></w:r></w:fldSimple></w:p>')
    docx = write_docx(tmp_path / "fields.docx", body=body)
    cleaned = tmp_path / "clean.docx"
    assert sanitize_docx(docx, cleaned) == 1  # HYPERLINK points outside; PAGE does not
    with zipfile.ZipFile(cleaned) as package:
        document = package.read("word/document.xml").decode()
    assert 'w:instr=" PAGE "' in document and "example.com" not in document


def test_the_sandbox_keeps_a_conversion_out_of_the_data_directory(data_dir, tmp_path, monkeypatch):
    """Even with the allowlist switched off, LibreOffice in its sandbox cannot read a file of the data
    directory that the document links to; the same document converted outside the sandbox does show it."""
    page = data_dir / "derived" / "7" / "pages" / "0001.png"
    page.parent.mkdir(parents=True)
    with pymupdf.open() as doc:
        doc.new_page(width=300, height=150).insert_text((20, 80), UNIQUE_WORD, fontsize=24)
        doc[0].get_pixmap().save(page)
    docx = write_docx(tmp_path / "hostile.docx", body=picture('r:link="rIdX"'),
                      rels=(relationship("rIdX", f"{REL}/image", f"file://{page}"),))

    # Control: unsandboxed LibreOffice follows the link, so the document really asks for the file.
    outside = tmp_path / "outside"
    subprocess.run([shutil.which("soffice"), f"-env:UserInstallation=file://{tmp_path}/profile", "--headless",
                    "--convert-to", "pdf", "--outdir", str(outside), str(docx)], capture_output=True, check=True,
                   timeout=300)
    with pymupdf.open(outside / "hostile.pdf") as pulled:
        assert any(p.get_images() for p in pulled)

    monkeypatch.setattr(convert, "sanitize_docx",
                        lambda source, target, changes=None: shutil.copyfile(source, target) and 0)
    target = tmp_path / "sandboxed.pdf"
    assert convert.office_to_pdf(docx, target, suffix=".docx", description="Word document",
                                 hidden=(str(data_dir),)) == 0
    with pymupdf.open(target) as converted:
        assert INTRO in converted[0].get_text()
        assert all(not p.get_images() for p in converted)


def test_the_sandbox_shows_no_data_directory_nor_network(data_dir, tmp_path):
    secret = data_dir / "secrets" / "key"
    secret.parent.mkdir()
    secret.write_text("s3cret")
    (tmp_path / "in.txt").write_text("x")
    out = tmp_path / "out"
    out.mkdir()
    mounts = sandbox.Mounts(tmp_path / "in.txt", out)
    read = subprocess.run(sandbox.sandboxed(["cat", str(secret)], mounts), capture_output=True, text=True)
    assert read.returncode != 0 and "s3cret" not in read.stdout
    listing = subprocess.run(sandbox.sandboxed(["ls", "/sys/class/net"], mounts), capture_output=True, text=True)
    assert listing.stdout.split() in ([], ["lo"])
    wrote = subprocess.run(sandbox.sandboxed(["sh", "-c", f"echo y > {mounts.sandbox_input}"], mounts))
    assert wrote.returncode != 0 and (tmp_path / "in.txt").read_text() == "x"


@pytest.mark.parametrize("broken", ["missing", "cannot_start"])
def test_conversion_is_refused_when_the_sandbox_cannot_start(broken, tmp_path, monkeypatch, data_dir):
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None if broken == "missing" else shutil.which("false"))
    ran, real_run = [], subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: ran.append(a) or real_run(*a, **k))
    docx = write_docx(tmp_path / "plain.docx")
    with pytest.raises(convert.ConversionRefused, match="sandbox") as refused:
        convert.office_to_pdf(docx, tmp_path / "out.pdf", suffix=".docx", description="Word document",
                              hidden=(str(data_dir),))
    assert "bubblewrap" in str(refused.value)
    assert not any("soffice" in " ".join(map(str, call[0])) for call in ran)  # LibreOffice never ran
    assert not (tmp_path / "out.pdf").exists()


def test_a_data_directory_the_sandbox_would_share_is_refused(tmp_path):
    mounts = sandbox.Mounts(tmp_path / "in", tmp_path)
    with pytest.raises(sandbox.SandboxUnavailable, match="data directory"):
        sandbox.sandboxed(["true"], mounts, hidden=("/usr/share/lawdesk",))


def test_a_part_that_looks_like_xml_but_does_not_parse_is_refused(tmp_path):
    docx = write_docx(tmp_path / "broken.docx", parts={"word/header1.xml": "<w:hdr><w:p>INCLUDETEXT unclosed"})
    with pytest.raises(convert.ConversionRefused, match="damaged"):
        convert.office_to_pdf(docx, tmp_path / "out.pdf", suffix=".docx", description="Word document")


def test_pictures_and_fonts_inside_the_package_pass_unchanged(tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    docx = write_docx(tmp_path / "media.docx", parts={"word/media/image1.png": png})
    cleaned = tmp_path / "clean.docx"
    sanitize_docx(docx, cleaned)
    with zipfile.ZipFile(cleaned) as package:
        assert package.read("word/media/image1.png") == png
