"""Static files: a path that tries to leave the static folders is not found (404), never a server error."""

import asyncio

import httpx
import pytest

from lawdesk.asgi import application

ESCAPES = [
    "/static/..%2f..%2flawdesk%2fsettings.py",
    "/static/%2e%2e/%2e%2e/manage.py",
    "/static/css/..%2f..%2f..%2fmanage.py",
    "/static/..%5c..%5cmanage.py",
    "/static/%2fetc%2fpasswd",
    "/static/css%00.css",
]


async def _get(path: str) -> httpx.Response:
    transport = httpx.ASGITransport(application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.get(path)


@pytest.mark.parametrize("path", ESCAPES)
def test_encoded_dot_dot_is_not_found(path):
    response = asyncio.run(_get(path))
    assert response.status_code == 404
    assert "SECRET_KEY" not in response.text and "root:" not in response.text


def test_a_real_static_file_is_served():
    assert asyncio.run(_get("/static/css/lawdesk.css")).status_code == 200
