"""What can go wrong talking to a model server, one class per failure a stage reports differently.

Every error carries ``partial_text``: what the server had streamed before it failed, kept for the record.
"""


class ModelServerError(Exception):
    """Base class. ``status`` is the short word a stage records (``down``, ``loading``, ``error``, ...)."""

    status = "error"

    def __init__(self, message: str, *, partial_text: str = "") -> None:
        super().__init__(message)
        self.partial_text = partial_text


class ServerUnavailable(ModelServerError):
    """The server could not be reached (connection refused, DNS, TLS): nothing was generated."""

    status = "down"


class ServerLoading(ModelServerError):
    """The server answered 503 "Loading model" for longer than the wait limit."""

    status = "loading"


class StreamBroken(ModelServerError):
    """The server accepted the request, then sent an error event or ended the stream without finishing it."""


class StreamTimeout(ModelServerError):
    """No token arrived within the read timeout."""

    status = "timeout"


class Cancelled(ModelServerError):
    """The caller cancelled; the connection was closed so the server stops generating."""

    status = "cancelled"


class ContextOverflow(ModelServerError):
    """The prompt would not fit the server's context; refused before sending, never truncated by the server.

    ``needed_tokens`` (prompt plus the completion budget), ``context_tokens`` (the server's per-slot context).
    """

    status = "refused"

    def __init__(self, message: str, *, needed_tokens: int, context_tokens: int) -> None:
        super().__init__(message)
        self.needed_tokens = needed_tokens
        self.context_tokens = context_tokens


class PromptTruncated(ModelServerError):
    """The server answered after cutting the prompt (``Generation.truncated``): the answer rests on part of the
    evidence only and must not be used as if the model had read it all. ``partial_text`` keeps the answer."""

    status = "truncated"


class SchemaError(ModelServerError):
    """The output did not match the stage's JSON schema, even after one repair attempt. ``raw_text`` keeps it."""

    def __init__(self, message: str, *, raw_text: str) -> None:
        super().__init__(message, partial_text=raw_text)
        self.raw_text = raw_text
