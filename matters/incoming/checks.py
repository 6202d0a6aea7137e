"""Checks that a received volume holds together, each used wherever its fault can arise; every fault found is a
line of the import's :class:`.loadfiles.Report`. No Django: pages are anything with ``number`` (and ``text``).

- a number given to two pages of one volume (:func:`numbers_not_given`);
- pages the image load file numbers that no DAT record holds (:func:`report_outside_records`);
- one prefix written with different digit counts (:func:`report_digit_counts`);
- a DAT record whose range the image load file's document breaks split or join (:func:`report_document_breaks`);
- a text file's page that does not read like the page it is for (:func:`texts_of_their_pages`).
"""

import re

from .loadfiles import Bates, Report

# A page's own text (PDF text layer or OCR) and its load-file text share most of their words when they are the
# same page, OCR errors and all; a page of another document shares only the common ones. A page with fewer
# words than CHECK_MIN_WORDS cannot be told either way and is not checked.
CHECK_MIN_WORDS = 12
SAME_PAGE_MIN_SHARE = 0.3
_WORD = re.compile(r"[^\W\d_]{3,}")


def numbers_not_given(first: str, pages: list, numbers: list[Bates], given: dict | None,
                      report: Report) -> list[tuple[object, Bates]]:
    """The (page, number) pairs of a document whose number no earlier document of the volume was given (by
    :attr:`Bates.key`); ``given`` is updated. A number given twice (a repeated DAT row, overlapping ranges, one
    number written two ways) would name two pages: the later page is left without it, and the report says so."""
    if given is None:
        return list(zip(pages, numbers))
    kept, repeated = [], []
    for page, number in zip(pages, numbers):
        if number.key in given:
            repeated.append(f"{number} (page {page.number})")
            continue
        given[number.key] = str(number)
        kept.append((page, number))
    if repeated:
        report.add(f"{first}: {', '.join(repeated)} {'was' if len(repeated) == 1 else 'were'} already given to a "
                   "page of an earlier document of this volume; the page was left without that number.")
    return kept


def report_outside_records(images: dict[tuple, tuple[str, int, str]], ranged: set[tuple], kind: str,
                           report: Report) -> None:
    """Report the pages the image load file numbers (``images``, by key, see
    :func:`.volume_files._image_map`) that no DAT record's range holds (``ranged``, keys): they belong to no
    document, so nothing imports them."""
    outside = [written for key, (_, _, written) in images.items() if key not in ranged]
    if outside:
        shown = ", ".join(outside[:10]) + (f" and {len(outside) - 10} more" if len(outside) > 10 else "")
        report.add(f"{len(outside)} page(s) the {kind} numbers are in no DAT record's Bates range ({shown}); they "
                   "were not imported. Ask the producing party for the DAT rows of those documents.")


def report_document_breaks(numbers: list[Bates], breaks: set[tuple], kind: str, report: Report) -> None:
    """Report a DAT record (``numbers``, its range) that the image load file (``breaks``: keys of the numbers it
    starts a document at; empty when it marks none) does not start a document at, or starts another document
    inside: the DAT and the OPT disagree on where documents begin, so the exhibit may hold part of a document
    or two documents joined."""
    if not breaks:
        return
    span = f"{numbers[0]}–{numbers[-1]}"
    if numbers[0].key not in breaks:
        report.add(f"{span}: the {kind} starts no document at {numbers[0]}; this DAT record may be the rest of the "
                   "document before it.")
    inside = [str(number) for number in numbers[1:] if number.key in breaks]
    if inside:
        report.add(f"{span}: the {kind} starts another document at {', '.join(inside[:10])}; this DAT record may "
                   "hold two or more documents joined.")


def report_digit_counts(widths: dict[str, dict[int, str]], report: Report) -> None:
    """Report each prefix written with more than one digit count (``widths``: prefix key -> digit count -> one
    number written so): the numbers are one sequence, but a cite must match the digits of the page."""
    for prefix, written in widths.items():
        if len(written) > 1:
            report.add(f"Numbers of prefix {prefix} are written with {' and '.join(map(str, sorted(written)))} "
                       f"digits ({', '.join(written[w] for w in sorted(written))}): read as one sequence and kept "
                       "as written; a cite must use the digits of the page it means.")


def text_file_pages(text: str) -> list[str]:
    """The pages of an extracted-text file, split at form feeds, without NULs or surrounding blanks. A form feed
    that ends the file ends its last page (many tools write one after every page) and starts no page of its own."""
    pages = text.replace("\x00", "").split("\f")
    if len(pages) > 1 and not pages[-1].strip():
        pages.pop()
    return [page.strip() for page in pages]


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(text)}


def texts_of_their_pages(first: str, own: list[str], loaded: list[str], report: Report) -> list[str | None]:
    """For each page, its load-file text (``loaded``), or None where the page's own text (``own``: its text
    layer or OCR, same order) has CHECK_MIN_WORDS words or more and under SAME_PAGE_MIN_SHARE of them are in the
    load-file text: that text belongs to another page (shifted, swapped or another document's), so the page
    keeps its own, and the report says which page and, where one fits, whose text it is."""
    own_words, loaded_words = [_words(text) for text in own], [_words(text) for text in loaded]
    result: list[str | None] = []
    for index, (words, text) in enumerate(zip(own_words, loaded)):
        if len(words) < CHECK_MIN_WORDS or _share(words, loaded_words[index]) >= SAME_PAGE_MIN_SHARE:
            result.append(text)
            continue
        result.append(None)
        fits = [k + 1 for k, other in enumerate(loaded_words) if k != index
                and _share(words, other) >= SAME_PAGE_MIN_SHARE]
        where = f"; it reads like the text file's page {fits[0]}" if len(fits) == 1 else ""
        report.add(f"{first}, page {index + 1}: the text file's page {index + 1} does not read like this page "
                   f"({_share(words, loaded_words[index]):.0%} of its words){where}. The page kept its own text.")
    return result


def _share(words: set[str], other: set[str]) -> float:
    return len(words & other) / len(words) if words else 1.0
