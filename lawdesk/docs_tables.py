"""Tables in ``docs/`` that the code holds, written from the code so that the manual and the code cannot differ.

A generated table sits in its Markdown file between two marker lines, ``<!-- table:NAME -->`` and
``<!-- /table:NAME -->``; everything between them belongs to the generator. ``manage.py docs_tables`` rewrites
them, ``manage.py docs_tables --check`` only reports the files whose table differs from the code (a test runs it).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from pipeline.topology.rules import RULES


class MarkersMissing(ValueError):
    """A Markdown file lacks the begin or end marker of a table it should hold."""


@dataclass(frozen=True)
class Table:
    """A generated table: its ``name`` (used in the markers), the Markdown ``path`` relative to the repository,
    and ``render``, which returns the table's Markdown lines (header included, no trailing newline)."""

    name: str
    path: Path
    render: Callable[[], str]


def _cell(text: str) -> str:
    # A bare "|" would split the cell: Markdown tables take it escaped.
    return " ".join(text.split()).replace("|", "\\|")


def topology_rules_table() -> str:
    """Return the rules of ``pipeline.topology.rules.RULES`` as a Markdown table (level, rule, what, source),
    in the table's own order."""
    lines = ["| level | rule | what it checks | source |", "| --- | --- | --- | --- |"]
    lines += [f"| {rule.level} | `{rule.id}` | {_cell(rule.summary)} | {_cell(rule.source)} |" for rule in RULES]
    return "\n".join(lines)


TABLES: tuple[Table, ...] = (
    Table("topology-rules", Path("docs/topology.md"), topology_rules_table),
)


def table_sync(text: str, table: Table) -> str:
    """Return ``text`` (a Markdown file's contents) with ``table``'s markers holding what the code says now.

    Raises :class:`MarkersMissing` when either marker line is absent."""
    pattern = re.compile(rf"(<!-- table:{re.escape(table.name)} -->\n).*?(<!-- /table:{re.escape(table.name)} -->)",
                         re.DOTALL)
    if not pattern.search(text):
        raise MarkersMissing(f"{table.path} has no '<!-- table:{table.name} -->' ... "
                             f"'<!-- /table:{table.name} -->' lines for the generated table.")
    return pattern.sub(lambda m: m.group(1) + table.render() + "\n" + m.group(2), text, count=1)


def tables_out_of_date(base_dir: Path | None = None, *, write: bool = False) -> list[Table]:
    """Return the tables whose file under ``base_dir`` (default: the repository) differs from the code; with
    ``write``, rewrite those files too. Raises :class:`MarkersMissing` as :func:`table_sync` does."""
    base_dir = base_dir or Path(settings.BASE_DIR)
    stale = []
    for table in TABLES:
        path = base_dir / table.path
        text = path.read_text(encoding="utf-8")
        synced = table_sync(text, table)
        if synced != text:
            stale.append(table)
            if write:
                path.write_text(synced, encoding="utf-8")
    return stale
