from django.urls import path

from .consumers import MatterProgressConsumer

websocket_urlpatterns = [
    path("ws/matters/<int:matter_id>/progress/", MatterProgressConsumer.as_asgi()),
]
