"""The channel layer that carries worker notices to WebSocket consumers across processes (channels-redis)."""

# channels-redis waits for a message with BZPOPMIN blocking BRPOP_TIMEOUT_S (its RedisChannelLayer.brpop_timeout);
# redis-py 8 reads every reply with a 5-second socket timeout by default, so an idle consumer's wait ended in
# "Timeout reading from" Redis after about 5 s and the consumer, and its WebSocket, were torn down
# (django/channels_redis issue 422). The read timeout must outlast the blocking wait; it stays finite so a Redis
# that went away is still noticed.
BRPOP_TIMEOUT_S = 5
SOCKET_TIMEOUT_S = 3 * BRPOP_TIMEOUT_S


def redis_channel_layers(url: str) -> dict:
    """The ``CHANNEL_LAYERS`` setting for a Redis at ``url`` (``redis://host:port/db``): one host whose socket read
    timeout (seconds) outlasts the layer's blocking receive."""
    host = {"address": url, "socket_timeout": SOCKET_TIMEOUT_S, "socket_connect_timeout": BRPOP_TIMEOUT_S}
    return {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [host]}}}
