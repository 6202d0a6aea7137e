from django.apps import AppConfig


class MattersConfig(AppConfig):
    name = "matters"
    verbose_name = "Matters"

    def ready(self) -> None:
        # Audit of logins is a record, not workflow: auth's own signals are the only hook Django offers for it.
        from . import audit_login  # noqa: F401
