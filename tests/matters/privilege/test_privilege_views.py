"""The pages of privilege and redaction: boxes drawn or found by search, improper redactions shown to members and
answered, withholding in the production form, and the privilege log's edit page and downloads."""

import csv
import io
import re

import pymupdf
import pytest
from django.urls import reverse

from matters.models import PrivilegeLogEntry, Production, Redaction
from matters.productions.stamping import production_run

pytestmark = pytest.mark.django_db


def test_improper_redaction_is_shown_to_members_only_and_answered_on_the_page(client, attorney, make_user, matter,
                                                                            corpus, ingest):
    exhibit = ingest(matter, corpus("odd/bad-redaction.pdf"))
    page_url = reverse("matters:page", args=[matter.pk, exhibit.pk, 1])
    outsider = make_user("mallory", "attorney")
    client.force_login(outsider)
    assert client.get(page_url).status_code == 404
    assert client.post(reverse("matters:improper_confirm", args=[matter.pk, exhibit.pk, 1]),
                       {"reason": "x"}).status_code == 404
    client.force_login(attorney)
    page = client.get(page_url).content.decode()
    assert "Improper redaction: text under a box is readable." in page
    assert "did not disclose all relevant medical history." in page
    assert page.count('class="improper-box"') == 3
    detail = client.get(reverse("matters:exhibit", args=[matter.pk, exhibit.pk])).content.decode()
    assert "did not disclose all relevant medical history." in detail
    response = client.post(reverse("matters:improper_redact", args=[matter.pk, exhibit.pk, 1]), {"reason": "PHI"})
    assert response.status_code == 302
    assert Redaction.objects.filter(page__exhibit=exhibit, reason="PHI").count() == 3
    page = client.get(page_url).content.decode()
    assert "covered by a real redaction" in page and "Produce as it is" not in page


def test_assistant_cannot_confirm_an_improper_redaction(client, make_user, matter, corpus, ingest):
    exhibit = ingest(matter, corpus("odd/bad-redaction.pdf"))
    assistant = make_user("bob", "assistant")
    matter.members.add(assistant)
    client.force_login(assistant)
    page_url = reverse("matters:page", args=[matter.pk, exhibit.pk, 1])
    assert "Produce as it is" not in client.get(page_url).content.decode()
    response = client.post(reverse("matters:improper_confirm", args=[matter.pk, exhibit.pk, 1]), {"reason": "fine"})
    assert response.status_code == 403


def test_boxes_drawn_and_found_by_search_through_the_pages(client, attorney, matter, corpus, ingest):
    exhibit = ingest(matter, corpus("court/ca7_3.pdf"))
    client.force_login(attorney)
    add = reverse("matters:redaction_add", args=[matter.pk, exhibit.pk, 1])
    assert client.post(add, {"x0": "72", "y0": "60", "x1": "300", "y1": "80", "reason": "WP"}).status_code == 302
    bad = client.post(add, {"x0": "72", "y0": "60", "x1": "nope", "y1": "80", "reason": "WP"}, follow=True)
    assert "four numbers" in bad.content.decode()
    found = client.post(reverse("matters:redact_search", args=[matter.pk, exhibit.pk]),
                        {"query": "tofaute", "reason": "PII"}, follow=True)
    assert re.search(r"\b\d+ redaction box(es)? added on page 1\.", found.content.decode())
    invalid = client.post(reverse("matters:redact_search", args=[matter.pk, exhibit.pk]),
                          {"query": "(unclosed", "regex": "on", "reason": "PII"}, follow=True)
    assert "not a valid regular expression" in invalid.content.decode()
    page = client.get(reverse("matters:page", args=[matter.pk, exhibit.pk, 1])).content.decode()
    assert page.count('class="redaction-box"') == Redaction.objects.count() >= 2
    assert 'id="redaction-form"' in page and "js/redact.js" in page
    drawn = Redaction.objects.get(found_by="")
    client.post(reverse("matters:redaction_delete", args=[matter.pk, exhibit.pk, 1, drawn.pk]))
    assert not Redaction.objects.filter(pk=drawn.pk).exists()
    assert matter.audit_entries.filter(action="redaction.delete").count() == 1


def test_production_form_withholds_and_the_log_is_edited_and_downloaded(client, attorney, matter, corpus, ingest):
    kept = ingest(matter, corpus("court/ca7_3.pdf"))
    withheld = ingest(matter, corpus("court/cafc_3.pdf"))
    client.force_login(attorney)
    url = reverse("matters:productions", args=[matter.pk])
    assert f'name="withhold-{withheld.pk}"' in client.get(url).content.decode()
    form = {"prefix": "SMITH", "digits": "6", "position": "bottom-right", "cover_sheets": "none",
            f"include-{kept.pk}": "on", f"order-{kept.pk}": "1", f"include-{withheld.pk}": "on",
            f"order-{withheld.pk}": "2", f"withhold-{withheld.pk}": "work_product"}
    refused = client.post(url, form, follow=True)
    assert "Describe each withheld document" in refused.content.decode() and not Production.objects.exists()
    form[f"withhold-description-{withheld.pk}"] = "Draft brief prepared by counsel"
    assert client.post(url, form).status_code == 302
    production = production_run(production_id=Production.objects.get().pk)
    assert production.page_count == kept.page_count + 1
    log_url = reverse("matters:privilege_log", args=[matter.pk, production.pk])
    assert "Privilege log" in client.get(url).content.decode()
    entry = PrivilegeLogEntry.objects.get()
    page = client.get(log_url).content.decode()
    assert "Draft brief prepared by counsel" in page and production.bates(kept.page_count + 1) in page
    client.post(log_url, {"entry": entry.pk, "date": "2017-07-01", "author": "A. Counsel", "recipients": "Client",
                          "document_type": "Brief (draft)", "description": "Draft brief prepared by counsel"})
    csv_response = client.get(reverse("matters:privilege_log_download", args=[matter.pk, production.pk, "csv"]))
    row = next(csv.DictReader(io.StringIO(csv_response.content.decode("utf-8-sig"))))
    assert (row["author"], row["document_type"], row["privilege_basis"]) == (
        "A. Counsel", "Brief (draft)", "Attorney work product")
    pdf_response = client.get(reverse("matters:privilege_log_download", args=[matter.pk, production.pk, "pdf"]))
    assert pdf_response["Content-Type"] == "application/pdf"
    assert "A. Counsel" in pymupdf.open("pdf", pdf_response.content)[0].get_text()
    unknown = reverse("matters:privilege_log_download", args=[matter.pk, production.pk, "exe"])
    assert client.get(unknown).status_code == 404


def test_a_log_edit_holding_a_withheld_documents_words_is_refused_on_the_page(client, attorney, matter, tmp_path,
                                                                               ingest):
    sentence = "The board privately agreed to settle the claim for four million dollars before trial."
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 100), sentence, fontsize=10)
    doc.save(tmp_path / "memo.pdf")
    memo = ingest(matter, tmp_path / "memo.pdf")
    from matters.productions.reservation import production_create

    production = production_run(production_id=production_create(
        matter=matter, exhibits=[memo], prefix="SMITH", created_by=attorney, enqueue=False,
        withheld={memo.pk: {"basis": "attorney_client", "description": "Memo from counsel"}}).pk)
    assert production.status == Production.Status.DONE, production.reason
    entry = PrivilegeLogEntry.objects.get()
    client.force_login(attorney)
    log_url = reverse("matters:privilege_log", args=[matter.pk, production.pk])
    response = client.post(log_url, {"entry": entry.pk, "date": "", "author": "", "recipients": "",
                                     "document_type": "Memo", "description": "Memo: " + sentence}, follow=True)
    assert response.status_code == 200
    page = response.content.decode()
    assert "must not hold it" in page and "withheld" in page
    assert PrivilegeLogEntry.objects.get().description == "Memo from counsel"
