"""The forms of a received production: the upload and the field mapping refuse on the field at fault, and
nothing is received or imported."""

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from matters.incoming.forms import IncomingMappingForm, IncomingUploadForm
from matters.incoming.services import incoming_receive
from matters.models import IncomingProduction
from matters.validation import form_submit

pytestmark = pytest.mark.django_db


def test_upload_form_needs_files_and_who_produced_them():
    form = IncomingUploadForm({"origin": "client"}, {})
    assert not form.is_valid()
    assert form.errors["files"] == ["Choose the production's files (a ZIP volume or PDFs)."]
    assert form.errors["origin"] == ["Say who produced it: the opposing party or a third party."]


def test_the_service_refuses_a_production_of_no_file_on_the_files(attorney, matter):
    with pytest.raises(ValidationError) as refused:
        incoming_receive(matter=matter, uploads=[], origin="third_party", user=attorney)
    assert refused.value.message_dict == {"files": ["Choose the production's files (a ZIP volume or PDFs)."]}
    assert not IncomingProduction.objects.exists()


def test_the_upload_page_says_what_is_missing_and_receives_nothing(client, attorney, matter):
    client.force_login(attorney)
    response = client.post(reverse("matters:incoming_upload", args=[matter.pk]),
                           {"origin": "court", "files": SimpleUploadedFile("v.zip", b"PK\x03\x04")}, follow=True)
    assert "Say who produced it: the opposing party or a third party." in response.content.decode()
    assert not IncomingProduction.objects.exists()


def test_mapping_form_refuses_a_column_the_load_file_does_not_have(attorney, matter):
    incoming = IncomingProduction.objects.create(matter=matter, origin="opposing_party", created_by=attorney,
                                                 status=IncomingProduction.Status.AWAITING_CONFIRMATION,
                                                 header=["BegBates", "EndBates"])
    form = IncomingMappingForm({"begbates": "BegBates", "endbates": "Custodian"}, header=incoming.header)
    assert form_submit(form, lambda data: pytest.fail("the service is not called")) is None
    assert form.errors == {"endbates": ["endbates: the load file has no column Custodian; choose one of its "
                                        "columns or (none)."]}


def test_the_mapping_page_shows_the_refusal_and_imports_nothing(client, attorney, matter):
    incoming = IncomingProduction.objects.create(matter=matter, origin="opposing_party", created_by=attorney,
                                                 status=IncomingProduction.Status.AWAITING_CONFIRMATION,
                                                 header=["BegBates", "EndBates"])
    client.force_login(attorney)
    response = client.post(reverse("matters:incoming", args=[matter.pk, incoming.pk]), {"begbates": "Nope"})
    assert response.status_code == 200
    assert 'id="mapping-errors"' in response.content.decode() and "no column Nope" in response.content.decode()
    incoming.refresh_from_db()
    assert incoming.status == IncomingProduction.Status.AWAITING_CONFIRMATION and incoming.field_map == {}
