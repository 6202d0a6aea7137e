"""Response headers that keep case material in the office's browsers and out of injected scripts.

- ``Content-Security-Policy``: scripts only from LawDesk's own static files (no inline script, no ``eval``), no
  plugins, no framing, forms posted only to LawDesk, connections (htmx requests, WebSockets) only to LawDesk. A
  draft or an exhibit that smuggled markup past escaping still could not run a script. (W3C Content Security
  Policy Level 3; ``'self'`` also matches ``ws:``/``wss:`` to the same host there.) Inline ``style`` attributes
  stay allowed: the review page positions highlight boxes with them, and a style cannot run code.
- ``Cache-Control: private, no-store`` on every response Django makes (pages, partials, page images, exports),
  so no shared proxy keeps them and the browser keeps no copy on disk for the next user of the machine or after
  access ends. Static files (served before Django's views) are not case material and stay cacheable.
"""

from django.utils.deprecation import MiddlewareMixin

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])
NO_STORE = "private, no-store"


class SecurityHeadersMiddleware(MiddlewareMixin):
    """Set the Content-Security-Policy and ``Cache-Control: private, no-store`` on every response."""

    def process_response(self, request, response):
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response["Cache-Control"] = NO_STORE
        return response
