"""Live progress with the worker in its own process: persisted progress read by the page's WebSocket consumer,
and, with Redis configured, the worker's notices carried across processes by channels-redis."""

import asyncio
import re

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer

from lawdesk.layers import BRPOP_TIMEOUT_S
from matters.exhibits.services import exhibit_create
from matters.progress import matter_group
from matters.routing import websocket_urlpatterns


def upload(matter, attorney, path):
    with open(path, "rb") as stream:
        return exhibit_create(matter=matter, stream=stream, original_name=path.name, origin="client",
                              uploaded_by=attorney)


async def receive_until(communicator, needle: str, timeout_s: float) -> list[str]:
    messages = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        try:
            message = await communicator.receive_from(timeout=max(0.1, deadline - loop.time()))
        except asyncio.TimeoutError:
            break
        messages.append(message)
        if needle in message:
            return messages
    raise AssertionError(f"{needle!r} did not arrive; got {messages}")


def run_consumer_session(matter, attorney, path) -> tuple[list[str], int]:
    async def session():
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/matters/{matter.pk}/progress/")
        communicator.scope["user"] = attorney
        connected, _ = await communicator.connect()
        assert connected
        from channels.db import database_sync_to_async

        exhibit = await database_sync_to_async(upload)(matter, attorney, path)
        messages = await receive_until(communicator, 'data-status="ready"', timeout_s=90)
        await communicator.disconnect()
        return messages, exhibit.pk

    return async_to_sync(session)()


@pytest.mark.django_db(transaction=True)
def test_worker_process_progress_reaches_the_page_without_redis(attorney, matter, corpus, processes):
    processes.worker()
    # Four scanned pages: OCR takes long enough for "page k of 4" to be seen between polls.
    messages, exhibit_id = run_consumer_session(matter, attorney, corpus("odd/cardinal.pdf"))
    joined = "".join(messages)
    assert f'id="exhibit-{exhibit_id}"' in messages[0]
    assert 'hx-swap-oob="beforeend:#exhibit-rows"' in messages[0]  # a row this page had not shown yet
    assert re.search(r"page [123] of 4", joined)  # persisted "page k of n" progress while processing
    assert 'data-status="ready"' in messages[-1] and 'hx-swap-oob="true"' in messages[-1]


def test_a_consumer_idle_longer_than_the_blocking_receive_still_gets_the_next_notice(redis_layer):
    # An idle WebSocket waits in the layer's blocking receive; a notice sent after that wait has timed out once
    # (more than BRPOP_TIMEOUT_S seconds of silence) must still arrive, not end the consumer with a read timeout.
    assert BRPOP_TIMEOUT_S == RedisChannelLayer.brpop_timeout
    layer = get_channel_layer()

    async def idle_then_notice():
        channel = await layer.new_channel()
        receiving = asyncio.ensure_future(layer.receive(channel))
        await asyncio.sleep(BRPOP_TIMEOUT_S + 2)
        assert not receiving.done()
        await layer.send(channel, {"type": "exhibit.changed", "exhibit_id": 7})
        return await asyncio.wait_for(receiving, timeout=10)

    assert async_to_sync(idle_then_notice)() == {"type": "exhibit.changed", "exhibit_id": 7}


@pytest.mark.django_db(transaction=True)
def test_worker_process_notices_travel_through_redis(attorney, matter, corpus, processes, redis_layer):
    processes.worker(**redis_layer)
    layer = get_channel_layer()

    async def listen():
        channel = await layer.new_channel()
        await layer.group_add(matter_group(matter.pk), channel)
        from channels.db import database_sync_to_async

        exhibit = await database_sync_to_async(upload)(matter, attorney, corpus("court/ca7_3.pdf"))
        message = await asyncio.wait_for(layer.receive(channel), timeout=60)
        await layer.group_discard(matter_group(matter.pk), channel)
        return exhibit, message

    exhibit, message = async_to_sync(listen)()
    assert message == {"type": "exhibit.changed", "exhibit_id": exhibit.pk}

    messages, _ = run_consumer_session(matter, attorney, corpus("court/ca4_17.pdf"))
    assert 'data-status="ready"' in messages[-1]


@pytest.mark.django_db(transaction=True)
def test_non_member_websocket_is_refused(make_user, matter):
    outsider = make_user("mallory", "attorney", is_superuser=True)

    async def attempt():
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/matters/{matter.pk}/progress/")
        communicator.scope["user"] = outsider
        connected, code = await communicator.connect()
        return connected, code

    assert async_to_sync(attempt)() == (False, 4404)
