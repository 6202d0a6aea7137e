"""Fusing rankings: reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009), chosen by measurement
over a weighted sum of normalised scores (bench/retrieval.py prints both; docs/retrieval.md). Pure Python.

An item's fused score is the sum over rankings of ``weight / (k + rank)``, rank counted from 1; an item absent
from a ranking adds nothing for it. ``k`` = 60 is the paper's constant: it keeps the first few ranks of one
method from drowning the other.
"""

RRF_K = 60


def rrf(rankings: dict[str, list[int]], *, k: int = RRF_K, weights: dict[str, float] | None = None
        ) -> list[tuple[int, float]]:
    """``rankings``: method name -> item ids best first. Returns (item, fused score) best first; ties keep the
    order in which the items were first seen."""
    scores: dict[int, float] = {}
    for method, items in rankings.items():
        weight = (weights or {}).get(method, 1.0)
        for rank, item in enumerate(items, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])
