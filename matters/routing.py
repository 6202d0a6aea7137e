from channels.generic.websocket import WebsocketConsumer
from django.urls import path, re_path

from .consumers import MatterProgressConsumer


class NoSuchSocket(WebsocketConsumer):
    """Refuse a WebSocket to a path LawDesk does not serve, instead of failing in the router."""

    def connect(self) -> None:
        self.close()


websocket_urlpatterns = [
    path("ws/matters/<int:matter_id>/progress/", MatterProgressConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),
]
