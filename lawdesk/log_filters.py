"""Logging filters. Wired in settings.LOGGING."""

import logging


class AnswerWithoutTraceback(logging.Filter):
    """Drop the traceback from ``django.request`` records of 4xx answers (a 403 for a role that may not act, a 404
    for a matter the user is not a member of): Django logs them with the exception attached, which writes a full
    traceback into the log for what is an expected answer. Server errors (5xx) keep theirs.

    Django's ``log_response`` puts the response's status on the record as ``status_code``."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
