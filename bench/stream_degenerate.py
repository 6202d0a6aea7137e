"""Where a looping answer is stopped as it streams, against its whole token budget, on the real embedded model.

Run from the repository root as ``.venv/bin/python bench/stream_degenerate.py [--pdf FILE] [--repeat-penalty 1.3]``.

One summary request (the summarize stage's own prompt over the PDF's text, cut to 6,000 characters) streams its
whole budget of 1,024 tokens; after each token the text so far is judged by
:func:`pipeline.stages.degenerate.streaming_degeneration`, as the stage does at each save. Printed side by side
from the one stream: the tokens and seconds to the first point where the stage would have been stopped, the whole
budget's, their ratios, and the final check's verdict on the whole answer. Without ``--repeat-penalty`` the
sampling is greedy, which loops on one line; the embedded server's own setting is 1.3.
"""

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lawdesk.settings")

import django  # noqa: E402

django.setup()

import pymupdf  # noqa: E402

from pipeline.embedded import EMBEDDED_ALIAS, start_embedded_server  # noqa: E402
from pipeline.llm import ModelClient, Sampling  # noqa: E402
from pipeline.llm.client import ServerConfig  # noqa: E402
from pipeline.stages.degenerate import free_text_verdict, streaming_degeneration  # noqa: E402
from pipeline.stages.prompts import render  # noqa: E402

BUDGET_TOKENS = 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdf", default=str(REPO.parent / "shared" / "corpus" / "court" / "ca7_3.pdf"))
    parser.add_argument("--repeat-penalty", type=float, default=None)
    args = parser.parse_args()
    with pymupdf.open(args.pdf) as document:
        packet = "\n".join(page.get_text() for page in document)[:6000]
    messages = render("summarize.v1.txt", matter="Smith v. Jones", instructions="Summarize the filing.",
                      packet=packet, draft="", kind_label="summary")
    server = start_embedded_server()
    try:
        client = ModelClient(ServerConfig(base_url=server.base_url, model=EMBEDDED_ALIAS, name="embedded"))
        pieces: list[str] = []
        stop: list[tuple[int, float, str]] = []
        started = time.perf_counter()

        def on_token(piece: str) -> None:
            pieces.append(piece)
            if not stop and (why := streaming_degeneration("".join(pieces))):
                stop.append((len(pieces), time.perf_counter() - started, why))

        generation = client.generate(messages, sampling=Sampling(max_tokens=BUDGET_TOKENS,
                                                                  repeat_penalty=args.repeat_penalty),
                                     on_token=on_token)
        whole_s = time.perf_counter() - started
        client.close()
    finally:
        server.stop()
    final = free_text_verdict(generation.text, instructions="", finish_reason=generation.finish_reason or "",
                              max_tokens=BUDGET_TOKENS)
    print(f"repeat penalty: {args.repeat_penalty or 'none (greedy)'}; load average: {os.getloadavg()[0]:.2f}")
    print(f"whole answer: {len(pieces)} tokens in {whole_s:.1f} s (server {generation.decode_tok_s or 0:.1f} tok/s), "
          f"finish {generation.finish_reason}; final check: {final.fail or final.warning or 'usable'}")
    if not stop:
        print("never stopped while streaming")
        return
    tokens, seconds, why = stop[0]
    print(f"stopped at: {tokens} tokens in {seconds:.1f} s — {why}")
    print(f"ratios: tokens {tokens / len(pieces):.2f}, time {seconds / whole_s:.2f}")


if __name__ == "__main__":
    main()
