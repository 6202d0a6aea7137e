"""An HTML body is laid out as HTML (tables, lists, bold, italic) from sanitised markup, its text layer reads as the
message reads, and nothing it names is ever fetched."""

import threading
import urllib.request
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matters import storage
from matters.email.html_body import MAX_NESTING, MAX_TABLE_ROWS, nesting_depth, sanitised_html, table_rows
from matters.models import Exhibit

from .email_messages import as_bytes, ingest_bytes, message, page_text

pytestmark = pytest.mark.django_db


def html_message(markup: str, plain: str | None = None, **headers):
    """A message whose body is ``markup`` (with ``plain`` as its plain-text alternative when given)."""
    mail = message(**headers)
    mail.clear_content()
    if plain is None:
        mail.set_content(markup, subtype="html")
    else:
        mail.set_content(plain)
        mail.add_alternative(markup, subtype="html")
    return mail


def display_spans(exhibit) -> list[dict]:
    """The text spans of the exhibit's laid-out pages, with their font and box."""
    document = pymupdf.open(storage.derived_dir(exhibit.pk) / "display.pdf")
    return [span for page in document for block in page.get_text("dict")["blocks"]
            for line in block.get("lines", ()) for span in line["spans"]]


def test_an_html_only_message_is_laid_out_with_its_table_and_bold_text_on_the_page(matter, attorney):
    markup = ("<html><head><title>Invoice</title><script>document.write('tracking pixel loaded')</script></head>"
              "<body><p>The final <b>amount due</b> is below; <i>office</i> copy.</p>"
              "<table><tr><th>Item</th><th>Amount</th></tr><tr><td>Rent</td><td>$12,500</td></tr>"
              "<tr><td>Late fee</td><td>$250</td></tr></table>"
              "<ul><li>Pay by wire</li><li>Quote invoice 4471</li></ul></body></html>")
    parent = ingest_bytes(matter, attorney, as_bytes(html_message(markup, subject="Invoice 4471")))
    assert parent.status == Exhibit.Status.READY, parent.reason
    text = page_text(parent)
    assert "Subject: Invoice 4471" in text
    # The text layer reads as the message does: no ligature characters in "final" or "office".
    assert "The final amount due is below; office copy." in " ".join(text.split())
    assert "\ufb01" not in text and "\ufb03" not in text
    for cell in ("Item", "Amount", "Rent", "$12,500", "Late fee", "$250", "Pay by wire", "Quote invoice 4471"):
        assert cell in text
    assert "tracking pixel loaded" not in text and "document.write" not in text

    spans = {span["text"].strip(): span for span in display_spans(parent) if span["text"].strip()}
    assert "Bold" in spans["amount due"]["font"] and "Italic" in spans["office"]["font"]
    assert "Bold" not in spans["Rent"]["font"]
    # Laid out as a table: a row's cells side by side on one line, the rows one under another.
    rent, amount, fee = spans["Rent"]["bbox"], spans["$12,500"]["bbox"], spans["Late fee"]["bbox"]
    assert abs(rent[1] - amount[1]) < 1 and amount[0] > rent[2]
    assert fee[1] > rent[3] - 1 and abs(fee[0] - rent[0]) < 1


def test_the_html_alternative_is_shown_when_a_message_has_both(matter, attorney):
    mail = html_message("<p>Signed copy: <b>approved</b> by the board.</p>",
                        plain="Signed copy: *approved* by the board.\n")
    parent = ingest_bytes(matter, attorney, as_bytes(mail))
    text = page_text(parent)
    assert "Signed copy: approved by the board." in text and "*approved*" not in text
    assert any(span["text"].strip() == "approved" and "Bold" in span["font"] for span in display_spans(parent))


class _Recorder(BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self):  # noqa: N802 (the standard library's name)
        type(self).requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/gif")
        self.end_headers()
        self.wfile.write(b"GIF89a")

    def log_message(self, *args):
        pass


@pytest.fixture
def loopback_server():
    """An HTTP server on the loopback interface that records every request made to it."""
    _Recorder.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Recorder.requests
    server.shutdown()
    server.server_close()


def test_remote_content_is_never_fetched_and_an_image_shows_its_alt_text(matter, attorney, loopback_server):
    base, requests = loopback_server
    markup = (f'<html><head><link rel="stylesheet" href="{base}/sheet.css">'
              f'<style>@import url("{base}/import.css"); body {{ background: url({base}/bg.png) }}</style></head>'
              f'<body background="{base}/body.png"><p style="background-image: url({base}/inline.png)">'
              f'Quarterly figures attached.</p><img src="{base}/logo.gif" alt="Stone LLC logo">'
              f'<img src="cid:sig@x.example" alt="Signature"><img srcset="{base}/a.png 2x" src="{base}/b.png">'
              f'<table background="{base}/table.png"><tr><td>Q1</td><td>$4,000</td></tr></table></body></html>')
    parent = ingest_bytes(matter, attorney, as_bytes(html_message(markup)))
    assert parent.status == Exhibit.Status.READY, parent.reason
    text = page_text(parent)
    assert "Quarterly figures attached." in text and "[image: Stone LLC logo]" in text
    assert "[image: Signature]" in text and "[image]" in text and "$4,000" in text
    assert "127.0.0.1" not in text
    assert requests == []
    # The server does record a request when one is made, so the empty list above means none was.
    urllib.request.urlopen(f"{base}/probe.gif", timeout=5).read()
    assert requests == ["/probe.gif"]


def test_sanitised_markup_keeps_structure_and_drops_what_could_load_or_run():
    cleaned = sanitised_html(
        '<div onclick="steal()"><p style="font-weight: bold; color: white">Hidden <u>terms</u></p>'
        '<a href="https://phish.example/login">Sign in</a><iframe src="https://x.example"></iframe>'
        '<svg><image href="https://x.example/i.png"/></svg><td style="text-align: right">orphan</td>'
        '<img align="left" style="font-weight: bold" alt="Seal > of the court" src="https://x.example/s.png"></div>')
    assert "[image: Seal &gt; of the court]" in cleaned and "<img" not in cleaned
    assert "<u>terms</u>" in cleaned and "Sign in" in cleaned and "font-weight:bold" in cleaned
    for gone in ("onclick", "color", "href", "iframe", "svg", "https:", "steal"):
        assert gone not in cleaned


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list("<>/=\"' abcdimgsrcurl()@:;&#x\n") + [
    "<img ", "src=", "http://h/", "<style>", "</style>", "<script>", "url(", "<a href=", "<link ", "@import",
    "background=", "style=", "\\", "<p ", "<td ", "alt=", "align=", "<img alt=x "]), max_size=60).map("".join))
def test_no_sanitised_fragment_keeps_a_way_to_load_or_run_anything(markup):
    class Elements(HTMLParser):
        found: list[tuple[str, dict]] = []

        def handle_starttag(self, tag, attrs):
            self.found.append((tag, dict(attrs)))

    reader = Elements()
    reader.found = []
    reader.feed(sanitised_html(markup))
    for tag, attributes in reader.found:
        assert tag not in ("script", "style", "link", "iframe", "object", "embed", "img", "svg")
        assert not set(attributes) & {"src", "href", "srcset", "background", "action", "data"}
        assert not any(name.startswith("on") for name in attributes)
        style = (attributes.get("style") or "").lower()
        assert "url(" not in style and "@import" not in style and "expression(" not in style


def test_a_body_nested_past_the_limit_is_shown_as_text_with_a_note(matter, attorney):
    depth = MAX_NESTING + 1
    markup = "<div>" * depth + "Payment is due on April 1." + "</div>" * depth
    parent = ingest_bytes(matter, attorney, as_bytes(html_message(markup)))
    assert parent.status == Exhibit.Status.READY
    assert "Payment is due on April 1." in page_text(parent)
    assert any(f"nests its elements {depth} deep" in note for note in parent.notes)


def test_a_body_with_more_table_rows_than_the_limit_is_shown_as_text_with_a_note(matter, attorney):
    # MuPDF lays a table out in time that grows with the square of its rows: a 10 MB table would hold the worker.
    rows = MAX_TABLE_ROWS + 1
    markup = "<table>" + "".join(f"<tr><td>Invoice {n}</td><td>${n},00</td></tr>" for n in range(rows)) + "</table>"
    parent = ingest_bytes(matter, attorney, as_bytes(html_message(markup, message_id="<rows@x.example>")))
    assert parent.status == Exhibit.Status.READY, parent.reason
    assert "Invoice 2000" in page_text(parent)
    assert any(f"holds {rows:,} table rows" in note for note in parent.notes)
    assert table_rows("<TR><tr/><tr class=x><track><trx>") == 3


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.just(""), lambda inner: st.tuples(
    st.sampled_from(["div", "span", "b", "table", "blockquote"]), st.lists(inner, max_size=3),
    st.sampled_from(["", "<p>text", "<br>", "<img alt=x>", "<li>item"])), max_leaves=20))
def test_nesting_depth_counts_what_nests_and_not_void_or_self_closing_elements(tree):
    def markup(node) -> str:
        if node == "":
            return "x"
        tag, children, filler = node
        return f"<{tag} class='a'>{filler}{''.join(markup(child) for child in children)}</{tag}>"

    def depth(node) -> int:
        if node == "":
            return 0
        return 1 + max((depth(child) for child in node[1]), default=0)

    assert nesting_depth(markup(tree)) == depth(tree)
