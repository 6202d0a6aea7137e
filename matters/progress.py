"""Tell open matter pages that an exhibit changed.

Progress itself is always persisted on the Exhibit row (status, page k of n), so a page that polls, or a WebSocket
consumer that reads the database, sees it from any process. When a channel layer is configured (``REDIS_URL``),
the worker also pushes a notice through it so that pages update without waiting for their next read.
"""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer


def matter_group(matter_id: int) -> str:
    return f"matter-{int(matter_id)}"


def exhibit_changed(*, matter_id: int, exhibit_id: int) -> None:
    """Push an ``exhibit.changed`` notice to the matter's group, if a channel layer is configured."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(matter_group(matter_id), {"type": "exhibit.changed", "exhibit_id": exhibit_id})
