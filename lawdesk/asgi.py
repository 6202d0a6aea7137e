"""ASGI entry point: HTTP through Django (static files served too) in threads kept from request to request
(lawdesk.request_threads), WebSockets through Channels' URL router.

WebSocket connections carry the session cookie; AuthMiddlewareStack puts the user in the scope and
AllowedHostsOriginValidator refuses connections opened by pages of other sites.
"""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lawdesk.settings")
django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application does

from lawdesk.request_threads import KeptThreadsASGIHandler  # noqa: E402
from lawdesk.warm_up import warm_up_in_a_thread  # noqa: E402

# Every view imported and every template compiled now, before this process accepts a connection, rather than
# during its first requests (lawdesk.warm_up).
warm_up_in_a_thread()

# Django's handler, but a request's thread (and its database connection) is kept for the next request.
django_asgi_app = KeptThreadsASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from lawdesk.static_files import StaticFilesHandler  # noqa: E402
from matters.routing import websocket_urlpatterns  # noqa: E402
from pipeline.routing import websocket_urlpatterns as pipeline_websockets  # noqa: E402

application = ProtocolTypeRouter(
    {
        # One office, one process: Django's static handler is enough and keeps the setup to one command.
        "http": StaticFilesHandler(django_asgi_app),
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(pipeline_websockets + websocket_urlpatterns))
        ),
    }
)
