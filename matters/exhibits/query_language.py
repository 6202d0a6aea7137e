"""The search box's query language, as attorneys know it from review platforms (Relativity's and Everlaw's
dtSearch-style syntax), read once and translated for each engine. Django-free.

What a query may hold (docs/case-file.md, "Search syntax", says it for the reader):

- words, all required (``breach contract``); ``AND``, ``OR``, ``NOT`` and ``AND NOT`` in capitals. In lower case
  ``and``, ``or`` and ``not`` are words, as the search box has always read them (a quotation typed from a page
  holds them as words); review tools differ on this, and capitals are unambiguous in all of them;
- ``"a quoted phrase"``; an unclosed quotation mark opens no phrase;
- a hyphenated word, found in either form (``non-compete`` also finds ``noncompete``);
- a wildcard at the end of a word (``negligen*``: at least three letters before it), also inside a phrase's last
  word (``"breach of contr*"``);
- proximity ``w/N`` (within N words, either order) and ``pre/N`` (the first before the second, within N words),
  N from 1 to ``MAX_DISTANCE``, in any case (``W/5``, ``Pre/3``); ``w/1`` is next to each other. Their operands are
  words, wildcards, phrases, or alternatives in parentheses (``(lease OR tenancy) w/5 breach``);
- parentheses to group.

Precedence: proximity binds tightest, then ``NOT``, then ``AND`` (written or implied), then ``OR``. Review tools
disagree on whether ``AND`` or ``OR`` binds tighter (Westlaw's and Lexis's connectors read ``OR`` first), so a query
that mixes them without parentheses, or puts ``OR`` beside a proximity, is refused with a message saying how to
write it, rather than read one way silently. Other punctuation is ignored (a minus sign is not ``NOT``).

Proximity is counted in word positions: ``w/N`` holds where the two sides' positions differ by at most N (FTS5's
``NEAR(a b, N-1)``, PostgreSQL's ``<1>`` … ``<N>``), ``pre/N`` where the right side starts 1 to N positions after
the left ends. FTS5 also lets the two sides overlap (``tenant w/5 tenant`` finds one "tenant" there; PostgreSQL
needs two).

:func:`parse_query` returns an AST of the dataclasses below, or None when nothing is left to search for; errors a
user can make raise :class:`QuerySyntaxError` with a message written for an attorney. :func:`fts5_match` and
:func:`tsquery` translate the AST; :func:`page_matches` evaluates it on a page's text, for the ordered proximity
SQLite's FTS5 cannot express (its ``NEAR`` is unordered: the candidates come from ``NEAR``, the order is checked
here on the page's words, stemmed with snowballstemmer's ``porter``, the algorithm of FTS5's porter tokenizer).

Stemming and wildcards: both indexes hold word stems, so a wildcard is matched against stems (``negligen*`` would
miss ``negligence``, stored as ``neglig``). :func:`prefix_forms` adds the stems of the wildcard's likely
completions (``negligence``, ``negligent``), so a wildcard finds what its letters begin.
"""

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from .reading import HYPHENATED, reading_form

MAX_DISTANCE = 50
MIN_PREFIX_LETTERS = 3
# Words, wildcards and phrases in one query: past this the query is refused (the search box takes 500 characters).
MAX_TERMS = 64
# Pairs of alternatives one proximity may expand to on SQLite, whose NEAR takes phrases only.
MAX_NEAR_PAIRS = 64
# Tokens (words, phrases, operators, parentheses) and parentheses inside each other: bounds on the parser's work
# and recursion whatever is typed.
MAX_TOKENS = 4 * MAX_TERMS
MAX_DEPTH = 16


class QuerySyntaxError(ValueError):
    """A query the search box cannot read; ``str()`` is a message for the attorney who typed it."""


class _OperatorError(QuerySyntaxError):
    """An operator of another syntax (``NEAR``): alone, it leaves nothing to search for."""


@dataclass(frozen=True)
class Term:
    """A word (``\\w+`` in reading form, lower case); ``prefix``: a wildcard, the word's letters begin the word."""

    word: str
    prefix: bool = False


@dataclass(frozen=True)
class Phrase:
    """Words in order, next to each other; ``prefix``: the last word is a wildcard."""

    words: tuple[str, ...]
    prefix: bool = False


@dataclass(frozen=True)
class And:
    children: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    children: tuple["Node", ...]


@dataclass(frozen=True)
class Not:
    """Pages without ``child``; only ever a child of :class:`And` beside something positive."""

    child: "Node"


@dataclass(frozen=True)
class Near:
    """``left`` within ``distance`` words of ``right`` (their positions differ by at most ``distance``; 1 is
    next to each other); ``ordered``: ``left`` comes first (``pre/N``). Operands: Term, Phrase, or Or of those."""

    left: "Node"
    right: "Node"
    distance: int
    ordered: bool


Node = Term | Phrase | And | Or | Not | Near

# ---- tokens ----------------------------------------------------------------------------------------------------

_WORD_CHARS = r"[^\W_]"  # letters and digits: FTS5's unicode61 and PostgreSQL's parser both split at "_"
_TOKEN = re.compile(rf"""
    (?P<phrase>"[^"]*")
  | (?P<open>\()
  | (?P<close>\))
  | (?P<near>(?<!{_WORD_CHARS})(?:[wW]|[pP][rR][eE])/[^\s()"]*)
  | (?P<word>{_WORD_CHARS}+(?:-{_WORD_CHARS}+)*)(?P<star>\*+)?
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)
_WORDS = re.compile(rf"{_WORD_CHARS}+")
_PHRASE_WORD = re.compile(rf"({_WORD_CHARS}+)(\*+)?")
_OPERATORS = {"AND", "OR", "NOT"}
_HELP = "as in breach w/5 contract"


@dataclass(frozen=True)
class _Token:
    kind: str  # "operand", "(", ")", "AND", "OR", "NOT", "NEAR"; "unread": a word or phrase in error
    text: str
    node: Node | None = None
    distance: int = 0
    ordered: bool = False


def _quoted(text: str) -> str:
    return f"“{text}”"


def _operand_of_word(word: str, prefix: bool) -> Node:
    """A word as typed outside quotes: a hyphenated word of letters is the OR of its two forms (as phrases), a
    word of parts with digits (``2024-05``) its parts, all required, as the search box has read them."""
    word = word.lower()
    parts = word.split("-")
    if len(parts) == 1:
        return Term(word, prefix)
    if HYPHENATED.fullmatch(word):
        return Or((Phrase(tuple(parts), prefix), Term("".join(parts), prefix)))
    return _Parts(tuple(Term(part, prefix and i == len(parts) - 1) for i, part in enumerate(parts)))


def _phrase(body: str) -> Node | None:
    """The operand of a quoted phrase, or None when it holds no word (``""``, ``"--"``)."""
    found = _PHRASE_WORD.findall(body)
    if not found:
        return None
    if any(star for _, star in found[:-1]) or re.search(rf"\*{_WORD_CHARS}", body):
        raise QuerySyntaxError(f"In the phrase {_quoted(body)} a wildcard * can end only the last word "
                               "(as in \"breach of contr*\"): remove the other *.")
    words = tuple(word.lower() for word, _ in found)
    prefix = bool(found[-1][1])
    if prefix:
        _check_prefix(words[-1])
    return Term(words[0], prefix) if len(words) == 1 else Phrase(words, prefix)


def _check_prefix(word: str) -> None:
    if len(word) < MIN_PREFIX_LETTERS:
        raise QuerySyntaxError(f"{_quoted(word + '*')}: a wildcard needs at least {MIN_PREFIX_LETTERS} letters "
                               "before the *, as in negligen*.")


def _near_token(text: str) -> _Token:
    operator, _, number = text.partition("/")
    name = operator.lower() + "/"
    if not re.fullmatch(r"[0-9]{1,3}", number):
        raise QuerySyntaxError(f"{_quoted(text)}: {name} needs a number of words right after it, with no space, "
                               f"{_HELP if name == 'w/' else 'as in offer pre/3 accept'}.")
    distance = int(number)
    if not 1 <= distance <= MAX_DISTANCE:
        raise QuerySyntaxError(f"{_quoted(text)}: a proximity search reaches from 1 to {MAX_DISTANCE} words; "
                               "use a number in that range.")
    return _Token("NEAR", f"{name}{distance}", distance=distance, ordered=name == "pre/")


def tokenize(query: str) -> tuple[list[_Token], list[QuerySyntaxError]]:
    """The tokens of ``query`` (read in reading form, so curly quotes are quotes): operands (words, phrases,
    hyphenated words), parentheses and operators; other characters are dropped. Also what cannot be read, in
    order: :func:`parse_query` reports the first, unless nothing at all is left to search for."""
    tokens: list[_Token] = []
    errors: list[QuerySyntaxError] = []
    text = reading_form(query)
    for match in _TOKEN.finditer(text):
        try:
            token = _token(match, text)
        except QuerySyntaxError as error:
            errors.append(error)
            if match.lastgroup in ("phrase", "word", "star") and not isinstance(error, _OperatorError):
                # a word or phrase typed wrong is still something to find: its message, not "nothing to search"
                tokens.append(_Token("unread", match.group(0)))
            continue
        if token is not None:
            tokens.append(token)
    return tokens, errors


def _token(match: re.Match, text: str) -> _Token | None:
    kind = "word" if match.lastgroup == "star" else match.lastgroup
    value = match.group(0)
    after = text[match.end():match.end() + 1]
    if kind == "phrase":
        if after == "*":
            raise QuerySyntaxError(f"{value}*: a wildcard after the closing quotation mark ends no word; put it "
                                   f"on the phrase's last word, inside the marks, as in \"breach of contr*\".")
        node = _phrase(value[1:-1])
        return None if node is None else _Token("operand", value, node)
    if kind in ("open", "close"):
        return _Token(value, value)
    if kind == "near":
        return _near_token(value)
    if kind == "word":
        word, star = match.group("word"), match.group("star")
        if star and after.isalnum():
            raise QuerySyntaxError(f"{_quoted(value)}…: a wildcard * works only at the end of a word, "
                                   "as in negligen*.")
        if word in _OPERATORS:
            return _Token(word, word)
        if word == "NEAR":
            raise _OperatorError("NEAR is not an operator of this search box: use w/5 (within 5 words, "
                                   "either order) or pre/5 (the first within 5 words before the second).")
        if star:
            _check_prefix(word.split("-")[-1])
        return _Token("operand", value, _operand_of_word(word, bool(star)))
    if value == "*" and after.isalnum():
        raise QuerySyntaxError("A wildcard * works only at the end of a word, as in negligen*; "
                               "a word cannot begin with it.")
    if value == "?" and match.start() > 0 and text[match.start() - 1].isalnum() and after.isalnum():
        raise QuerySyntaxError("The ? wildcard (one letter) is not supported: end the word with * instead, "
                               "as in neglig*.")
    return None


# ---- parser ----------------------------------------------------------------------------------------------------

_MIXED = ("This search mixes AND and OR without parentheses, which review tools read differently: add "
          "parentheses, as in (tenant AND landlord) OR lessor, or tenant AND (landlord OR lessor). Words side by "
          "side count as AND.")
_OR_BESIDE_NEAR = ("OR beside {op} needs parentheses, which review tools read differently: write (lease OR "
                   "tenancy) {op} breach, or lease OR (tenancy {op} breach).")
_NEAR_OPERAND = ("{op} joins two words, wildcards or phrases (or alternatives in parentheses, as in (lease OR "
                 "tenancy) {op} breach); it cannot take AND, NOT or another proximity: split the search.")


class _Parser:
    """Recursive descent over the tokens: or := and (OR and)*; and := unary (AND? unary)*; unary := NOT unary |
    near; near := primary ((w/N | pre/N) primary)?; primary := operand | "(" or ")"."""

    def __init__(self, tokens: list[_Token]):
        self.tokens = tokens
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i].kind if self.i < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def parse(self) -> Node:
        node = self.or_expr()
        if self.peek() == ")":
            raise QuerySyntaxError("A closing parenthesis “)” has no “(” before it: remove it or add the “(”.")
        if self.peek() is not None:  # an operator the loops above could not place
            raise self.dangling(self.take())
        return node

    def dangling(self, token: _Token) -> QuerySyntaxError:
        if token.kind == "NEAR":
            return QuerySyntaxError(f"{_quoted(token.text)} needs a word or phrase on each side, {_HELP}.")
        if token.kind == "NOT":
            return QuerySyntaxError("NOT needs a word or phrase after it, as in lease NOT sublease.")
        return QuerySyntaxError(f"{token.kind} needs a word or phrase on each side, as in tenant {token.kind} "
                                "landlord.")

    def or_expr(self) -> Node:
        groups = [self.and_expr()]
        while self.peek() == "OR":
            self.take()
            groups.append(self.and_expr())
        if len(groups) > 1 and any(isinstance(g, And) and not getattr(g, "grouped", False) for g in groups):
            raise QuerySyntaxError(_MIXED)
        return groups[0] if len(groups) == 1 else Or(tuple(_flatten(Or, groups)))

    def and_expr(self) -> Node:
        children = [self.unary()]
        while self.peek() in ("AND", "NOT", "operand", "("):
            if self.peek() == "AND":
                self.take()
            children.append(self.unary())
        return children[0] if len(children) == 1 else And(tuple(_flatten(And, children)))

    def unary(self) -> Node:
        if self.peek() == "NOT":
            self.take()
            return Not(self.unary())
        return self.near()

    def near(self) -> Node:
        start = self.i
        left = self.primary()
        if self.peek() != "NEAR":
            return left
        operator = self.take()
        left, right = _near_side(left), _near_side(self.primary())
        after = self.peek()
        if (start > 0 and self.tokens[start - 1].kind == "OR") or after == "OR":
            raise QuerySyntaxError(_OR_BESIDE_NEAR.format(op=operator.text))
        if after == "NEAR" or not (_near_operand(left) and _near_operand(right)):
            raise QuerySyntaxError(_NEAR_OPERAND.format(op=operator.text))
        if len(_fts5_alternatives(left)) * len(_fts5_alternatives(right)) > MAX_NEAR_PAIRS:
            raise QuerySyntaxError(f"{_quoted(operator.text)} has too many alternatives on its two sides "
                                   "(wildcards, hyphenated words, words in parentheses): make one side a single "
                                   "word or phrase.")
        return Near(left, right, operator.distance, operator.ordered)

    def primary(self) -> Node:
        kind = self.peek()
        if kind == "operand":
            return self.take().node
        if kind == "(":
            self.take()
            if self.peek() == ")":
                raise QuerySyntaxError("Parentheses with nothing between them: put words inside or remove them.")
            node = self.or_expr()
            if self.peek() != ")":
                if self.peek() is None:
                    raise QuerySyntaxError("A parenthesis “(” is never closed: add the “)” or remove the “(”.")
                raise self.dangling(self.take())
            self.take()
            return _grouped(node)
        if kind is None:
            previous = self.tokens[self.i - 1]  # there is one: a query holds an operand
            if previous.kind == "(":
                raise QuerySyntaxError("A parenthesis “(” is never closed: add the “)” or remove the “(”.")
            raise self.dangling(previous)
        if kind == ")":
            previous = self.tokens[self.i - 1] if self.i else None
            if previous is None or previous.kind == "(":
                raise QuerySyntaxError("A closing parenthesis “)” has no “(” before it: remove it or add the “(”.")
            raise self.dangling(previous)
        raise self.dangling(self.take())


class _Parts(And):
    """The parts of a word with digits (``2024-05``), all required; inside a proximity, a phrase. One word typed:
    it may stand beside OR."""

    grouped = True


def _near_side(node: Node) -> Node:
    if isinstance(node, _Parts):
        return Phrase(tuple(t.word for t in node.children), node.children[-1].prefix)
    if isinstance(node, Or):
        return Or(tuple(_near_side(c) for c in node.children))
    return node


class _GroupedAnd(And):
    """An And written in parentheses: it may stand beside OR without ambiguity."""

    grouped = True


def _grouped(node: Node) -> Node:
    return _GroupedAnd(node.children) if type(node) is And else node


def _flatten(kind: type, children: list[Node]) -> list[Node]:
    flat: list[Node] = []
    for child in children:
        flat.extend(child.children if isinstance(child, kind) else [child])
    return flat


def _near_operand(node: Node) -> bool:
    return isinstance(node, Term | Phrase) or (isinstance(node, Or) and all(_near_operand(c) for c in node.children))


def _plain(node: Node) -> Node:
    """``node`` with grouping marks dropped (a :class:`_GroupedAnd` is an :class:`And` again)."""
    match node:
        case And(children=children):
            return And(tuple(_plain(c) for c in children))
        case Or(children=children):
            return Or(tuple(_plain(c) for c in children))
        case Not(child=child):
            return Not(_plain(child))
        case Near(left=left, right=right):
            return Near(_plain(left), _plain(right), node.distance, node.ordered)
    return node


def _check_positive(node: Node) -> None:
    """Refuse what would match nearly every page or that neither engine can answer from its index: a query, an
    alternative of OR, or what NOT excludes, made only of NOT."""
    match node:
        case Not():
            raise QuerySyntaxError("A search cannot be only NOT: say what to find as well, as in lease NOT "
                                   "sublease.")
        case And(children=children):
            positive = [c for c in children if not isinstance(c, Not)]
            if not positive:
                raise QuerySyntaxError("A search cannot be only NOT: say what to find as well, as in lease NOT "
                                       "sublease.")
            for child in children:
                _check_positive(child.child if isinstance(child, Not) else child)
        case Or(children=children):
            for child in children:
                if isinstance(child, Not):
                    raise QuerySyntaxError("NOT cannot be one of the alternatives of OR (it would match nearly "
                                           "every page): put it beside what to find, as in (lease OR tenancy) "
                                           "NOT sublease.")
                _check_positive(child)


def _terms(node: Node) -> int:
    match node:
        case And(children=children) | Or(children=children):
            return sum(_terms(c) for c in children)
        case Not(child=child):
            return _terms(child)
        case Near(left=left, right=right):
            return _terms(left) + _terms(right)
    return 1


def parse_query(query: str) -> Node | None:
    """Read ``query`` in the search box's language (the module docstring). Returns None when it holds nothing to
    search for (only operators, punctuation, empty quotes); raises :class:`QuerySyntaxError` when it cannot be
    read."""
    tokens, errors = tokenize(query)
    if not any(t.kind in ("operand", "unread") for t in tokens):
        return None
    if errors:
        raise errors[0]
    if len(tokens) > MAX_TOKENS or sum(_terms(t.node) for t in tokens if t.node is not None) > MAX_TERMS:
        raise QuerySyntaxError(f"This search is too long (more than {MAX_TERMS} words and phrases, or "
                               f"{MAX_TOKENS} words and operators): shorten it.")
    depth = deepest = 0
    for token in tokens:
        depth += {"(": 1, ")": -1}.get(token.kind, 0)
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        raise QuerySyntaxError(f"This search has more than {MAX_DEPTH} parentheses inside each other: "
                               "simplify it.")
    node = _plain(_Parser(tokens).parse())
    _check_positive(node)
    return node


def plain_query(phrases: list[list[str]], compounds: list[list[list[str]]], words: list[str]) -> Node:
    """The AST of the search box's former reading (every part required), for callers that pass free text rather
    than a query (:func:`matters.exhibits.search.matter_search` when the text is no valid query)."""
    parts: list[Node] = [Phrase(tuple(w.lower() for w in p)) if len(p) > 1 else Term(p[0].lower()) for p in phrases]
    for forms in compounds:
        parts.append(Or(tuple(Phrase(tuple(w.lower() for w in f)) if len(f) > 1 else Term(f[0].lower())
                              for f in forms)))
    parts += [Term(w.lower()) for w in words]
    parts = list(dict.fromkeys(parts))  # a word said twice is asked for once
    return parts[0] if len(parts) == 1 else And(tuple(parts))


# ---- stems and wildcards ---------------------------------------------------------------------------------------

_STEMMERS = {name: snowballstemmer.stemmer(name) for name in ("porter", "english")}
# Suffixes (and chains of them) that the Porter and Snowball stemmers strip: a wildcard's letters may end inside
# one (``negligen`` + ``ce``), and then the stem of the whole word is shorter than the letters typed.
_SUFFIXES = (
    "s es ed ing ings ly e er ers ence ences ency ent ently ents ance ances ancy ant ants ment ments ation ations "
    "ational ative ator ators ion ions ive ively iveness ivity ity ities al ally alism alize ality able ably ability "
    "ible ibly ibility ness ize izes ized izing ization ise ised ising ful fully fulness ous ously ousness ic ical "
    "ically icity ism ist ists y ies ied ate ates ated ating ement ements"
).split()
# FTS5's porter tokenizer leaves tokens shorter than 3 or longer than 64 bytes as they are (fts5_tokenize.c).
_PORTER_MIN, _PORTER_MAX = 3, 64


@lru_cache(maxsize=65536)
def stem(word: str, algorithm: str = "porter") -> str:
    """``word`` (lower case) stemmed as the index stems it: ``porter`` as SQLite's FTS5 porter tokenizer does,
    ``english`` as PostgreSQL's ``english`` configuration (Snowball) does."""
    if algorithm == "porter" and not _PORTER_MIN <= len(word.encode()) <= _PORTER_MAX:
        return word
    return _STEMMERS[algorithm].stemWord(word)


@lru_cache(maxsize=4096)
def prefix_forms(letters: str, algorithm: str = "porter") -> tuple[str, ...]:
    """Words beginning with ``letters`` whose stem does not begin with the stem of ``letters``, one per stem:
    what a wildcard must also ask the index for, since the index holds stems (``negligen`` -> ``negligence``,
    stored as ``neglig``). A form may also find a word of the same stem that does not begin with the letters
    (``negligible``), as a plain word finds the other words of its stem."""
    if len(letters) > _PORTER_MAX:  # no word; and stemming each long completion would cost more than it finds
        return ()
    own = stem(letters, algorithm)
    forms: dict[str, str] = {}
    for suffix in _SUFFIXES:
        for cut in range(len(suffix)):
            if letters.endswith(suffix[:cut]):
                word = letters + suffix[cut:]
                forms.setdefault(stem(word, algorithm), word)
    return tuple(sorted(word for stemmed, word in forms.items() if not stemmed.startswith(own)))


# ---- translation: SQLite FTS5 ----------------------------------------------------------------------------------

def _fts5_alternatives(node: Node) -> list[str]:
    """The FTS5 phrases (``"word"``, ``"two words"``, ``"negligen"*``) any one of which is ``node``."""
    match node:
        case Term(word=word, prefix=False):
            return [f'"{word}"']
        case Term(word=word, prefix=True):
            return [f'"{word}"*'] + [f'"{form}"' for form in prefix_forms(word)]
        case Phrase(words=words, prefix=False):
            return [f'"{" ".join(words)}"']
        case Phrase(words=words, prefix=True):
            head = " ".join(words[:-1])
            return [f'"{" ".join(words)}"*'] + [f'"{head} {form}"' for form in prefix_forms(words[-1])]
        case Or(children=children):
            return [alternative for child in children for alternative in _fts5_alternatives(child)]
    raise AssertionError(f"not an operand: {node!r}")


def fts5_match(node: Node) -> str:
    """``node`` as an FTS5 MATCH expression. Every word is quoted, so nothing typed is read as FTS5 syntax.
    ``pre/N`` becomes the unordered ``NEAR``: its order is checked afterwards (:func:`page_matches`)."""
    match node:
        case Term() | Phrase():
            alternatives = _fts5_alternatives(node)
            return alternatives[0] if len(alternatives) == 1 else "(" + " OR ".join(alternatives) + ")"
        case And(children=children):
            positive = [fts5_match(c) for c in children if not isinstance(c, Not)]
            negative = [fts5_match(c.child) for c in children if isinstance(c, Not)]
            expression = "(" + " AND ".join(positive) + ")"
            return "(" + expression + "".join(f" NOT {n}" for n in negative) + ")" if negative else expression
        case Or(children=children):
            return "(" + " OR ".join(fts5_match(c) for c in children) + ")"
        case Near(left=left, right=right, distance=distance):
            pairs = [(a, b) for a in _fts5_alternatives(left) for b in _fts5_alternatives(right)]
            return "(" + " OR ".join(f"NEAR({a} {b}, {distance - 1})" for a, b in pairs) + ")"
    raise QuerySyntaxError("A search cannot be only NOT: say what to find as well, as in lease NOT sublease.")


def has_ordered_near(node: Node) -> bool:
    """Whether ``node`` holds a ``pre/N``, which FTS5 answers only with :func:`page_matches` after it."""
    match node:
        case Near(ordered=ordered):
            return ordered
        case And(children=children) | Or(children=children):
            return any(has_ordered_near(c) for c in children)
        case Not(child=child):
            return has_ordered_near(child)
    return False


def relaxed(node: Node) -> Node:
    """A query matching every page ``node`` matches, which FTS5 can answer: ``pre/N`` read as ``w/N``, and what
    NOT excludes dropped where it holds a ``pre/N`` (an unordered proximity would exclude too much)."""
    match node:
        case Near():
            return Near(node.left, node.right, node.distance, False)
        case And(children=children):
            kept = [relaxed(c) for c in children if not (isinstance(c, Not) and has_ordered_near(c.child))]
            return kept[0] if len(kept) == 1 else And(tuple(kept))
        case Or(children=children):
            return Or(tuple(relaxed(c) for c in children))
    return node


# ---- translation: PostgreSQL tsquery ---------------------------------------------------------------------------

def _lexeme(word: str, prefix: bool = False) -> str:
    """A word quoted for ``to_tsquery``: words hold letters and digits only, so no quotation mark or backslash
    needs escaping; ``to_tsquery`` stems it with the configuration."""
    return f"'{word}'" + (":*" if prefix else "")


def _ts_operand(node: Node) -> str:
    match node:
        case Term(word=word, prefix=prefix):
            if not prefix:
                return _lexeme(word)
            return "(" + " | ".join([_lexeme(word, True)] + [_lexeme(f) for f in prefix_forms(word, "english")]) + ")"
        case Phrase(words=words, prefix=prefix):
            return "(" + " <-> ".join([*map(_lexeme, words[:-1]), _ts_operand(Term(words[-1], prefix))]) + ")"
        case Or(children=children):
            return "(" + " | ".join(_ts_operand(c) for c in children) + ")"
    raise AssertionError(f"not an operand: {node!r}")


def tsquery(node: Node) -> str:
    """``node`` as the text of a PostgreSQL ``to_tsquery('english', …)``. ``<N>`` is "exactly N apart", so
    ``w/N`` is the OR of ``<1>`` … ``<N>`` both ways and ``pre/N`` the OR of ``<1>`` … ``<N>`` one way."""
    match node:
        case Term() | Phrase():
            return _ts_operand(node)
        case And(children=children):
            return "(" + " & ".join(f"!{tsquery(c.child)}" if isinstance(c, Not) else tsquery(c)
                                    for c in children) + ")"
        case Or(children=children):
            return "(" + " | ".join(tsquery(c) for c in children) + ")"
        case Near(left=left, right=right, distance=distance, ordered=ordered):
            a, b = _ts_operand(left), _ts_operand(right)
            ways = [(a, b)] if ordered else [(a, b), (b, a)]
            return "(" + " | ".join(f"{x} <{k}> {y}" for k in range(1, distance + 1) for x, y in ways) + ")"
    raise QuerySyntaxError("A search cannot be only NOT: say what to find as well, as in lease NOT sublease.")


def _leaves(node: Node) -> list[Node]:
    """The words and phrases ``node`` looks for (not those NOT excludes), once each, in order."""
    leaves: dict[Node, None] = {}

    def collect(part: Node) -> None:
        match part:
            case Term() | Phrase():
                leaves.setdefault(part)
            case And(children=children) | Or(children=children):
                for child in children:
                    if not isinstance(child, Not):
                        collect(child)
            case Near(left=left, right=right):
                collect(left)
                collect(right)

    collect(node)
    return list(leaves)


def highlight_tsquery(node: Node) -> str:
    """The text of a ``to_tsquery`` for marking matched words in a snippet (``ts_headline``): the OR of the words
    and phrases ``node`` looks for, without its proximities and NOTs. ``ts_headline`` with the query itself took
    seconds per page for a ``w/50`` of alternatives (it tries the whole query on every fragment)."""
    return " | ".join(_ts_operand(leaf) for leaf in _leaves(node))


def highlight_fts5(node: Node) -> str:
    """The FTS5 expression for marking matched words in a snippet: the OR of the words and phrases ``node`` looks
    for. FTS5's ``snippet()`` of SQLite 3.40 fails ("database disk image is malformed") on some ``NEAR`` of
    overlapping phrases (``NEAR("tenant" "lease", 7) OR NEAR("tenant tenant" "lease", 7)``); this has none."""
    return "(" + " OR ".join(a for leaf in _leaves(node) for a in _fts5_alternatives(leaf)) + ")"


# ---- evaluation on a page's text (SQLite's pre/N) ---------------------------------------------------------------

def _fold(text: str) -> str:
    """Lower case without diacritics, as FTS5's ``unicode61 remove_diacritics 2`` reads a token."""
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


class PageWords:
    """A page's words as FTS5's porter tokenizer indexes them (letters and digits, folded, stemmed), with the
    positions of each stem; with ``letters`` (:func:`first_letters`), only of the words that begin so, since a
    stem begins with its word's first letter (the Porter stemmer changes only endings). Stemming is what costs:
    about a third of the words of a page begin with the letters of a two-word query."""

    def __init__(self, text: str, letters: frozenset[str] | None = None):
        self.positions: dict[str, list[int]] = {}
        tokens = _WORDS.findall(text)
        if letters is None:
            kept = enumerate(tokens)
        elif text.isascii():
            kept = [(i, token) for i, token in enumerate(tokens) if token[0] in letters]
        else:
            kept = [(i, token) for i, token in enumerate(tokens)
                    if token[0] in letters or (not token[0].isascii() and _fold(token[0])[:1] in letters)]
        for position, token in kept:
            self.positions.setdefault(_index_stem(token), []).append(position)

    def of_word(self, word: str, prefix: bool) -> set[int]:
        """Positions of ``word`` (as the index stems a query word; with ``prefix``, of stems beginning with its
        stem, or equal to the stem of one of its :func:`prefix_forms`)."""
        stems = _query_stems(word)
        if len(stems) != 1:  # a query word FTS5 splits (rare: a letter that folds apart) is read as a phrase
            return {s for s, _ in self.of_phrase(tuple(stems), prefix)}
        own = stems[0]
        if not prefix:
            return set(self.positions.get(own, ()))
        wanted = {_index_stem(form) for form in prefix_forms(word)}
        return {p for s, ps in self.positions.items() if s.startswith(own) or s in wanted for p in ps}

    def of_phrase(self, words: tuple[str, ...], prefix: bool) -> set[tuple[int, int]]:
        """(first, last) positions of each occurrence of the phrase."""
        starts = self.of_word(words[0], prefix and len(words) == 1)
        for offset, word in enumerate(words[1:], start=1):
            following = self.of_word(word, prefix and offset == len(words) - 1)
            starts = {s for s in starts if s + offset in following}
        return {(s, s + len(words) - 1) for s in starts}

    def spans(self, node: Node) -> set[tuple[int, int]]:
        match node:
            case Term(word=word, prefix=prefix):
                return {(p, p) for p in self.of_word(word, prefix)}
            case Phrase(words=words, prefix=prefix):
                return self.of_phrase(words, prefix)
            case Or(children=children):
                return set().union(*(self.spans(c) for c in children))
        raise AssertionError(f"not an operand: {node!r}")


@lru_cache(maxsize=1024)
def first_letters(node: Node) -> frozenset[str]:
    """The first letters (folded, in both cases) of the stems ``node`` looks for: all :class:`PageWords` needs."""
    letters: set[str] = set()

    def collect(part: Node) -> None:
        match part:
            case Term(word=word):
                letters.update(s[:1] for s in _query_stems(word))
            case Phrase(words=words):
                for word in words:
                    letters.update(s[:1] for s in _query_stems(word))
            case And(children=children) | Or(children=children):
                for child in children:
                    collect(child)
            case Not(child=child):
                collect(child)
            case Near(left=left, right=right):
                collect(left)
                collect(right)

    collect(node)
    return frozenset(letters | {letter.upper() for letter in letters})


@lru_cache(maxsize=65536)
def _index_stem(token: str) -> str:
    return stem(_fold(token))


def _query_stems(word: str) -> list[str]:
    return [_index_stem(token) for token in _WORDS.findall(_fold(word))] or [""]


def _near(left: set[tuple[int, int]], right: set[tuple[int, int]], distance: int, ordered: bool) -> bool:
    """Whether spans of ``left`` and ``right`` lie within ``distance``. Ordered (``pre/N``), as PostgreSQL's
    ``<k>``: ``right`` starts 1 to ``distance`` words after ``left`` ends. Unordered (``w/N``), as FTS5's
    ``NEAR(a b, N-1)`` (``fts5ExprNearIsMatch``), so that a ``w/N`` is read alike with or without a ``pre/N``
    beside it: the later start at most ``distance`` after the other's end, overlapping spans included."""
    for first_start, first_end in left:
        for second_start, second_end in right:
            if ordered:
                if 1 <= second_start - first_end <= distance:
                    return True
            elif (second_start - first_end if first_start <= second_start
                  else first_start - second_end) <= distance:
                return True
    return False


def page_matches(node: Node, words: PageWords) -> bool:
    """Whether a page (its :class:`PageWords`) matches ``node``: the check after FTS5's candidates for a query
    with ``pre/N``. It reads the page as FTS5's porter tokenizer does; on a page where the two tokenizers
    disagree (a token FTS5 cuts elsewhere) it may differ from the index in a single word."""
    match node:
        case Term() | Phrase():
            return bool(words.spans(node))
        case And(children=children):
            return all(not page_matches(c.child, words) if isinstance(c, Not) else page_matches(c, words)
                       for c in children)
        case Or(children=children):
            return any(page_matches(c, words) for c in children)
        case Near(left=left, right=right, distance=distance, ordered=ordered):
            return _near(words.spans(left), words.spans(right), distance, ordered)
    return False
