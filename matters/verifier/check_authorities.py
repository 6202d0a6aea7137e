"""Case, statute and rule citations checked against the matter's authorities. Part of
:class:`matters.verifier.check.Verification`."""

from .authorities import AuthorityDoc, match_case, match_statute, volume_conflict
from .citations import CaseMention, StatuteMention
from .finding import Kind, Status


class AuthorityChecks:
    """The authority checks of a verification (mixed into ``Verification``)."""

    def _check_cases(self, cases: list[CaseMention]) -> list[tuple[CaseMention, AuthorityDoc | None]]:
        kind = Kind.CASE_CITATION
        matched: dict[int, AuthorityDoc | None] = {}
        problems: dict[int, str] = {}
        out = []
        for i, case in enumerate(cases):
            if case.form in ("full", "unknown_reporter"):
                if case.problem:
                    problems[i] = case.problem
                    self._finding(kind, Status.UNGROUNDED, case.start, case.end, case.problem, year=case.year)
                    out.append((case, None))
                    continue
                hit = match_case(case, self.authorities)
                if hit is None:
                    matched[i] = None
                    name = f"{case.plaintiff} v. {case.defendant}, " if case.plaintiff and case.defendant else ""
                    self._finding(kind, Status.UNVERIFIED_AUTHORITY, case.start, case.end,
                                  f"No authority in this matter matches {name}{case.reporter_cite}. Add the opinion "
                                  "to the matter as an authority, or confirm this citation with a reason.")
                else:
                    doc, page_id, how = hit
                    shown = volume_conflict(case, doc) if how == "caption" else ""
                    if shown:
                        problems[i] = (f"The authority matching this caption, Exhibit {doc.label} ({doc.title}), is "
                                       f"reported in volume {shown} of {case.reporter}, not {case.volume}.")
                        self._finding(kind, Status.UNGROUNDED, case.start, case.end, problems[i], [page_id])
                        out.append((case, None))
                        continue
                    matched[i] = doc
                    self._finding(kind, Status.GROUNDED, case.start, case.end,
                                  f"Matches authority Exhibit {doc.label} ({doc.title}) by its {how}."
                                  + (f" Pin cite {case.pin_cite} not checked against the reporter's pages."
                                     if case.pin_cite else ""), [page_id])
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
                              f"Refers to {cases[target].text}, which no authority of this matter matches.")
                out.append((case, None))
            else:
                doc = matched[target]
                self._finding(kind, Status.GROUNDED, case.start, case.end,
                              f"Refers to {cases[target].text} (authority Exhibit {doc.label}).", [doc.pages[0][0]])
                out.append((case, doc))
        return out

    def _check_statute(self, statute: StatuteMention) -> AuthorityDoc | None:
        hit = match_statute(statute, self.authorities)
        if hit is None:
            self._finding(Kind.STATUTE_CITATION, Status.UNVERIFIED_AUTHORITY, statute.start, statute.end,
                          f"No authority in this matter holds {statute.cite}. Add the statute or regulation to "
                          "the matter as an authority, or confirm this citation with a reason.")
            return None
        doc, page_id = hit
        self._finding(Kind.STATUTE_CITATION, Status.GROUNDED, statute.start, statute.end,
                      f"{statute.cite} is in authority Exhibit {doc.label} ({doc.title}).", [page_id])
        return doc

