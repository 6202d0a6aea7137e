"""Model-server client overhead against the real embedded server (llama-server, Gemma 3 270M, CPU).

Run from the repository root as ``.venv/bin/python bench/client.py [--runs 20] [--tokens 128]``.

1. Decode speed: for each of ``--runs`` streamed generations of ``--tokens`` tokens (``ignore_eos``, so every run
   decodes the full budget), the client's own decode tok/s (tokens after the first over the time from the first
   to the last streamed token) against the server's ``timings.predicted_per_second``. Target: ratio >= 0.97.
2. Latency to the first token added by the client: the time from calling ``ModelClient.generate`` to its first
   token callback (the context check included: ``/apply-template`` and ``/tokenize``), against a bare httpx
   stream of the same request body reading up to its first content line. Runs alternate between the two.
   Target: under 5 ms (median difference).
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from pipeline.embedded import EMBEDDED_ALIAS, start_embedded_server  # noqa: E402
from pipeline.llm import Message, ModelClient, Sampling  # noqa: E402
from pipeline.llm.client import ServerConfig  # noqa: E402

PROMPT = [Message("user", "Write a long, detailed memorandum about a breach of a commercial lease.")]


def ours(client: ModelClient, tokens: int) -> tuple[float, float, float]:
    """One generation through our client; return (first-token ms, our decode tok/s, server decode tok/s)."""
    started = time.perf_counter()
    first = []

    def on_token(piece: str) -> None:
        if not first:
            first.append(time.perf_counter())

    generation = client.generate(PROMPT, sampling=Sampling(max_tokens=tokens), on_token=on_token,
                                 extra_body={"ignore_eos": True})
    assert generation.completion_tokens == tokens, generation.completion_tokens
    return (first[0] - started) * 1000, generation.measured_decode_tok_s, generation.decode_tok_s


def bare(base_url: str, tokens: int) -> float:
    """The same request with a bare httpx stream; return ms to the first content line."""
    body = {"model": EMBEDDED_ALIAS, "messages": [{"role": m.role, "content": m.content} for m in PROMPT],
            "stream": True, "temperature": 0.0, "seed": 1234, "top_k": 1, "top_p": 1.0, "max_tokens": tokens,
            "ignore_eos": True}
    with httpx.Client(base_url=base_url, timeout=120) as http:
        started = time.perf_counter()
        first = None
        with http.stream("POST", "/v1/chat/completions", json=body) as response:
            for line in response.iter_lines():
                if first is None and line.startswith("data: {"):
                    choices = json.loads(line[6:]).get("choices") or [{}]
                    if (choices[0].get("delta") or {}).get("content"):
                        first = time.perf_counter()
        return (first - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=128)
    args = parser.parse_args()
    server = start_embedded_server()
    client = ModelClient(ServerConfig(base_url=server.base_url, model=EMBEDDED_ALIAS, name="embedded"))
    try:
        ours(client, 8)  # warm-up: model pages, prompt cache
        bare(server.base_url, 8)
        ratios, ours_first, bare_first, ours_tok_s, server_tok_s = [], [], [], [], []
        for _ in range(args.runs):
            first_ms, measured, reported = ours(client, args.tokens)
            ours_first.append(first_ms)
            ours_tok_s.append(measured)
            server_tok_s.append(reported)
            ratios.append(measured / reported)
            bare_first.append(bare(server.base_url, args.tokens))
    finally:
        client.close()
        server.stop()
    added_ms = statistics.median(ours_first) - statistics.median(bare_first)
    ratio = statistics.median(ratios)
    print(f"{args.runs} generations of {args.tokens} tokens on the embedded llama-server")
    print(f"  decode tok/s, ours (median):            {statistics.median(ours_tok_s):8.2f}")
    print(f"  decode tok/s, server reports (median):  {statistics.median(server_tok_s):8.2f}")
    print(f"  ratio ours / server (median; min {min(ratios):.3f}): {ratio:.3f}   target >= 0.97  "
          f"{'met' if ratio >= 0.97 else 'NOT MET'}")
    print(f"  first token, ours (median):   {statistics.median(ours_first):7.2f} ms")
    print(f"  first token, bare (median):   {statistics.median(bare_first):7.2f} ms")
    print(f"  added by the client:          {added_ms:7.2f} ms   target < 5 ms  {'met' if added_ms < 5 else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
