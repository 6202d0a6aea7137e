"""A scripted embedding server on loopback (``/v1/embeddings`` as llama-server answers it): each text's vector is
its bag of word stems hashed into 64 dimensions, so texts sharing words are near and the answer is the same every
time. For the sweep's mechanics and faults; the real embedder is tested live (tests/pipeline/llm)."""

import hashlib
import json
import re

from tests.support.scripted_server import Reply, ScriptedServer, json_reply

DIMS = 64


def bag_vector(text: str) -> list[float]:
    vector = [0.0] * DIMS
    for word in re.findall(r"[a-z]{3,}", text.lower()):
        stem = word[:5]
        vector[int(hashlib.sha256(stem.encode()).hexdigest(), 16) % DIMS] += 1.0
    return vector


def fake_embedder(server: ScriptedServer, *, max_chars: int | None = None) -> list[list[str]]:
    """Script ``server`` as an embedder; returns the list of input batches it was sent, in order. With
    ``max_chars``, a request holding a longer input is refused whole with HTTP 400, as llama-server refuses an
    input longer than its slot's context."""
    batches: list[list[str]] = []

    def embeddings(body: dict) -> Reply:
        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else texts
        batches.append(list(texts))
        if max_chars is not None and any(len(t) > max_chars for t in texts):
            return json_reply({"error": {"code": 400, "message": "input is too large to process. increase the "
                                         "physical batch size", "type": "invalid_request_error"}}, status=400)
        return json_reply({"object": "list", "model": body.get("model", "fake-embedder"),
                           "data": [{"object": "embedding", "index": i, "embedding": bag_vector(t)}
                                    for i, t in enumerate(texts)],
                           "usage": {"prompt_tokens": sum(len(t.split()) for t in texts),
                                     "total_tokens": sum(len(t.split()) for t in texts)}})

    server.routes["/v1/embeddings"] = embeddings
    server.routes["/health"] = lambda body: Reply(pieces=[json.dumps({"status": "ok"}).encode()],
                                                  content_type="application/json")
    return batches
