"""docs/configuration.md names every ``LAWDESK_*`` variable the code reads, with the code's own default.

The variables are found in the code itself: every call whose first argument is a ``"LAWDESK_..."`` literal
(``os.environ.get``, ``os.environ.setdefault``, the settings' ``_env_int``, the stage specs' ``_tokens``) and every
``os.environ["LAWDESK_..."]``. Where the default is a literal (or literal arithmetic, ``4 * 3600``), the table's
default must be it; a computed default (the number of cores, a path under the repository) is described in words.
"""

import ast
import re

from tests.support.paths import BASE_DIR

CONFIGURATION = BASE_DIR / "docs" / "configuration.md"
CODE_DIRS = ("lawdesk", "matters", "pipeline", "bench", "scripts")
NAME = re.compile(r"LAWDESK_[A-Z0-9_]+")
NO_DEFAULT = object()


def _literal(node: ast.expr):
    """Return the value of a literal default (constants and arithmetic on them), else NO_DEFAULT."""
    if not all(isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop))
               for n in ast.walk(node)):
        return NO_DEFAULT
    return eval(compile(ast.Expression(node), "<default>", "eval"), {"__builtins__": {}})  # constants only


def variables_in_code() -> dict[str, set]:
    """Return each LAWDESK_* variable the code reads, with the literal defaults it is read with."""
    found: dict[str, set] = {}
    for folder in CODE_DIRS:
        for path in (BASE_DIR / folder).rglob("*.py"):
            if path.name == "test_settings.py":
                continue  # the test suite's own values (a longer lease, a private data directory), not an office's
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                    key, default = node.slice.value, NO_DEFAULT
                elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                      and not (isinstance(node.func, ast.Name) and node.func.id == "getattr")):
                    key = node.args[0].value
                    default = _literal(node.args[1]) if len(node.args) > 1 else NO_DEFAULT
                else:
                    continue
                if isinstance(key, str) and NAME.fullmatch(key):
                    found.setdefault(key, set())
                    if default is not NO_DEFAULT and default != "":
                        found[key].add(default)
    return found


def documented_defaults() -> dict[str, str]:
    """Return each variable of docs/configuration.md's tables with its default cell (backticks removed)."""
    documented = {}
    for line in CONFIGURATION.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not (names := NAME.findall(cells[0])):
            continue
        defaults = cells[1].split(", ") if len(names) > 1 else [cells[1]]
        if len(defaults) == 1:
            defaults *= len(names)  # one default said once for all the row's variables ("unset")
        assert len(defaults) == len(names), f"one default per variable, or one for all: {line}"
        documented.update(zip(names, (d.replace("`", "") for d in defaults)))
    return documented


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def test_every_variable_the_code_reads_is_documented_with_its_default():
    documented = documented_defaults()
    code = variables_in_code()
    assert sorted(set(code) - set(documented)) == []
    wrong = {name: (documented[name], sorted(map(_shown, defaults)))
             for name, defaults in code.items() if defaults and {documented[name]} != set(map(_shown, defaults))}
    assert wrong == {}


def test_every_documented_variable_is_read_somewhere():
    code_text = "\n".join(path.read_text(encoding="utf-8", errors="replace")
                          for folder in CODE_DIRS for path in (BASE_DIR / folder).rglob("*")
                          if path.is_file() and path.suffix in (".py", ".sh"))
    assert [name for name in documented_defaults() if name not in code_text] == []


def test_a_default_is_read_when_it_is_a_literal_and_left_to_words_when_computed():
    def default(source: str):
        return _literal(ast.parse(source, mode="eval").body)

    assert (default('"30"'), default("4 * 3600"), default("0.9")) == ("30", 14400, 0.9)
    assert default("str(min(2, os.cpu_count() or 1))") is NO_DEFAULT
    assert default('BASE_DIR / "var"') is NO_DEFAULT
