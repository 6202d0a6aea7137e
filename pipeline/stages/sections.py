"""The stages of a document written section by section (docs/jobs.md, "A motion, section by section"): the plan
(the reasoner's outline) and the section (one drafter run per section of it), and what the job page shows of their
progress. Their rules of text (the outline's checks, the caption, the assembly) are :mod:`pipeline.stages.motion`'s.
"""

from matters.chronology.selectors import matter_chronology
from matters.drafts.services import draft_create
from matters.drafts.verifier.citations import find_case_citations
from matters.drafts.verifier.statutes import find_statutes
from matters.selectors import evidence_exhibits

from ..digests.selectors import matter_digests
from ..job_models import Job, StageRun, StageStatus
from ..retrieval.embedding import retrievable_exhibits
from . import attribution, motion
from .kinds import Stage, gate_queries, register
from .results import StageFailed, checked_text, job_title, run_provenance, unusable_answer


def job_outline(job: Job) -> tuple[StageRun, dict]:
    """The job's plan run (its latest ``done`` attempt) and outline; StageFailed when it has none."""
    plan = job.stage_runs.filter(stage="plan", status=StageStatus.DONE).order_by("-attempt").first()
    if plan is None or not (plan.parsed or {}).get("sections"):
        raise StageFailed("This job has no finished plan: run its plan stage first.")
    return plan, plan.parsed


@register
class Plan(Stage):
    """The reasoner's outline of a filing: its sections in order, each with its questions and search queries
    (:func:`pipeline.stages.motion.outline_from`). It reads the request, the exhibit list with their digests, the
    authorities' citations and the matter's first dated facts; it is sent no packet."""

    name = "plan"

    def prompt_context(self, run):
        job = run.job
        digests = matter_digests(job.matter)
        if job.exhibits:
            digests = [(e, d) for e, d in digests if e.pk in set(job.exhibits)]
        law = list(retrievable_exhibits(job.matter, authorities=True).order_by("label_seq", "pk"))
        facts = matter_chronology(job.matter, exhibits=job.exhibits or None)
        return motion.plan_context(exhibits=digests, authorities=law, facts=facts)

    def apply(self, run, generation, prepared):
        try:
            outline = motion.outline_from(generation.parsed, queries=[motion.query_of(run.job.instructions),
                                                                      *gate_queries(run.job)])
        except motion.OutlineError as error:
            raise StageFailed(str(error)) from None
        # The checked outline is what the record keeps as parsed; the model's own JSON stays in the output.
        generation.parsed = outline
        return StageStatus.DONE, " ".join(outline["notes"])

    def next_run(self, job, run):
        return "section", motion.drafted_keys(run.parsed or {})[0]


@register
class Section(Stage):
    """One section of the plan, drafted from its own packet (retrieved for that section's questions and queries)
    within the drafter's context. A section whose searches find nothing in the record is not sent to the model:
    it says what it needs. The last section assembles the document (caption, sections in outline order,
    signature block, certificate of service) as the job's draft."""

    name = "section"
    retry_shortens = True
    skippable = True
    skip_label = ("Go on without this section: the document keeps a marked gap in its place, for you to write, "
                  "and the sections after it are drafted.")

    def _entry(self, run: StageRun) -> tuple[StageRun, dict, dict]:
        plan, outline = job_outline(run.job)
        entry = motion.section_entry(outline, run.section)
        if entry is None or entry.get("writer") != "drafter":
            raise StageFailed(f"The plan has no section {run.section!r} to draft.")
        return plan, outline, entry

    def prompt_context(self, run):
        _, outline, entry = self._entry(run)
        return {"heading": entry["heading"], "section_label": motion.LABELS[entry["kind"]].lower(),
                "questions": "\n".join(f"- {q}" for q in entry["questions"]) or f"- {entry['heading']}",
                "outline": "; ".join(s["heading"] for s in outline["sections"] if s["writer"] == "drafter")}

    def retrieval_queries(self, run):
        _, _, entry = self._entry(run)
        return " ".join(entry["questions"]) or entry["heading"], entry["queries"]

    def nothing_found(self, run, packet):
        """No page of the job's evidence and no authority holds a word of any of the section's searches (the
        words alone decide: an embedding always has a nearest page, however far)."""
        from ..retrieval.ranking import Retriever

        if packet is not None and not packet.pages and not packet.authorities:
            return True
        job = run.job
        query, queries = self.retrieval_queries(run)
        evidence = evidence_exhibits(job.matter)
        if job.exhibits:
            evidence = evidence.filter(pk__in=job.exhibits)
        ids = {*evidence.values_list("pk", flat=True),
               *retrievable_exhibits(job.matter, authorities=True).values_list("pk", flat=True)}
        retriever = Retriever(job.matter, methods=("lexical",), rerank=False)
        try:
            return not any(retriever.rank(q, exhibit_ids=ids, limit=1).candidates for q in [*queries, query] if q)
        finally:
            retriever.close()

    def may_skip(self, job, failed):
        """A section the drafter could not write (every answer looped) may be left as a marked gap: the document
        is still whole around it, and the gap is the attorney's to fill."""
        return self.skippable and self.next_run(job, failed) is not None

    def skip(self, run, by):
        plan, outline, entry = self._entry(run)
        text = motion.not_written_text(entry, by)
        StageRun.objects.filter(pk=run.pk).update(output=text, parsed={
            "section": run.section, "heading": entry["heading"], "missing": True, "skipped": True, "text": text})
        if run.section == motion.drafted_keys(outline)[-1]:
            self._assemble(run, plan, outline, text)

    def apply(self, run, generation, prepared):
        plan, outline, entry = self._entry(run)
        if generation is None:
            text = motion.missing_text(entry)
            StageRun.objects.filter(pk=run.pk).update(output=text, parsed={
                "section": run.section, "heading": entry["heading"], "missing": True, "text": text})
            reason = "Nothing in the record answered this section's searches: it says what it needs instead."
        else:
            answer, warning, echo = checked_text(run, generation)
            text, removed = motion.section_body(answer, entry["heading"])
            if not text:
                raise unusable_answer(run.role, "it wrote nothing for the section besides a caption or a closing.")
            text, attributed, quoted, record, uncited = self._cited(run, outline, entry, text)
            generation.parsed = {"section": run.section, "heading": entry["heading"], "missing": False,
                                 "text": text, "removed": removed, "prompt_echo_share": echo,
                                 "attributed": attributed, "quoted_authorities": quoted, "quoted_record": record}
            notes = [warning, "The caption the model wrote was removed: the caption comes from the matter record."
                     if "caption" in removed else "", "Markup the model copied from its prompt (<<<...>>>) was "
                     "removed." if "markup" in removed else ""]
            if attributed:
                cites = ", ".join(dict.fromkeys(a["cite"] for a in attributed))
                notes.append(f"LawDesk attached a record cite to {len(attributed)} sentence"
                             f"{'' if len(attributed) == 1 else 's'} the model drew from one excerpt without citing "
                             f"it ({cites}), by the words each shares with that page.")
            if quoted:
                notes.append("The section cited none of the stored authorities it was sent, so LawDesk quoted "
                             f"{' and '.join(q['cites_as'] for q in quoted)} under their own citation.")
            if uncited:
                one = len(uncited) == 1
                notes.append(f"{' and '.join(uncited)} {'has' if one else 'have'} no citation LawDesk can read "
                             "(nobody set “Cites as” on the authority's page and its first page prints none), so "
                             f"{'it was' if one else 'they were'} not quoted; set “Cites as” to have "
                             f"{'it' if one else 'them'} quoted under {'its' if one else 'their'} citation.")
            if record:
                notes.append("The section cited nothing in the record, so LawDesk quoted "
                             f"{' and '.join(q['cite'] for q in record)}, the evidence it was sent that shares most "
                             "words with the section's questions.")
            reason = " ".join(r for r in notes if r)
        if run.section == motion.drafted_keys(outline)[-1]:
            self._assemble(run, plan, outline, text)
        return StageStatus.DONE, reason

    @staticmethod
    def _cited(run: StageRun, outline: dict, entry: dict, text: str) -> tuple[str, list[dict], list[dict],
                                                                               list[dict], list[str]]:
        """``text`` with the cites it carries by construction (:mod:`pipeline.stages.attribution`): a record cite
        on each sentence drawn from one excerpt of the packet the section was sent; in the section that states
        the law (the legal standard, or the first argument of an outline that has none) when it cites none of its
        law, quotations of the stored authorities; in a section stating facts (:func:`motion.states_facts`) when
        it cites nothing in the record, quotations of its evidence pages. Returns the text, the cites attached,
        the authorities quoted, the record quoted and the authorities not quoted for want of a citation the
        verifier reads (their titles)."""
        prompt = "\n".join(m.get("content", "") for m in run.prompt or [] if m.get("role") == "user")
        evidence, law = attribution.prompt_excerpts(prompt)
        text, attributed = attribution.attach_record_cites(text, evidence)
        quoted = record = uncited = []
        kinds = [s["kind"] for s in outline["sections"]]
        states_law = next((s["key"] for s in outline["sections"] if s["kind"] == (
            "legal_standard" if "legal_standard" in kinds else "argument")), None)
        wanted = " ".join([entry["heading"], *entry["questions"], *entry["queries"], run.job.instructions])
        if entry["key"] == states_law:
            # Quoted only under a citation the verifier can read: an authority whose citation nobody set and its
            # first page does not print is offered under its title ("mo-app-jagels"), no citation at all.
            citable = [e for e in law if _citable(e.cites_as)]
            text, quoted = attribution.quote_authorities(text, citable, wanted)
            if not quoted and not attribution.cites_law(text, law):
                uncited = sorted({e.cites_as for e in law} - {e.cites_as for e in citable})
        if entry["key"] in motion.states_facts(outline):
            text, record = attribution.quote_record(text, evidence, wanted)
        return text, attributed, quoted, record, uncited

    def _assemble(self, run: StageRun, plan: StageRun, outline: dict, last_text: str) -> None:
        job = run.job
        done = {r.section: r for r in job.stage_runs.filter(stage="section", status=StageStatus.DONE).order_by(
            "attempt")}
        parts, records = [], []
        for entry in outline["sections"]:
            record = {"key": entry["key"], "kind": entry["kind"], "heading": entry["heading"],
                      "writer": entry["writer"]}
            if entry["writer"] == "drafter":
                source = run if entry["key"] == run.section else done.get(entry["key"])
                text = last_text if source is run else ((source.parsed or {}).get("text") if source else None)
                if not text:
                    raise StageFailed(f"The section “{entry['heading']}” has no finished text: run it again.")
                parts.append({"key": entry["key"], "heading": entry["heading"], "text": text})
                record.update(run=source.pk, attempt=source.attempt, packet_sha256=source.packet_sha256,
                              missing=text.startswith("[NOT WRITTEN"))
            records.append(record)
        creator = job.created_by
        attorney = (creator.get_full_name() if creator is not None else "").strip()
        # "Motion or petition": a title needs the one word.
        kind_label = (job.get_kind_display() or "document").split(" or ")[0]
        text, spans, body = motion.assemble(
            head=motion.caption_text(job.matter, outline.get("title", ""), kind_label),
            sections=parts, tail=[motion.signature_text(job.matter, attorney), motion.certificate_text(job.matter)])
        where = {span["key"]: span for span in spans}
        for record in records:
            if record["key"] in where:
                record.update(start=where[record["key"]]["start"], end=where[record["key"]]["end"])
        # A section gone on without asked no model: the version names the drafter of the sections written.
        writer = run if run.model else next((r for r in done.values() if r.model), run)
        version = draft_create(matter=job.matter, title=job_title(job), text=text, author_kind="model",
                               kind=job.kind, model_name=writer.model, server_name=writer.server_name,
                               provenance=run_provenance(run) | {"stage": "sections", "plan_run": plan.pk,
                                                                 "sections": records, "body": body,
                                                                 "record_spans": motion.record_spans(text, body)})
        Job.objects.filter(pk=job.pk).update(draft=version.draft)
        job.draft = version.draft

    def next_run(self, job, run):
        keys = motion.drafted_keys(job_outline(job)[1])
        position = keys.index(run.section) + 1 if run.section in keys else len(keys)
        if position < len(keys):
            return "section", keys[position]
        return super().next_run(job, run)


def _citable(cites_as: str) -> bool:
    """Whether ``cites_as`` (an authority's citation in the packet) holds a case, public-domain, statute or rule
    citation the verifier reads."""
    flat = " ".join(cites_as.split())
    return bool(find_case_citations(flat) or find_statutes(flat))


def section_progress(job: Job) -> list[dict]:
    """The job page's rows for ``job``'s sections, in outline order ([] before its plan is done): ``key``,
    ``heading``, ``label`` (the kind in words), ``writer`` (``matter`` or ``drafter``), ``status`` (its latest
    attempt's; ``pending`` before one is queued; ``record`` for a part written from the matter record) and
    ``status_label``, ``reason`` (the attempt's error or warning), ``missing`` (it found nothing to write from),
    ``run`` (the latest attempt, or None)."""
    try:
        _, outline = job_outline(job)
    except StageFailed:
        return []
    latest = {run.section: run for run in job.stage_runs.filter(stage="section").order_by("attempt")}
    rows = []
    for entry in outline["sections"]:
        run = latest.get(entry["key"]) if entry["writer"] == "drafter" else None
        rows.append({"key": entry["key"], "heading": entry["heading"], "label": motion.LABELS[entry["kind"]],
                     "writer": entry["writer"], "run": run,
                     "status": run.status if run is not None else "record" if entry["writer"] == "matter"
                     else "pending",
                     "status_label": run.get_status_display() if run is not None else "Pending",
                     "reason": (run.error or run.reason) if run is not None else "",
                     "missing": bool(run is not None and (run.parsed or {}).get("missing"))})
    return rows
