"""Privilege and redaction: withholding and redacting documents of a production (:mod:`.services`), the privilege
log (:mod:`.log`), searching text to redact (:mod:`.redaction_search`), and their pages (:mod:`.views`,
:mod:`.urls`)."""
