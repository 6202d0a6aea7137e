"""Case, statute and rule citations checked against the matter's authorities. Part of
:class:`matters.drafts.verifier.check.Verification`.

An authority grounds a citation only when it is the cited opinion or provision (see
:mod:`matters.drafts.verifier.authorities`); one that merely cites it gives ``unverified_authority`` with "cited within
Exhibit N, p. X". A pin cite is checked against the authority (:mod:`matters.drafts.verifier.pins`): one outside the
opinion blocks; one that cannot be checked (the exhibit shows no reporter pagination, or is an excerpt without
the page) is ``pin_unchecked``: not blocking, with the reason, and not counted as a checked claim.
"""

from .authorities import (
    AuthorityDoc,
    case_cited_within,
    match_case,
    match_statute,
    statute_cited_within,
    volume_conflict,
)
from .citations import CaseMention
from .finding import Kind, Status
from .pins import check_pin
from .statutes import StatuteMention, UnreadableCite


def _full_cite(statute: StatuteMention) -> str:
    return statute.cite + "".join(f"({s})" for s in statute.subsections)


class AuthorityChecks:
    """The authority checks of a verification (mixed into ``Verification``)."""

    def _pin_note(self, case: CaseMention, target: CaseMention, doc: AuthorityDoc) -> tuple[Status, str]:
        """The status of ``case``, an authority the matter holds, by its pin cite (into the opinion ``target``
        cites in full), and what to say: ``grounded`` (no pin, or a pin in the opinion), ``ungrounded`` (outside
        it) or ``pin_unchecked`` (nothing in the exhibit to check it against)."""
        check = check_pin(case.pin_cite, target.page, doc, target.reporter_cite)
        if check is None:
            return Status.GROUNDED, ""
        status = {"outside": Status.UNGROUNDED, "unchecked": Status.PIN_UNCHECKED}.get(check.verdict, Status.GROUNDED)
        return status, " " + check.message

    def _check_cases(self, cases: list[CaseMention], only: set[int] | None = None
                     ) -> list[tuple[CaseMention, AuthorityDoc | None]]:
        """Judge ``cases`` (the draft's, in order; short forms resolved), or only those indexed in ``only``,
        which must hold every full citation a judged one refers to or follows."""
        kind = Kind.CASE_CITATION
        matched: dict[int, AuthorityDoc | None] = {}
        problems: dict[int, str] = {}
        out = []
        for i, case in enumerate(cases):
            if only is not None and i not in only:
                continue
            if case.form in ("record_id", "statute_id"):
                continue  # an "Id." referring to a record cite or a statute, checked with those
            if case.form in ("full", "unknown_reporter"):
                if case.problem:
                    problems[i] = case.problem
                    # A form no reader knows cannot be judged right or wrong: unreadable, blocking all the same.
                    self._finding(kind, Status.UNREADABLE if case.unreadable else Status.UNGROUNDED, case.start,
                                  case.end, case.problem, year=case.year)
                    out.append((case, None))
                    continue
                hit = match_case(case, self.authorities)
                if hit is None:
                    matched[i] = None
                    name = f"{case.name}, " if case.name else ""
                    within = case_cited_within(case, self.authorities)
                    outer = next((matched.get(j) for j in range(i - 1, -1, -1)
                                  if cases[j].form == "full" and not cases[j].in_parenthetical), None)
                    if within and case.in_parenthetical and outer is not None and within[0] is outer:
                        # "(quoting X)" after an authority the matter holds: that the authority quotes or cites X
                        # is the claim, and its text shows it.
                        doc, number = within
                        self._finding(kind, Status.GROUNDED, case.start, case.end,
                                      f"{name}{case.reporter_cite} is cited within Exhibit {doc.label} ({doc.title}), "
                                      f"p. {number}, the authority this parenthetical follows: that opinion quotes "
                                      "or cites it as said. The opinion itself is not in the matter, so a pin cite "
                                      "or quotation of it is checked only as the citing opinion gives it.",
                                      [doc.pages[number - 1][0]] if 0 < number <= len(doc.pages) else [])
                    elif within:
                        doc, number = within
                        self._finding(kind, Status.UNVERIFIED_AUTHORITY, case.start, case.end,
                                      f"{name}{case.reporter_cite} is cited within Exhibit {doc.label} ({doc.title}), "
                                      f"p. {number}; that exhibit is another opinion. Add the opinion itself to "
                                      "the matter as an authority, or confirm this citation with a reason.",
                                      [doc.pages[number - 1][0]] if 0 < number <= len(doc.pages) else [])
                    else:
                        self._finding(kind, Status.UNVERIFIED_AUTHORITY, case.start, case.end,
                                      f"No authority in this matter matches {name}{case.reporter_cite}. Add the "
                                      "opinion to the matter as an authority, or confirm this citation with a "
                                      "reason.")
                else:
                    doc, page_id, how = hit
                    shown = volume_conflict(case, doc) if how == "caption" else ""
                    if shown:
                        problems[i] = (f"The authority matching this caption, Exhibit {doc.label} ({doc.title}), is "
                                       f"reported in volume {shown} of {case.reporter}, not {case.volume}.")
                        self._finding(kind, Status.UNGROUNDED, case.start, case.end, problems[i], [page_id])
                        out.append((case, None))
                        continue
                    status, note = self._pin_note(case, case, doc)
                    matched[i] = doc
                    self._finding(kind, status, case.start, case.end,
                                  f"Matches authority Exhibit {doc.label} ({doc.title}) by its {how}." + note,
                                  [page_id], pin=case.pin_cite)
                out.append((case, matched[i]))
                continue
            target = case.antecedent
            if target is None:
                self._finding(kind, Status.UNVERIFIED_AUTHORITY, case.start, case.end,
                              f"“{case.text}” does not say which case it refers to (no earlier full citation "
                              "matches it).")
                out.append((case, None))
            elif target in problems:
                self._finding(kind, Status.UNGROUNDED, case.start, case.end,
                              f"Refers to {cases[target].text}, which is itself wrong: {problems[target]}")
                out.append((case, None))
            elif matched.get(target) is None:
                self._finding(kind, Status.UNVERIFIED_AUTHORITY, case.start, case.end,
                              f"Refers to {cases[target].text}, which no authority of this matter is.")
                out.append((case, None))
            else:
                doc = matched[target]
                status, note = self._pin_note(case, cases[target], doc)
                self._finding(kind, status, case.start, case.end,
                              f"Refers to {cases[target].text} (authority Exhibit {doc.label})." + note,
                              [doc.pages[0][0]], pin=case.pin_cite)
                out.append((case, doc))
        return out

    def _check_statute(self, statute: StatuteMention) -> AuthorityDoc | None:
        cite = _full_cite(statute)
        note = f" {statute.note}" if statute.note else ""
        hit = match_statute(statute, self.authorities)
        if hit is None:
            within = statute_cited_within(statute, self.authorities)
            if within:
                doc, number = within
                self._finding(Kind.STATUTE_CITATION, Status.UNVERIFIED_AUTHORITY, statute.start, statute.end,
                              f"{cite} is cited within Exhibit {doc.label} ({doc.title}), p. {number}, which is not "
                              "its text. Add the section itself (or the code or rules holding it) as an authority, "
                              "or confirm this citation with a reason." + note, cite=cite)
                return None
            what = ("the constitution (or the article or amendment)" if statute.form == "constitution"
                    else "the statute, regulation or rule")
            self._finding(Kind.STATUTE_CITATION, Status.UNVERIFIED_AUTHORITY, statute.start, statute.end,
                          f"No authority in this matter holds {cite}. Add {what} to the matter as an authority, or "
                          "confirm this citation with a reason." + note, cite=cite)
            return None
        doc, page_id = hit
        self._finding(Kind.STATUTE_CITATION, Status.GROUNDED, statute.start, statute.end,
                      f"{cite} is in authority Exhibit {doc.label} ({doc.title})." + note, [page_id], cite=cite)
        return doc

    def _unreadable_statute(self, cite: UnreadableCite) -> None:
        self._finding(Kind.STATUTE_CITATION, Status.UNREADABLE, cite.start, cite.end,
                      f"“{cite.text}” {cite.why}; LawDesk cannot tell what it cites. Write the full citation, or "
                      "waive this finding with a reason.")
