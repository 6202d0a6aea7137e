"""Model output that cannot be true: the prompt echoed back, one line, pattern or passage repeated, placeholder
values, an empty answer, an answer cut at its token budget.

A small model on a long prompt does each of these, and each came through as a ``done`` stage: a "draft" that was
the revise prompt echoed back, an extraction of twelve rows "amount a, source a". :func:`free_text_verdict` and
:func:`extraction_verdict` say whether an answer is unusable (the stage fails with the reason) or usable with a
warning (the stage is ``done`` and the reason is shown with it). Deterministic; no model.
"""

import re
import zlib
from collections import Counter
from dataclasses import dataclass

# An answer sharing this share of its 6-word runs with the prompt's own instructions is the prompt coming back.
ECHO_SHARE_FAIL = 0.5
ECHO_SHARE_WARN = 0.2
_SHINGLE_WORDS = 6
# One line making up this share of an answer's lines (and at least this many times) is a loop, not a document.
REPEATED_LINE_SHARE = 0.5
REPEATED_LINE_MIN = 3
# zlib compresses ordinary prose to 35-60 % of its size; a text looping on one pattern goes far under this.
PATTERN_RATIO = 0.12
_PATTERN_MIN_CHARS = 400
# While an answer streams, the same two rules stop it only past these sizes: the first lines of an ordinary answer
# (a heading over a list of payments) may repeat one line 4 times in 8 and still become a document, and a short
# start may compress well; half of 10 lines, or 2,000 characters under 12 %, is taken as a loop.
STREAM_MIN_LINES = 10
STREAM_MIN_CHARS = 2000
# A passage written again and again (a paragraph repeated four times passed both rules above: its lines differ
# and it compresses like prose): the share of the answer's 6-word runs that repeat an earlier run. One paragraph
# written twice stays under half (the runs across its seams are new); 14 court filings measured 0.00-0.09
# (docs/jobs.md, "Degenerate answers").
REPEATED_RUN_SHARE_FAIL = 0.5
REPEATED_RUN_SHARE_WARN = 0.25
_REPEATED_RUN_MIN_WORDS = 60
_WORD = re.compile(r"[a-z0-9]+")
# Placeholders a model writes where it has no value: template brackets, lorem ipsum, XX dates, "TBD", "N/A", and
# single letters or "value"/"source" standing for a value.
_PLACEHOLDER_TEXT = re.compile(
    r"\[(?:insert|name|date|amount|party|plaintiff|defendant|client|court|case|citation|cite|page|bates|"
    r"\.\.\.|x+|tbd)[^\]]{0,40}\]|\{\{[^}]{0,40}\}\}|<(?:insert|placeholder|name|date)[^>]{0,40}>|lorem ipsum|"
    r"\bxx/xx/xx(?:xx)?\b|\b(?:TBD|TKTK)\b",
    re.IGNORECASE,
)
_PLACEHOLDER_VALUE = re.compile(r"^\s*(?:[a-z]|value|amount|date|party|source|cite|string|example|placeholder|"
                                r"n/?a|none|null|tbd|unknown|x+|\.\.\.|\?+|-+)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """``fail``: why the answer cannot be used ('' when it can); ``warning``: what to check in a usable one;
    ``echo_share``: the share of a free-text answer that repeats the prompt's instructions (0-1)."""

    fail: str = ""
    warning: str = ""
    echo_share: float = 0.0


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i:i + _SHINGLE_WORDS]) for i in range(max(0, len(words) - _SHINGLE_WORDS + 1))}


def echo_share(answer: str, prompt: str) -> float:
    """The share (0-1) of ``answer``'s 6-word runs found in ``prompt``: 0 for an answer in its own words, near 1
    for the prompt coming back."""
    mine = _shingles(answer)
    if not mine:
        return 0.0
    return len(mine & _shingles(prompt)) / len(mine)


def _repeated_line(answer: str, min_lines: int) -> str:
    lines = [" ".join(line.split()) for line in answer.splitlines() if line.strip()]
    if len(lines) < max(min_lines, REPEATED_LINE_MIN):
        return ""
    line, count = Counter(lines).most_common(1)[0]
    if count >= REPEATED_LINE_MIN and count / len(lines) >= REPEATED_LINE_SHARE:
        return f"one line is repeated {count} times out of {len(lines)} (“{line[:80]}”)"
    return ""


def _looping(answer: str, min_chars: int) -> str:
    data = answer.encode("utf-8")
    if len(data) < min_chars:
        return ""
    ratio = len(zlib.compress(data, 9)) / len(data)
    if ratio < PATTERN_RATIO:
        return f"the text repeats one pattern (it compresses to {ratio:.0%} of its size; prose does not go under 30%)"
    return ""


def repeated_run_share(text: str) -> float:
    """The share (0-1) of ``text``'s 6-word runs that repeat a run before them: near 0 for prose, 0.75 for one
    paragraph written four times; 0 for a text under 60 words."""
    words = _WORD.findall(text.lower())
    if len(words) < _REPEATED_RUN_MIN_WORDS:
        return 0.0
    runs = [tuple(words[i:i + _SHINGLE_WORDS]) for i in range(len(words) - _SHINGLE_WORDS + 1)]
    return 1 - len(set(runs)) / len(runs)


def _repeated_passage(answer: str, min_chars: int) -> str:
    if len(answer) < min_chars:
        return ""
    share = repeated_run_share(answer)
    if share >= REPEATED_RUN_SHARE_FAIL:
        return f"{share:.0%} of it repeats passages written before it in the same answer"
    return ""


def _degeneration(answer: str, *, min_lines: int, min_chars: int) -> str:
    for problem in (_repeated_line(answer, min_lines), _looping(answer, min_chars),
                    _repeated_passage(answer, min_chars)):
        if problem:
            return f"The answer is degenerate: {problem}."
    return ""


def streaming_degeneration(text: str) -> str:
    """Why an answer still streaming is already unusable ('' while it may still become a document): the
    repeated-line and repeated-pattern rules of :func:`free_text_verdict`, applied to the text so far once it
    holds :data:`STREAM_MIN_LINES` non-blank lines (or :data:`STREAM_MIN_CHARS` characters for the pattern rule).
    The reason reads as the final check's would."""
    return _degeneration(text, min_lines=STREAM_MIN_LINES, min_chars=STREAM_MIN_CHARS)


def free_text_verdict(answer: str, *, instructions: str, finish_reason: str, max_tokens: int) -> Verdict:
    """Judge a free-text answer (a draft, a revision, a summary). ``instructions``: the prompt's own text (the
    template and the request, without the evidence packet or the draft being revised, which an answer may rightly
    quote); ``finish_reason``: the server's (``length`` = cut at the budget, per the OpenAI-compatible API that
    llama.cpp and Ollama serve); ``max_tokens``: the budget."""
    if not answer.strip():
        return Verdict(fail=f"The answer is empty (finish reason: {finish_reason or 'none'}).")
    share = echo_share(answer, instructions)
    if share >= ECHO_SHARE_FAIL:
        return Verdict(fail=f"The answer is the prompt coming back: {share:.0%} of it repeats the instructions.",
                       echo_share=share)
    if degenerate := _degeneration(answer, min_lines=REPEATED_LINE_MIN, min_chars=_PATTERN_MIN_CHARS):
        return Verdict(fail=degenerate, echo_share=share)
    warnings = []
    if share >= ECHO_SHARE_WARN:
        warnings.append(f"{share:.0%} of the answer repeats the instructions")
    if (repeated := repeated_run_share(answer)) >= REPEATED_RUN_SHARE_WARN:
        warnings.append(f"{repeated:.0%} of it repeats passages written before it")
    placeholders = sorted({m.group(0) for m in _PLACEHOLDER_TEXT.finditer(answer)})
    if placeholders:
        warnings.append(f"it holds placeholder text ({', '.join(placeholders[:5])})")
    if finish_reason == "length":
        warnings.append(f"it stopped at this stage's budget of {max_tokens} tokens and may be cut off")
    if not warnings:
        return Verdict(echo_share=round(share, 3))
    return Verdict(warning="Check this answer: " + "; ".join(warnings) + ".", echo_share=round(share, 3))


def extraction_verdict(items: list[dict], *, finish_reason: str, max_tokens: int) -> Verdict:
    """Judge an extraction's rows (``{"type", "value", "source"}``): all placeholders or one row repeated fails;
    some placeholder rows, or a cut answer, warn."""
    if not items:
        return Verdict(warning="The extractor listed no amount, date or party.")
    placeholder = [i for i in items if _PLACEHOLDER_VALUE.match(str(i.get("value", "")))
                   or _PLACEHOLDER_TEXT.search(str(i.get("value", "")))]
    rows = Counter((str(i.get("type")), " ".join(str(i.get("value", "")).split()).lower()) for i in items)
    row, count = rows.most_common(1)[0]
    if len(placeholder) == len(items):
        return Verdict(fail=f"Every one of the {len(items)} rows is a placeholder (such as “{items[0].get('value')}”), "
                            "not a value from the evidence.")
    if len(items) >= REPEATED_LINE_MIN and count / len(items) >= REPEATED_LINE_SHARE:
        return Verdict(fail=f"The extraction repeats one row {count} times out of {len(items)} (“{row[1][:60]}”).")
    warnings = []
    if placeholder:
        warnings.append(f"{len(placeholder)} of {len(items)} rows are placeholders")
    if finish_reason == "length":
        warnings.append(f"it stopped at this stage's budget of {max_tokens} tokens and may be cut off")
    return Verdict(warning="Check this answer: " + "; ".join(warnings) + ".") if warnings else Verdict()


# A field that is nothing but a bracketed token ("[<address>]", "<name>", "{party}"): a template slot, not words.
_BRACKETED_ONLY = re.compile(r"^\W*[\[<{]+[^\]>}]{0,40}[\]>}]+\W*$")
_ATTACK_LEAST_WORDS = 3


def placeholder_attack(attack: dict, anchored: bool) -> str:
    """Why an adversarial reviewer's attack (``{"quote", "attack", ...}``) is a placeholder rather than criticism
    ('' when it is criticism): its criticism under three words, a bracketed slot or a placeholder value; or a
    quote that is one while not found in the draft (``anchored``: the quote was found; a draft that holds
    "[<address>]" itself is rightly attacked for it)."""
    text = str(attack.get("attack", "")).strip()
    quote = str(attack.get("quote", "")).strip()
    if (len(_WORD.findall(text.lower())) < _ATTACK_LEAST_WORDS or _BRACKETED_ONLY.match(text)
            or _PLACEHOLDER_VALUE.match(text)):
        return "its criticism is empty or a placeholder"
    if not anchored and (_BRACKETED_ONLY.match(quote) or _PLACEHOLDER_VALUE.match(quote)
                         or _PLACEHOLDER_TEXT.fullmatch(quote)):
        return "it quotes a placeholder the draft does not hold"
    return ""


# A retry of an unusable answer changes what made it so: the same prompt under greedy decoding with the same seed
# brings the same answer back (llama.cpp and Ollama are deterministic there). The repeat penalty starts at
# RETRY_REPEAT_PENALTY (llama.cpp's default is 1.0, none; 1.1-1.2 is the range its docs suggest against loops) and
# rises by RETRY_REPEAT_PENALTY_STEP at each further retry, to RETRY_REPEAT_PENALTY_MAX (past it, prose loses its
# own common words). A seed counts only when the sampler may choose among tokens, so the retry samples at
# RETRY_TEMPERATURE over the RETRY_TOP_K likeliest tokens: low enough to keep to the evidence, and recorded.
# A model that looped or echoed its prompt did so once its answer ran long (the embedded model loops after a few
# hundred tokens of a long section), so the retry of a part of a document (a section, a draft, a summary) asks for
# half the answer, never under RETRY_LEAST_TOKENS: a shorter part written whole, not the same loop cut sooner.
RETRY_REPEAT_PENALTY = 1.15
RETRY_REPEAT_PENALTY_STEP = 0.1
RETRY_REPEAT_PENALTY_MAX = 1.5
RETRY_TEMPERATURE = 0.3
RETRY_TOP_K = 40
RETRY_LEAST_TOKENS = 128
_DEFAULT_SEED = 1234  # pipeline.llm.types.Sampling's; this module imports nothing of the client
_CAUSES = (("prompt coming back", "the last answer repeated the prompt"),
           ("placeholder", "the last answer held placeholders, not values"),
           ("is empty", "the last answer was empty"),
           ("repeat", "the last answer repeated itself"))
# The causes a shorter answer helps: a loop and an echo grow with the answer; an empty one does not.
_SHORTENED = ("the last answer repeated the prompt", "the last answer repeated itself")


def retry_change(error: str, sampling: dict, *, shorten: bool = False) -> dict:
    """What a new attempt changes after an attempt that failed with an unusable answer (``error``, its reason) under
    ``sampling`` (that attempt's recorded settings, :class:`pipeline.llm.types.Sampling` as a dict):
    ``{"sampling": {"seed", "temperature", "top_k", "repeat_penalty"[, "max_tokens"]}, "because": str,
    "note": str, "offer": str}``: the note kept on the new attempt's record and shown on its row of the job page
    ("Retried with a new seed at temperature 0.3, repeat penalty 1.15 and an answer budget of 256 tokens (half of
    512), because the last answer repeated itself"), and the offer shown beside "Run the stage again" before it
    ("A new attempt runs with ..."). ``shorten``: the stage writes a part whose answer may be shorter (a section, a
    draft, a summary; not a revision sized to what it revises): after a loop or an echo its budget is halved
    (``max_tokens``, at least :data:`RETRY_LEAST_TOKENS`), and otherwise the last attempt's budget is kept."""
    lowered = error.lower()
    because = next((cause for marker, cause in _CAUSES if marker in lowered), "the last answer could not be used")
    before = sampling.get("repeat_penalty")
    penalty = RETRY_REPEAT_PENALTY if not before or before < RETRY_REPEAT_PENALTY else min(
        round(before + RETRY_REPEAT_PENALTY_STEP, 2), RETRY_REPEAT_PENALTY_MAX)
    change = {"seed": int(sampling.get("seed") or _DEFAULT_SEED) + 1,
              "temperature": max(float(sampling.get("temperature") or 0.0), RETRY_TEMPERATURE),
              "top_k": max(int(sampling.get("top_k") or 1), RETRY_TOP_K), "repeat_penalty": penalty}
    settings = [f"a new seed at temperature {change['temperature']:g}"]
    shortened = because in _SHORTENED  # read before the penalty's note is added to it
    if before and penalty <= before:
        because += f"; the repeat penalty is already {before:g}, the most a retry sets"
    else:
        settings.append(f"repeat penalty {penalty:g}")
    budget = int(sampling.get("max_tokens") or 0)
    if shorten and shortened and budget > RETRY_LEAST_TOKENS:
        change["max_tokens"] = max(RETRY_LEAST_TOKENS, budget // 2)
        settings.append(f"an answer budget of {change['max_tokens']} tokens (half of {budget})")
    elif shorten and budget:
        # A budget a retry already cut stays cut: a new attempt without it went back to the stage's full budget,
        # the one the model looped at (a newcomer's conclusion, attempts 4 to 10 at 1,024 tokens after 256).
        change["max_tokens"] = budget
    listed = settings[0] if len(settings) == 1 else ", ".join(settings[:-1]) + " and " + settings[-1]
    return {"sampling": change, "because": because, "note": f"Retried with {listed}, because {because}",
            "offer": f"A new attempt runs with {listed}, because {because}"}
