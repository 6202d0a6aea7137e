"""``{% may "edit_drafts" matter as can_edit %}``: the rule set (:mod:`matters.permissions`) in templates, for
the user of the request. Templates decide nothing themselves: they show what the rule set allows."""

from django import template

from matters.permissions import may as _may

register = template.Library()


@register.simple_tag(takes_context=True)
def may(context, act: str, matter=None) -> bool:
    """Whether the request's user may do ``act`` in ``matter`` (None: an act that concerns no matter)."""
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    return user is not None and _may(user, act, matter)
