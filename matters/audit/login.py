"""Record logins and failed logins in the system audit chain."""

from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.dispatch import receiver

from lawdesk.client_address import client_address as _address
from matters.audit.services import audit_record


@receiver(user_logged_in, dispatch_uid="lawdesk_audit_login")
def _logged_in(sender, request, user, **kwargs) -> None:
    audit_record(action="login", actor=user, detail={"address": _address(request)})


@receiver(user_logged_out, dispatch_uid="lawdesk_audit_logout")
def _logged_out(sender, request, user, **kwargs) -> None:
    if user is not None:
        audit_record(action="logout", actor=user, detail={"address": _address(request)})


@receiver(user_login_failed, dispatch_uid="lawdesk_audit_login_failed")
def _login_failed(sender, credentials, request=None, **kwargs) -> None:
    # The password is never recorded; the username tried is, since lockouts are per username.
    audit_record(
        action="login_failed", detail={"username": credentials.get("username", ""), "address": _address(request)}
    )
