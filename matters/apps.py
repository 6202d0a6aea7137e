import logging
import sys

from django.apps import AppConfig


class MattersConfig(AppConfig):
    name = "matters"
    verbose_name = "Matters"

    def ready(self) -> None:
        # Audit of logins is a record, not workflow: auth's own signals are the only hook Django offers for it.
        from matters.audit import login  # noqa: F401

        # Legal hold is an invariant every deletion must respect, whoever deletes: a guard, not workflow.
        from matters.retention.services import connect_hold_guard

        connect_hold_guard()

        # A worker started on its own (``manage.py db_worker``, maybe on another host) checks OCR once, as
        # ``make run`` does, so a missing language is said at start and not by every scan.
        if len(sys.argv) > 1 and sys.argv[1] == "db_worker":
            from django.conf import settings

            from matters.exhibits.ingest.ocr_check import ocr_problems

            for problem in ocr_problems(settings.LAWDESK_OCR_LANG):
                logging.getLogger("matters").warning("%s", problem)
