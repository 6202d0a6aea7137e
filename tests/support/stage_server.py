"""A scripted llama-server that answers each stage of a job as the test says: the stage is told apart by its
prompt template's opening words."""

import json

from tests.support.scripted_server import Reply, ScriptedServer, chat_chunks, llama_cpp_routes, sse

TIMINGS = {"prompt_n": 120, "prompt_per_second": 850.0, "predicted_n": 24, "predicted_per_second": 61.5}
OPENINGS = {
    "You route requests": "router",
    "You are a careful litigation attorney deciding": "gate",
    "You plan court filings": "plan",
    "You write one section of a court filing": "section",
    "You draft litigation documents": "draft",
    "You are a senior litigation partner": "revise",
    "You are opposing counsel": "review",
    "You extract facts": "extract",
    "You summarize case exhibits": "summarize",
    "You digest one case exhibit": "digest",
}
DEFAULT = {
    "router": json.dumps({"kind": "summary", "reason": "asks for a summary"}),
    "gate": json.dumps({"has_grounds": True, "reasons": ["The lease and the letter support it."],
                        "cited_pages": ["SMITH000001"]}),
    "plan": json.dumps({"title": "Motion to compel repairs", "sections": [
        {"kind": "caption", "heading": "Caption", "questions": [], "queries": []},
        {"kind": "introduction", "heading": "Introduction", "questions": ["What does the motion ask for?"],
         "queries": ["roof repair"]},
        {"kind": "statement_of_facts", "heading": "Statement of facts", "questions": ["When was the lease signed?"],
         "queries": ["lease signed", "roof leaks"]},
        {"kind": "argument", "heading": "The landlord must repair the roof",
         "questions": ["Does the law put the repair on the landlord?"], "queries": ["duty to repair"]},
        {"kind": "conclusion", "heading": "Conclusion", "questions": ["What relief?"], "queries": ["repair"]},
        {"kind": "signature_block", "heading": "Signature", "questions": [], "queries": []}]}),
    "section": "The lease was signed on March 3, 2021. SMITH000001.",
    "draft": "MOTION TO COMPEL REPAIRS. The lease was signed on March 3, 2021. SMITH000001.",
    "revise": ("MOTION TO COMPEL REPAIRS. The lease was signed on March 3, 2021. SMITH000001. The tenant "
               "wrote that “we will not pay the rent for April, because the roof leaks.” SMITH000002."),
    "review": json.dumps({"attacks": [{"quote": "The lease was signed on March 3, 2021.",
                                       "attack": "The signature date is not disputed; this adds nothing.",
                                       "severity": "low", "suggested_fix": "Drop it."}]}),
    "extract": json.dumps({"items": [{"type": "amount", "value": "$1,250.00", "source": "SMITH000001"},
                                     {"type": "date", "value": "March 3, 2021", "source": "SMITH000001"}]}),
    "summarize": "The lease was signed on March 3, 2021 (SMITH000001).",
    "digest": json.dumps({"document_type": "residential lease", "date": "March 3, 2021", "author": "",
                          "parties": ["Smith", "Jones"], "summary": "A lease of the apartment from Jones to Smith.",
                          "key_facts": [{"fact": "The lease was signed on March 3, 2021.", "pages": [1]}]}),
}


def stage_of(body: dict) -> str:
    system = (body.get("messages") or [{}])[0].get("content", "")
    return next((stage for opening, stage in OPENINGS.items() if system.startswith(opening)), "unknown")


def words(text: str, size: int = 12) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def stage_server(server: ScriptedServer, replies: dict | None = None, *, pause_s: float = 0.002) -> list[str]:
    """Script ``server``; ``replies`` maps a stage to a text or to ``fn(call_number) -> Reply | str``. Returns the
    list that records each completion request's stage, in order."""
    llama_cpp_routes(server, timings=TIMINGS, n_ctx=16384)
    answers = dict(DEFAULT, **(replies or {}))
    calls: list[str] = []

    def completion(body: dict) -> Reply:
        stage = stage_of(body)
        calls.append(stage)
        answer = answers.get(stage, "")
        if callable(answer):
            answer = answer(calls.count(stage))
        if isinstance(answer, Reply):
            return answer
        return Reply(pieces=[sse(*chat_chunks(words(answer), timings=TIMINGS), "[DONE]")], pause_s=pause_s)

    server.routes["/v1/chat/completions"] = completion
    return calls
