"""The stage objects: what each stage does, in one class per stage, found by name in :data:`REGISTRY`.

A stage's spec (role, prompt template, schema, answer budget, whether it gets the evidence packet and the
matter's authorities) is in :mod:`pipeline.stages.specs`; its behaviour is here: what its prompt carries beyond
the packet (:meth:`Stage.prompt_context`), what it reads before its result is written (:meth:`Stage.prepare`),
how its answer changes the job (:meth:`Stage.apply`), which stage follows it (:meth:`Stage.following`), whether
an attorney may continue a job it stopped, and how the job page shows its record. The runner, job control and
the job page ask the stage object; none of them names a stage. A new stage is one class here and one spec.

:meth:`Stage.apply` runs inside the transaction that marks its stage done, so a stage's effects and its ``done``
status are written together or not at all: a worker killed in between leaves nothing half-done to duplicate.
What only reads, the verifier's checks, runs before it in :meth:`Stage.prepare`: on SQLite a transaction holds
the database's one write lock from its first statement, and the checks read the matter's evidence for a second
or more at 50,000 pages, in a worker that yields the CPU to the web server; every page view's audit entry waited
for them.
"""

import json

from matters.drafts.services import anchor_quote, draft_add_attacks, draft_create, draft_verify, draft_version_create
from matters.drafts.verifier.check import verify_text
from matters.models import Origin
from matters.provenance import generated_record

from ..job_models import Job, JobKind, StageRun, StageStatus
from ..llm.types import Generation
from ..packet import EvidencePacket
from . import motion, specs
from .degenerate import extraction_verdict, placeholder_attack
from .grounding import dropped_marks
from .record_fields import extraction_check
from .results import StageFailed, checked_text, job_draft, job_title, run_provenance, unusable_answer
from .summary import digest_packet

# Characters per token, the client's conservative estimate (as the runner's packet budget uses).
CHARS_PER_TOKEN = 3
# Tokens of a prompt besides its packet and draft (instructions, request, headings), and the least room a packet
# needs to be worth sending.
PROMPT_OVERHEAD_TOKENS, LEAST_PACKET_TOKENS = 700, 400


def gate_queries(job: Job) -> list[str]:
    """The search queries of the questions the job's gate found in its request: :meth:`Gate.queries`."""
    return REGISTRY[Gate.name].queries(job)


class Stage:
    """One stage of a job's plan. Subclasses set ``name`` (a key of :data:`pipeline.stages.specs.STAGES`) and
    override what they do differently."""

    name: str = ""
    #: The prompt carries the draft's latest text as ``{draft}``.
    reads_draft: bool = False
    #: The packet is retrieved for the request's words and the gate's questions (False: the words alone).
    uses_gate_queries: bool = True
    #: An attorney may continue, with a reason, a job this stage stopped (a gate that found no grounds).
    continuable: bool = False
    #: What the job page says of a job this stage stopped, before it asks why it should go on (continuable only).
    stopped_label: str = ""
    #: The job page shows the stage's parsed ``items`` as a table of checked records.
    shows_records: bool = False
    #: An attorney may go on without this stage, with a reason, after it failed: it improves a draft that
    #: already exists (a revision), so the job can end on the draft as it stands; or it writes a part the
    #: document can keep as a marked gap (a section). See :meth:`may_skip` and :meth:`skip`.
    skippable: bool = False
    #: What the job page offers for a failed stage it may go on without (skippable only).
    skip_label: str = ""
    #: A retry after a loop or an echo halves the answer budget (pipeline.stages.degenerate.retry_change): the
    #: stage writes a part that may be shorter, not a whole sized to what it reads.
    retry_shortens: bool = False

    @property
    def spec(self) -> specs.StageSpec:
        return specs.STAGES[self.name]

    def prompt_context(self, run: StageRun) -> dict:
        """What the stage's prompt template is filled with beyond the matter, request and packet."""
        job = run.job
        if self.reads_draft and job.draft_id is not None:
            return {"draft": job.draft.latest_version.text}
        return {}

    def packet_queries(self, job: Job) -> list[str]:
        """The search queries the stage's evidence packet is retrieved for beside the request's words: the
        gate's (:meth:`Gate.queries`) when :attr:`uses_gate_queries`, else none."""
        return REGISTRY[Gate.name].queries(job) if self.uses_gate_queries else []

    def evidence(self, run: StageRun, packet: EvidencePacket, budget_chars: int | None) -> EvidencePacket:
        """The evidence the prompt carries (its :meth:`~pipeline.packet.EvidencePacket.prompt_text` as
        ``{packet}``) and the record keeps, from the ``packet`` retrieval chose within ``budget_chars``
        characters (None: no limit): that packet, unless the stage gives its evidence in another form."""
        return packet

    def retrieval_queries(self, run: StageRun) -> tuple[str, list[str]]:
        """The query and further queries the stage's packet is retrieved for: the request's words, and the gate's
        questions' queries where the stage uses them."""
        return run.job.instructions, self.packet_queries(run.job)

    def prompt_reserve_tokens(self, run: StageRun) -> int:
        """Tokens of the prompt besides the packet and the fixed overhead (the draft a stage reads)."""
        if not self.reads_draft:
            return 0
        return len(self.prompt_context(run).get("draft", "")) // CHARS_PER_TOKEN

    def answer_tokens(self, run: StageRun, context_tokens: int | None) -> int | None:
        """The answer budget of this attempt in tokens, given the server's context (None: unknown). None: send
        no request; :meth:`apply` is then called without a generation and says why."""
        return self.spec.max_tokens

    def nothing_found(self, run: StageRun, packet) -> bool:
        """Whether retrieval found nothing this attempt may write from, so no request is sent (:meth:`apply` is
        called without a generation and says what is missing)."""
        return False

    def next_run(self, job: Job, run: StageRun) -> tuple[str, str] | None:
        """The stage and section queued after ``run`` ended ``done``, None when the job is complete."""
        following = self.following(job)
        return None if following is None else (following, "")

    def prepare(self, run: StageRun, generation: Generation | None) -> dict:
        """Read what :meth:`apply` needs, outside any transaction. Raises StageFailed as :meth:`apply` would."""
        return {}

    def apply(self, run: StageRun, generation: Generation | None, prepared: dict) -> tuple[str, str]:
        """Use the finished stage's answer; return its final status and reason (``done`` or ``stopped``).
        Raises StageFailed when the answer cannot be used."""
        raise NotImplementedError

    def may_skip(self, job: Job, failed: StageRun) -> bool:
        """Whether an attorney may go on without ``failed`` (this stage's latest attempt, failed): by default
        when the stage is :attr:`skippable`, the job has a draft the stage would only have improved, and a stage
        follows it."""
        return self.skippable and job.draft_id is not None and self.following(job) is not None

    def skip(self, run: StageRun, by: str) -> None:
        """Record on ``run`` (the new attempt, ``done`` with no model request, whose reason says that ``by`` went
        on without the stage and why) what going on leaves: by default nothing, the draft standing as it is."""

    def following(self, job: Job) -> str | None:
        """The stage after this one in ``job``'s plan, None when it is the last."""
        plan = specs.plan_for(job.kind)
        if self.name not in plan:
            return None
        position = plan.index(self.name) + 1
        return plan[position] if position < len(plan) else None


REGISTRY: dict[str, Stage] = {}


def register(cls: type[Stage]) -> type[Stage]:
    """Class decorator: add one instance of ``cls`` to :data:`REGISTRY` under its ``name``."""
    if not cls.name or cls.name in REGISTRY:
        raise ValueError(f"A stage needs a name of its own; {cls.name!r} is empty or taken.")
    REGISTRY[cls.name] = cls()
    return cls


def stage_for(name: str) -> Stage:
    """The stage object named ``name``; StageFailed for a name no stage has (a record from an older plan)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise StageFailed(f"Unknown stage {name!r}.") from None


def stage_shows_records(name: str) -> bool:
    """Whether the job page shows the records of a stage named ``name`` (False for a name no stage has)."""
    stage = REGISTRY.get(name)
    return stage is not None and stage.shows_records


def prepare_result(run: StageRun, generation: Generation | None) -> dict:
    return stage_for(run.stage).prepare(run, generation)


def apply_result(run: StageRun, generation: Generation | None, prepared: dict) -> tuple[str, str]:
    return stage_for(run.stage).apply(run, generation, prepared)


@register
class Router(Stage):
    """Classifies a request nobody classified; the job's plan follows from its answer."""

    name = "router"

    def apply(self, run, generation, prepared):
        job = run.job
        kind = (generation.parsed or {}).get("kind")
        if kind not in JobKind.values:
            raise StageFailed(f"The router answered {kind!r}, which is not a job kind.")
        Job.objects.filter(pk=job.pk).update(kind=kind)
        job.kind = kind
        return StageStatus.DONE, ""

    def following(self, job):
        return specs.plan_for(job.kind)[0]


@register
class Gate(Stage):
    """Decides whether the record gives grounds for the request, and names its questions and their queries."""

    name = "gate"
    uses_gate_queries = False
    continuable = True
    stopped_label = "The gate found no grounds."

    def apply(self, run, generation, prepared):
        verdict = generation.parsed or {}
        if not verdict.get("has_grounds"):
            reasons = "; ".join(str(r) for r in verdict.get("reasons") or []) or self.stopped_label
            return StageStatus.STOPPED, reasons
        return StageStatus.DONE, ""

    def queries(self, job: Job) -> list[str]:
        """The search queries of the questions this gate found in ``job``'s request (its latest ``done`` attempt),
        without repeats; [] before the gate has run or when it named none."""
        gate = job.stage_runs.filter(stage=self.name, status=StageStatus.DONE).order_by("-attempt").first()
        questions = ((gate.parsed or {}).get("questions") if gate is not None else None) or []
        queries = [str(q.get("query") or q.get("question") or "").strip() for q in questions if isinstance(q, dict)]
        return list(dict.fromkeys(q for q in queries if q))


class _Writer(Stage):
    """A stage whose free-text answer becomes the job's draft, after the degenerate-answer checks."""

    retry_shortens = True

    def apply(self, run, generation, prepared):
        job = run.job
        text, warning, echo = checked_text(run, generation)
        version = draft_create(matter=job.matter, title=job_title(job), text=text, author_kind="model",
                               kind=job.kind, model_name=run.model, server_name=run.server_name,
                               provenance=run_provenance(run) | {"prompt_echo_share": echo})
        Job.objects.filter(pk=job.pk).update(draft=version.draft)
        job.draft = version.draft
        return StageStatus.DONE, warning


@register
class Draft(_Writer):
    name = "draft"


@register
class Summarize(_Writer):
    """A summary of the matter's evidence. When the pages do not all fit the summarizer's context, it is written
    from every exhibit's digest instead (:mod:`pipeline.stages.summary`), so it covers the whole matter."""

    name = "summarize"

    def evidence(self, run, packet, budget_chars):
        if budget_chars is None or not packet.omitted:
            return packet
        return digest_packet(run, packet, budget_chars)


def _kept_note(kept: dict) -> str:
    """What the revise stage's record says of a section kept as drafted (``kept``: one entry of
    ``kept_as_drafted``)."""
    dropped = kept["dropped"]
    more = f" and {len(dropped) - 4} more" if len(dropped) > 4 else ""
    return (f"The revision dropped {', '.join(dropped[:4])}{more} from “{kept['heading']}”, so that section keeps "
            "its text as drafted.")


@register
class Revise(Stage):
    """The reasoner's revision of the whole draft: its next version. A draft assembled from sections is revised
    whole, its body only (the caption, signature block and certificate stay LawDesk's), with an answer budget
    sized to the body; when body and answer would not fit the reasoner's context it is not revised, and says so.
    The revision keeps what the sections grounded (:meth:`_keep_grounded`): a section whose revised text drops
    one of its cites, quotations or amounts keeps its drafted text, and the stage's reason says which."""

    name = "revise"
    reads_draft = True
    skippable = True
    skip_label = "Go on without the revision: the draft stands as written before it, section by section."

    @staticmethod
    def _body(job: Job):
        version = job.draft.latest_version if job.draft_id is not None else None
        body = (version.provenance or {}).get("body") if version is not None else None
        return version, body

    def prompt_context(self, run):
        version, body = self._body(run.job)
        if version is not None and body:
            return {"draft": version.text[body[0]:body[1]]}
        return super().prompt_context(run)

    def answer_tokens(self, run, context_tokens):
        version, body = self._body(run.job)
        if version is None or not body:
            return self.spec.max_tokens
        body_tokens = (body[1] - body[0]) // CHARS_PER_TOKEN
        # The revision may run a quarter longer than what it revises.
        wanted = max(self.spec.max_tokens, body_tokens * 5 // 4 + 256)
        if context_tokens and body_tokens + wanted + PROMPT_OVERHEAD_TOKENS + LEAST_PACKET_TOKENS > context_tokens:
            return None
        return wanted

    @staticmethod
    def _keep_grounded(version, body: list[int], revised: str) -> tuple[str, list[int], list[dict], list[dict]]:
        """The revised version of ``version`` (an assembled draft with body span ``body``) from the reasoner's
        ``revised`` body, keeping what its sections grounded: the revision is cut at the sections' headings
        (:func:`pipeline.stages.motion.split_by_headings`) and each section takes its revised text unless that
        drops one of its marks (:func:`pipeline.stages.grounding.dropped_marks`: a record or authority cite, a
        quotation, an amount), when it keeps its drafted text. A section written as missing keeps its notice.
        A revision whose headings cannot be found is taken whole only when it drops no mark of the body; else
        every section keeps its drafted text. Returns the text, its body span, the sections' records (with
        their new spans and ``revised``: whether the revision's text was used) and what was kept as drafted
        (``[{"key", "heading", "dropped": [mark as written], "whole": bool}]``)."""
        records = [dict(s) for s in version.provenance.get("sections", [])]
        drafted = [s for s in records if s.get("writer") == "drafter" and "start" in s]
        originals = {}
        for section in drafted:
            block = version.text[section["start"]:section["end"]]
            originals[section["key"]] = block[len(section["heading"]):].strip()
        parts = motion.split_by_headings(revised, [s["heading"] for s in drafted])
        kept, chosen = [], {}
        if parts is None:
            whole = "\n\n".join(originals.values())
            dropped = dropped_marks(whole, revised)
            if not dropped:
                text, new_body = motion.rewrap(text=version.text, body=body, revised=revised)
                for record in records:
                    record.pop("start", None), record.pop("end", None)
                    if record.get("writer") == "drafter":
                        record["revised"] = True
                return text, new_body, records, []
            for section in drafted:
                chosen[section["key"]] = originals[section["key"]]
                kept.append({"key": section["key"], "heading": section["heading"], "whole": True,
                             "dropped": dropped_marks(originals[section["key"]], revised)})
        else:
            for section, part in zip(drafted, parts):
                original = originals[section["key"]]
                dropped = dropped_marks(original, part) if part else ["the whole section"]
                if section.get("missing") or dropped:
                    chosen[section["key"]] = original
                    if not section.get("missing"):
                        kept.append({"key": section["key"], "heading": section["heading"], "whole": False,
                                     "dropped": dropped})
                else:
                    chosen[section["key"]] = part
        new, spans = motion.body_text([{"key": s["key"], "heading": s["heading"], "text": chosen[s["key"]]}
                                       for s in drafted])
        text, new_body = motion.rewrap(text=version.text, body=body, revised=new)
        where = {span["key"]: span for span in spans}
        for record in records:
            record.pop("start", None), record.pop("end", None)
            if record["key"] in where:
                record.update(start=new_body[0] + where[record["key"]]["start"],
                              end=new_body[0] + where[record["key"]]["end"],
                              revised=chosen[record["key"]] != originals[record["key"]])
        return text, new_body, records, kept

    def apply(self, run, generation, prepared):
        job = run.job
        version, body = self._body(job)
        if generation is None:
            return StageStatus.DONE, (
                f"The assembled {(job.get_kind_display() or 'document').lower()} (about "
                f"{(body[1] - body[0]) // CHARS_PER_TOKEN:,} tokens) and its revision would not fit the reasoner's "
                "context, so it was not revised: the sections stand as drafted. Review it section by section.")
        text, warning, echo = checked_text(run, generation)
        provenance = run_provenance(run) | {"prompt_echo_share": echo}
        if body:
            revised, removed = motion.section_body(text, "")
            text, new_body, sections, kept = self._keep_grounded(version, body, revised or text)
            provenance |= {"body": new_body, "sections": sections, "plan_run": version.provenance.get("plan_run"),
                           "record_spans": motion.record_spans(text, new_body), "kept_as_drafted": kept}
            notes = [warning]
            if "caption" in removed:
                notes.append("The caption the reasoner wrote was removed: the caption comes from the matter record.")
            if "markup" in removed:
                notes.append("Markup the reasoner copied from its prompt (<<<...>>>) was removed.")
            notes.extend(_kept_note(k) for k in kept if k["dropped"])
            if any(k["whole"] for k in kept):
                notes.append("The revision did not keep the sections' headings, so its text could not be placed "
                             "section by section.")
            warning = " ".join(n for n in notes if n)
        draft_version_create(draft=job_draft(job), text=text, author_kind="model", model_name=run.model,
                             server_name=run.server_name, provenance=provenance)
        return StageStatus.DONE, warning


@register
class Verify(Stage):
    """The verifier over the draft's latest version; uses no model."""

    name = "verify"

    def prepare(self, run, generation):
        version = job_draft(run.job).latest_version
        return {"version": version, "results": verify_text(matter=run.job.matter, text=version.text)}

    def apply(self, run, generation, prepared):
        findings = draft_verify(version=prepared["version"], results=prepared["results"])
        counts: dict[str, int] = {}
        for finding in findings:
            counts[finding.status] = counts.get(finding.status, 0) + 1
        StageRun.objects.filter(pk=run.pk).update(parsed={"findings": counts, "blocking": sum(
            f.blocking for f in findings)})
        return StageStatus.DONE, ""


@register
class Review(Stage):
    """The adversarial reviewer's attacks on the draft, stored beside its latest version."""

    name = "review"
    reads_draft = True

    def apply(self, run, generation, prepared):
        version = job_draft(run.job).latest_version
        attacks, left_out = [], []
        for attack in (generation.parsed or {}).get("attacks", []):
            quote = str(attack.get("quote", ""))
            if placeholder_attack(attack, anchored=bool(quote.strip()) and anchor_quote(version.text, quote)
                                  is not None):
                left_out.append(attack)
            else:
                attacks.append(attack)
        draft_add_attacks(version=version, attacks=attacks)
        if not left_out:
            return StageStatus.DONE, ""
        # Shown with the stage, never as an attack of its own: a slot such as "[<address>]" under "medium" read
        # as a finding about the draft. The stage's output keeps them as the reviewer wrote them.
        return StageStatus.DONE, (f"{len(left_out)} of the reviewer's {len(attacks) + len(left_out)} attacks "
                                  "were template placeholders, not criticism, and were left out (such as "
                                  f"“{str(left_out[0].get('attack', ''))[:60]}” on "
                                  f"“{str(left_out[0].get('quote', ''))[:60]}”).")


@register
class Extract(Stage):
    """Amounts, dates and parties as records, each looked for on its source page by the verifier."""

    name = "extract"
    shows_records = True

    def prepare(self, run, generation):
        if generation is None:
            return {}
        items = (generation.parsed or {}).get("items") or []
        if isinstance(items, list) and all(isinstance(item, dict) for item in items):
            return {"items": extraction_check(matter=run.job.matter, items=items)}
        return {}

    def apply(self, run, generation, prepared):
        job = run.job
        items = (generation.parsed or {}).get("items") or []
        verdict = extraction_verdict(items, finish_reason=generation.finish_reason or "",
                                     max_tokens=int((run.sampling or {}).get("max_tokens") or 0))
        if verdict.fail:
            raise unusable_answer(run.role, verdict.fail)
        # Each row verified like a draft's claim; the statuses are stored with the answer and shown in its table.
        items = prepared["items"] if "items" in prepared else extraction_check(matter=job.matter, items=items)
        if generation.parsed is not None:
            generation.parsed["items"] = items
        unsupported = sum(1 for item in items if item["status"] != "grounded")
        warning = " ".join(w for w in (verdict.warning, f"{unsupported} of {len(items)} rows are not shown "
                                       "on their source page; see each row's status." if unsupported else "") if w)
        generated_record(matter=job.matter, origin=Origin.EXTRACTION, title=f"Extraction for job {job.pk}",
                         text=json.dumps(generation.parsed, ensure_ascii=False))
        return StageStatus.DONE, warning
