"""File downloads that suit the server they run under.

Under ASGI (uvicorn, `make run`) Django warns "StreamingHttpResponse must consume synchronous iterators in order
to serve them asynchronously" for every FileResponse over a plain file, and reads it in a thread per chunk
(django/core/handlers/asgi.py). Giving the response an asynchronous iterator there avoids both; under WSGI (the
test client, other deployments) the plain file iterator is what Django expects.
"""

import asyncio

from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, HttpRequest

CHUNK_BYTES = 256 * 1024


async def _chunks(stream):
    try:
        while chunk := await asyncio.to_thread(stream.read, CHUNK_BYTES):
            yield chunk
    finally:
        await asyncio.to_thread(stream.close)


def file_response(request: HttpRequest, stream, **kwargs) -> FileResponse:
    """Return a FileResponse for the open binary ``stream`` (FileResponse's keyword arguments: ``as_attachment``,
    ``filename``, ``content_type``); its headers (length, type, disposition) are FileResponse's own."""
    response = FileResponse(stream, **kwargs)
    if isinstance(request, ASGIRequest):
        response.streaming_content = _chunks(stream)
    return response
