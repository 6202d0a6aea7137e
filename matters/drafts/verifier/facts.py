"""The verifier's index of the dates and amounts on evidence pages (``PageFact`` rows).

A claim is looked up by value in this index instead of scanning every page's text: at 10,000 pages a scan per
claim is what makes a naive checker slow. An exhibit is indexed when it becomes ready; the verifier indexes
any exhibit of the matter whose index is missing or was made under another version or number format.
"""

from django.db import connections, transaction

from matters.exhibits.search_index import merge_page_index
from matters.models import Exhibit, Matter, PageFact
from matters.selectors import evidence_exhibits

from .dates import find_dates
from .money import find_amounts, find_bare_numbers

# Bump when what is indexed changes, so every exhibit is indexed again on the next verification.
FACTS_VERSION = 5
# Every day of a range on a page is indexed (``March 9–13, 2012`` supports March 11); a range is read up to a
# year long (matters.drafts.verifier.dates).
_RANGE_DAYS = 366


def facts_key(number_format: str) -> str:
    return f"v{FACTS_VERSION}:{number_format}"


def page_facts(text: str, number_format: str) -> set[tuple[str, str]]:
    """The ``(kind, value)`` facts of one page's text (kinds as in :class:`matters.models.PageFact`)."""
    facts: set[tuple[str, str]] = set()
    for mention in find_dates(text, "mdy", yearless=True):
        if mention.problem or (mention.year_from and not mention.days):
            # A lone date without a year ("On May 1, ...") is not indexed: a page recites other years' events too
            # often for the year nearby to be its own. A range without one ("from May 1 through May 3") is, with
            # the year of the page's nearest full date (as a draft's is read), or it would ground nothing.
            continue
        if mention.other_days:
            # A range both numeric orders read (03/04/2021 to 05/06/2021): each reading's days under its order,
            # as a single date with two readings is, so a claim finds only the range its matter's order reads.
            facts.update(("date_mdy", day) for day in mention.days[:_RANGE_DAYS])
            facts.update(("date_dmy", day) for day in mention.other_days[:_RANGE_DAYS])
        elif mention.days:
            # One reading only (an end only one order reads settles the pair: 01/08/2024 - 31/08/2024 is August).
            facts.update(("date", day) for day in mention.days[:_RANGE_DAYS])
        elif mention.ambiguous:
            facts.add(("date_mdy", mention.readings[0]))
            facts.add(("date_dmy", mention.readings[1]))
        else:
            facts.add(("date", mention.readings[0]))
    for amount in find_amounts(text, number_format):
        facts.add(("amount", amount.key))
        if amount.words_value is not None:
            facts.add(("amount", f"{amount.currency}:{amount.words_value}"))
    for value in find_bare_numbers(text, number_format):
        facts.add(("number", str(value)))
    return facts


def exhibit_index_facts(exhibit: Exhibit) -> int:
    """Index the dates and amounts of every page of ``exhibit`` (replacing an older index); return how many
    facts were stored."""
    number_format = Matter.objects.filter(pk=exhibit.matter_id).values_list("number_format", flat=True).first()
    rows = []
    for page_id, text in exhibit.pages.values_list("id", "text"):
        rows.extend(PageFact(page_id=page_id, kind=kind, value=value)
                    for kind, value in page_facts(text, number_format))
    with transaction.atomic():
        PageFact.objects.filter(page__exhibit=exhibit).delete()
        PageFact.objects.bulk_create(rows, batch_size=2000)
        Exhibit.objects.filter(pk=exhibit.pk).update(facts_index=facts_key(number_format))
    # The pages' words went into the full-text index as they were written; merged now, once per exhibit version,
    # the verifier's phrase queries read one list per word instead of one per small segment.
    merge_page_index(connections[Exhibit.objects.db])
    return len(rows)


def matter_index_facts(matter: Matter) -> int:
    """Index every evidence exhibit of ``matter`` whose index is missing or stale; return how many were."""
    stale = evidence_exhibits(matter).exclude(facts_index=facts_key(matter.number_format))
    count = 0
    for exhibit in stale:
        exhibit_index_facts(exhibit)
        count += 1
    return count
