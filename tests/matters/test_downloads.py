"""Downloads under ASGI (uvicorn, as `make run` serves them) stream without Django's synchronous-iterator warning."""

import warnings

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient

pytestmark = pytest.mark.django_db


def test_an_original_downloads_under_asgi_with_no_warning_and_every_byte(matter, corpus, ingest, attorney):
    source = corpus("court/ca7_3.pdf")
    exhibit = ingest(matter, source)
    from django.urls import reverse

    url = reverse("matters:exhibit_original", args=[matter.pk, exhibit.pk])

    async def fetch():
        client = AsyncClient()
        await client.aforce_login(attorney)
        response = await client.get(url)
        return response, b"".join([chunk async for chunk in response])

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        response, body = async_to_sync(fetch)()
    assert response.status_code == 200 and body == source.read_bytes()
    assert response["Content-Length"] == str(len(body)) and "attachment" in response["Content-Disposition"]
