"""Serve static files through the ASGI application, answering 404 for any path that leaves the static folders.

Django's handler lets ``SuspiciousFileOperation`` escape for a path such as ``/static/..%2f..%2fsettings.py``
(its finders' ``safe_join`` refuses it), which became a 500. A path outside the static folders is simply not
found; nothing about the file system is told.
"""

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.http import Http404

from lawdesk.request_threads import KeptThreadsASGIHandler


class StaticFilesHandler(ASGIStaticFilesHandler, KeptThreadsASGIHandler):
    """``ASGIStaticFilesHandler`` whose ``serve`` turns a suspicious or malformed path into Http404; a static file
    is served in the kept request threads too (``super().__call__`` reaches KeptThreadsASGIHandler)."""

    def serve(self, request):
        try:
            return super().serve(request)
        except (SuspiciousOperation, ValueError) as exc:  # ValueError: a NUL byte in the path
            raise Http404("Not found") from exc
