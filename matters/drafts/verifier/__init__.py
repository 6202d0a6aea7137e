"""The verifier: deterministic checks of a draft's citations, record cites, dates, amounts and quotations
against the matter's evidence and authorities (:func:`matters.drafts.verifier.check.verify_text`).

It lives in the case file (``matters``) because it reads only the case file and uses no model, and because the
review page re-runs it on every edit; the pipeline's verify stage calls it from ``pipeline``.
"""
