"""Ethical walls: only members see a matter; everyone else, superusers included, gets 404."""

import io

import pytest
from django.urls import reverse

from matters.exhibits.services import exhibit_create
from matters.models import Exhibit

pytestmark = pytest.mark.django_db


@pytest.fixture
def ready_exhibit(matter, corpus, ingest):
    return ingest(matter, corpus("court/ca7_3.pdf"))


def matter_urls(matter, exhibit) -> list[str]:
    m, e = matter.pk, exhibit.pk
    return [
        reverse("matters:detail", args=[m]),
        reverse("matters:exhibit_rows", args=[m]),
        reverse("matters:exhibit", args=[m, e]),
        reverse("matters:exhibit_original", args=[m, e]),
        reverse("matters:page", args=[m, e, 1]),
        reverse("matters:page_image", args=[m, e, 1, "thumb"]),
        reverse("matters:page_image", args=[m, e, 1, "full"]),
        reverse("matters:chronology", args=[m]),
        reverse("pipeline:digests", args=[m]),
        reverse("pipeline:exhibit_digest", args=[m, e]),
    ]


def test_login_is_required_everywhere(client, matter, ready_exhibit):
    for url in matter_urls(matter, ready_exhibit) + [reverse("matters:list")]:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login")), url


@pytest.mark.parametrize("role, superuser", [("attorney", False), ("operator", False), ("attorney", True)])
def test_non_member_gets_404_not_403(client, make_user, matter, ready_exhibit, role, superuser):
    outsider = make_user("bob", role, is_superuser=superuser, is_staff=superuser)
    client.force_login(outsider)
    for url in matter_urls(matter, ready_exhibit):
        assert client.get(url).status_code == 404, url
    upload = client.post(reverse("matters:upload", args=[matter.pk]), {"origin": "client", "file": io.BytesIO(b"x")})
    assert upload.status_code == 404
    assert matter.name not in client.get(reverse("matters:list")).content.decode()


def test_member_sees_everything(client, attorney, matter, ready_exhibit):
    client.force_login(attorney)
    for url in matter_urls(matter, ready_exhibit):
        assert client.get(url).status_code == 200, url


def test_exhibit_of_another_matter_is_404_through_this_matter(client, attorney, make_user, matter, ready_exhibit):
    from matters.services import matter_create

    mine = matter_create(name="Mine", created_by=attorney)
    client.force_login(attorney)
    url = reverse("matters:exhibit", args=[mine.pk, ready_exhibit.pk])
    assert client.get(url).status_code == 404


def test_original_is_an_attachment_with_detected_type_and_nosniff(client, attorney, matter, corpus):
    data = corpus("court/ca7_3.pdf").read_bytes()
    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(data), original_name="x.jpg", origin="client",
                             uploaded_by=attorney, enqueue=False)
    client.force_login(attorney)
    response = client.get(reverse("matters:exhibit_original", args=[matter.pk, exhibit.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"].startswith("attachment")
    assert b"".join(response.streaming_content) == data
    entry = matter.audit_entries.filter(action="exhibit.original_download").get()
    assert (entry.actor, entry.file_sha256) == ("alice", exhibit.sha256)


def test_operator_cannot_upload_even_as_a_member(client, make_user, matter, corpus):
    operator = make_user("otto", "operator")
    matter.members.add(operator)
    client.force_login(operator)
    response = client.post(
        reverse("matters:upload", args=[matter.pk]),
        {"origin": "client", "file": corpus("court/ca7_3.pdf").open("rb")},
    )
    assert response.status_code == 403
    assert not Exhibit.objects.exists()


def test_admin_lists_only_the_viewers_matters(client, make_user, matter, ready_exhibit):
    admin_user = make_user("root", "", is_superuser=True, is_staff=True)
    client.force_login(admin_user)
    assert matter.name not in client.get(reverse("admin:matters_matter_changelist")).content.decode()
    assert ready_exhibit.title not in client.get(reverse("admin:matters_exhibit_changelist")).content.decode()
    assert client.get(reverse("admin:matters_matter_change", args=[matter.pk])).status_code == 302  # not found
    matter.members.add(admin_user)
    assert matter.name in client.get(reverse("admin:matters_matter_changelist")).content.decode()


def test_upload_view_answers_json_with_the_row(client, attorney, matter, corpus):
    client.force_login(attorney)
    response = client.post(
        reverse("matters:upload", args=[matter.pk]),
        {"origin": "opposing_party", "file": corpus("odd/simple.zip").open("rb")},
    )
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "rejected" and "ZIP archive" in body["reason"]
    assert f'id="exhibit-{body["exhibit"]}"' in body["row_html"]


def test_upload_without_a_file_is_a_clear_400(client, attorney, matter):
    client.force_login(attorney)
    response = client.post(reverse("matters:upload", args=[matter.pk]), {"origin": "client"})
    assert response.status_code == 400
    assert "file" in response.json()["error"]
    response = client.post(
        reverse("matters:upload", args=[matter.pk]), {"origin": "draft", "file": io.BytesIO(b"%PDF-1.4")}
    )
    assert response.status_code == 400 and "origin" in response.json()["error"]


def test_exhibit_text_and_reasons_are_escaped(client, attorney, matter):
    exhibit = exhibit_create(matter=matter, stream=io.BytesIO(b"\x00\x01binary"), origin="client",
                             original_name="<script>alert(1)</script>.bin", uploaded_by=attorney, enqueue=False)
    client.force_login(attorney)
    page = client.get(reverse("matters:exhibit", args=[matter.pk, exhibit.pk])).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_two_files_in_one_request_are_refused_not_half_stored(client, attorney, matter, corpus):
    client.force_login(attorney)
    response = client.post(
        reverse("matters:upload", args=[matter.pk]),
        {"origin": "client", "file": [corpus("court/ca7_3.pdf").open("rb"), corpus("court/ca4_17.pdf").open("rb")]},
    )
    assert response.status_code == 400 and "one file per request" in response.json()["error"]
    assert not Exhibit.objects.exists()


def test_a_rejected_file_takes_no_label(client, attorney, matter, corpus):
    exhibit = exhibit_create(matter=matter, stream=corpus("odd/simple.zip").open("rb"), original_name="s.zip",
                             origin="client", uploaded_by=attorney, enqueue=False)
    client.force_login(attorney)
    response = client.post(reverse("matters:exhibit_edit", args=[matter.pk, exhibit.pk]),
                           {"label": "R1", "title": "zip"}, follow=True)
    assert "takes no label" in response.content.decode()
    exhibit.refresh_from_db()
    assert exhibit.label == ""


@pytest.mark.django_db(transaction=True)
def test_websocket_to_an_unknown_path_is_refused_not_an_error(attorney):
    from asgiref.sync import async_to_sync
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator

    from matters.routing import websocket_urlpatterns

    async def attempt():
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/matters/abc/progress/")
        communicator.scope["user"] = attorney
        return await communicator.connect()

    connected, _code = async_to_sync(attempt)()
    assert connected is False
