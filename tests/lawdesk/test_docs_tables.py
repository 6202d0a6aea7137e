"""The tables docs/ copies from the code (the topology rules) are written from it, and a stale one is caught."""

import shutil

import pytest
from django.core.management import CommandError, call_command

from lawdesk.docs_tables import TABLES, MarkersMissing, table_sync, tables_out_of_date
from pipeline.topology.rules import RULES
from tests.support.paths import BASE_DIR

RULES_TABLE = next(t for t in TABLES if t.name == "topology-rules")


def test_the_manual_holds_the_tables_the_code_gives():
    call_command("docs_tables", "--check")  # raises CommandError when a table differs


def test_the_rules_table_has_one_row_per_rule_in_the_codes_order():
    rows = RULES_TABLE.render().splitlines()[2:]
    assert [row.split("|")[2].strip(" `") for row in rows] == [rule.id for rule in RULES]
    assert all(row.split("|")[1].strip() == rule.level for row, rule in zip(rows, RULES))


def test_a_table_that_differs_from_the_code_is_reported_and_rewritten(tmp_path):
    (tmp_path / "docs").mkdir()
    stale = (BASE_DIR / "docs" / "topology.md").read_text(encoding="utf-8").replace(
        "| error | `gpu_other_host` |", "| warning | `gpu_other_host` |")
    (tmp_path / "docs" / "topology.md").write_text(stale, encoding="utf-8")

    assert tables_out_of_date(tmp_path) == [RULES_TABLE]
    assert (tmp_path / "docs" / "topology.md").read_text(encoding="utf-8") == stale  # --check writes nothing
    assert tables_out_of_date(tmp_path, write=True) == [RULES_TABLE]
    assert tables_out_of_date(tmp_path) == []
    assert (tmp_path / "docs" / "topology.md").read_text(encoding="utf-8") == (
        BASE_DIR / "docs" / "topology.md").read_text(encoding="utf-8")


def test_the_check_fails_with_the_files_named(tmp_path, settings, capsys):
    shutil.copytree(BASE_DIR / "docs", tmp_path / "docs")
    path = tmp_path / "docs" / "topology.md"
    path.write_text(path.read_text(encoding="utf-8").replace("`memory_fit`", "`memory_fits`"), encoding="utf-8")
    settings.BASE_DIR = tmp_path
    with pytest.raises(CommandError, match="docs_tables"):
        call_command("docs_tables", "--check")
    assert "docs/topology.md: table topology-rules differs from the code" in capsys.readouterr().out


def test_text_without_the_markers_is_refused():
    with pytest.raises(MarkersMissing, match="table:topology-rules"):
        table_sync("# Model topology\n\nNo table here.\n", RULES_TABLE)
