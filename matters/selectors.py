"""Reads of the case file that enforce the ethical wall: a user sees a matter only as one of its members.

Superusers and operators are no exception. A non-member asking for a matter's URL gets 404, so the existence of
a matter is not disclosed either.
"""

from django.db.models import F, Q, QuerySet
from django.http import Http404

from .models import EVIDENCE_ORIGINS, BatesPage, Exhibit, IncomingBatesPage, Matter, Page, Production
from .permissions import ROLES, membership_read


def matters_for_user(user) -> QuerySet[Matter]:
    if not user.is_authenticated:
        return Matter.objects.none()
    return Matter.objects.filter(members=user)


def matter_for_user(user, matter_id: int) -> Matter:
    """Return the matter if ``user`` is a member; raise Http404 otherwise. The membership this read proves is
    remembered for the request (:func:`matters.permissions.membership_read`): the page's controls ask for it."""
    try:
        matter = matters_for_user(user).get(pk=matter_id)  # get(): first() would add the ordering by created_at
    except Matter.DoesNotExist:
        raise Http404("No such matter.") from None
    membership_read(user, matter)
    return matter


def exhibit_for_user(user, matter_id: int, exhibit_id: int) -> Exhibit:
    """Return the exhibit if it belongs to a matter ``user`` is a member of; raise Http404 otherwise."""
    matter = matter_for_user(user, matter_id)
    # get(), not first(): first() adds the model's ordering to a lookup by key, and compiling it (with the join
    # the ordering then had, by "matter") was a fifth of a page view's CPU. The key is unique either way. The
    # exhibit comes with the matter just read (a related manager's rows know their matter), not read again.
    try:
        return matter.exhibits.select_related("duplicate_of").get(pk=exhibit_id)
    except Exhibit.DoesNotExist:
        raise Http404("No such exhibit.") from None


def page_for_user(user, matter_id: int, exhibit_id: int, number: int) -> Page:
    exhibit = exhibit_for_user(user, matter_id, exhibit_id)
    try:
        page = exhibit.pages.get(number=number)  # unique in its exhibit (page_number_unique_in_exhibit)
    except Page.DoesNotExist:
        raise Http404("No such page.") from None
    page.exhibit = exhibit  # the exhibit just read, its matter with it, rather than reading it again
    return page


def exhibits_of_matter(matter: Matter) -> QuerySet[Exhibit]:
    """The matter's exhibits in label order, each family together (its top exhibit, then its children in the
    order attached, each child's own children under it: ``Exhibit.family_path``); files without a label
    (rejected, duplicates) that belong to no family after them."""
    return matter.exhibits.order_by(F("family_seq").asc(nulls_last=True), "family_path", "id")


def exhibit_family(exhibit: Exhibit) -> list[Exhibit]:
    """The family ``exhibit`` belongs to, its top exhibit first and every member under it in family order; a
    list of ``exhibit`` alone when it has neither parent nor children."""
    top = exhibit
    for _ in range(100):  # a family is as deep as LAWDESK_EMAIL_MAX_DEPTH allows; this guards a loop made by hand
        if top.parent_id is None:
            break
        top = top.parent
    if top.family_seq is None:
        return [top, *top.children.order_by("family_position", "id")] if top.pk == exhibit.pk else [top, exhibit]
    return list(matter_family_members(top))


def matter_family_members(top: Exhibit) -> QuerySet[Exhibit]:
    """The top exhibit of a family and every member under it, in family order."""
    return (top.matter.exhibits.filter(family_seq=top.family_seq).select_related("parent")
            .order_by("family_path", "id"))


def pages_for_bates(matter: Matter, bates: str) -> list[Page]:
    """The pages a Bates number names in ``matter``: from its finished productions and from productions received
    from other parties. Usually one page; more means two productions used the same number."""
    outgoing = BatesPage.objects.filter(production__matter=matter, production__status=Production.Status.DONE,
                                        bates=bates, page__isnull=False).values_list("page_id", flat=True)
    incoming = IncomingBatesPage.objects.filter(incoming__matter=matter, bates=bates).values_list("page_id", flat=True)
    return list(Page.objects.filter(pk__in=[*outgoing, *incoming]).select_related("exhibit"))


def evidence_exhibits(matter: Matter) -> QuerySet[Exhibit]:
    """The matter's ready evidence: evidence origins only, and never LawDesk's own output coming back (an upload
    marked generated counts only once an attorney has overridden the marking)."""
    return matter.exhibits.filter(status=Exhibit.Status.READY, origin__in=EVIDENCE_ORIGINS).exclude(
        ~Q(generated_reason="") & Q(generated_override_reason="")
    )


def exhibit_counts_of_groups(groups) -> dict[str, int]:
    """Count a matter's exhibits from ``(status, origin, marked_generated, how many)`` groups, as a ``GROUP BY``
    gives them, so a matter of thousands of files is counted without reading its rows: ``total``, ``evidence``
    (ready, counted as evidence), ``generated`` (LawDesk's own output coming back, not overridden),
    ``authority``, ``in_progress`` (queued or processing) and ``not_processed`` (failed, rejected, needs a
    password, duplicate)."""
    counts = {"total": 0, "evidence": 0, "generated": 0, "authority": 0, "in_progress": 0, "not_processed": 0}
    for status, origin, generated, number in groups:
        counts["total"] += number
        if status in (Exhibit.Status.QUEUED, Exhibit.Status.PROCESSING):
            counts["in_progress"] += number
        elif status != Exhibit.Status.READY:
            counts["not_processed"] += number
        elif generated:
            counts["generated"] += number
        elif origin in EVIDENCE_ORIGINS:
            counts["evidence"] += number
        elif origin == "authority":
            counts["authority"] += number
    return counts


def matter_members(matter: Matter) -> list[dict]:
    """The matter's active members in user-name order: ``[{"user": User, "role": str}]``, the role being the first of
    :data:`matters.permissions.ROLES` whose group the user is in ("" for none)."""
    rows = []
    for user in matter.members.filter(is_active=True).prefetch_related("groups").order_by("username"):
        groups = {group.name for group in user.groups.all()}
        rows.append({"user": user, "role": next((role for role in ROLES if role in groups), "")})
    return rows
