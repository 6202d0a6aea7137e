"""Nothing in the repository points at a file outside it, except the test corpus, whose place is a setting.

A clean clone must be complete: the glossary, the style and architecture notes the code once cited from a folder
beside the repository are in docs/, and the corpus is found through ``LAWDESK_CORPUS`` (bench/corpus.py).
"""

import re
import subprocess

from tests.support.paths import BASE_DIR

# A path into the folder beside the repository (other than the corpus), an absolute path of the machine it was
# written on, or one of the notes that used to live there.
OUTSIDE = re.compile(r"\.\./shared/(?!corpus\b)|/work/|\b(?:GLOSSARY|STYLE|ARCHITECTURE)\.md\b")


def tracked_text_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=BASE_DIR, capture_output=True, check=True).stdout
    this = "tests/lawdesk/test_no_outside_references.py"  # it spells out the patterns it looks for
    return [name for name in listed.decode().split("\0") if name and name != this]


def references_outside(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if OUTSIDE.search(line)]


def test_no_tracked_file_refers_to_a_file_outside_the_repository():
    found = {}
    for name in tracked_text_files():
        try:
            text = (BASE_DIR / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # binary or git-lfs content, or deleted in the work tree
        if hits := references_outside(text):
            found[name] = hits
    assert found == {}


def test_the_pattern_tells_the_corpus_from_other_outside_files():
    assert references_outside("see ../shared/GLOSSARY.md\nthe corpus in ../shared/corpus/court\n/work/x/y.pdf\n") == [
        "see ../shared/GLOSSARY.md", "/work/x/y.pdf"]
    assert references_outside("LAWDESK_CORPUS defaults to ../shared/corpus\n") == []
