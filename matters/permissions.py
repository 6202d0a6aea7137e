"""The permission matrix of docs/glossary.md ("People and permissions"), enforced in the services.

Every act on a matter needs membership of the matter (superusers included) and the role's permission:

=====================  =================  =========  =========  ========
act                    permission         attorney   assistant  operator
=====================  =================  =========  =========  ========
upload, edit exhibits  upload_exhibit     yes        yes        no
start jobs             upload_exhibit     yes        yes        no
save, delete deadlines upload_exhibit     yes        yes        no
start productions      upload_exhibit     yes        yes        no
receive productions    upload_exhibit     yes        yes        no
edit drafts            upload_exhibit     yes        yes        no
approve drafts         approve_draft      yes        no         no
waive / confirm        approve_draft      yes        no         no
set "cites as"         approve_draft      yes        no         no
serve productions      serve_production   yes        no         no
withhold; remove a     serve_production   yes        no         no
redaction box
hold, lift, purge      hold_matter        yes        no         no
=====================  =================  =========  =========  ========

``user=None`` is the command line, run by whoever administers the machine, and is not checked here.
"""

from django.core.exceptions import PermissionDenied

ACTS: dict[str, tuple[str, str]] = {
    # act: (permission codename, what the refusal says the user may not do)
    "upload": ("upload_exhibit", "upload or change exhibits"),
    "start_job": ("upload_exhibit", "start jobs"),
    # Calendaring is docketing work an assistant does as often as an attorney; the counting is shown step by step.
    "save_deadline": ("upload_exhibit", "save or delete deadlines"),
    "start_production": ("upload_exhibit", "start productions"),
    "receive_production": ("upload_exhibit", "receive productions"),
    "edit_draft": ("upload_exhibit", "edit drafts"),
    "approve_draft": ("approve_draft", "approve drafts, waive or confirm findings"),
    "set_cites_as": ("approve_draft", "set how an exhibit is cited (an attorney's act)"),
    "serve_production": ("serve_production", "serve productions (an attorney's act)"),
    # A removed box lets its words into the next production: the same decision as withholding a document.
    "remove_redaction": ("serve_production", "remove a redaction box (an attorney's act: its words would reach "
                                             "the next production)"),
    "hold_matter": ("hold_matter", "put the matter on legal hold, lift the hold or purge it (an attorney's act)"),
}


def require(user, act: str, matter) -> None:
    """Raise PermissionDenied unless ``user`` is a member of ``matter`` holding the permission ``act`` needs
    (:data:`ACTS`); ``user=None`` (the command line) passes. KeyError for an act not in the matrix."""
    permission, what = ACTS[act]
    if user is None:
        return
    if not user.is_active or not matter.members.filter(pk=user.pk).exists():
        raise PermissionDenied(f"Only a member of the matter may {what}.")
    if not user.has_perm(f"matters.{permission}"):
        raise PermissionDenied(f"You may not {what} in this matter.")
