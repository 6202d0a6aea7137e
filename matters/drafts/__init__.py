"""Drafts: versions, findings and approval (:mod:`.services`), the draft's Markdown (:mod:`.markdown`), the
review page's items and sources (:mod:`.review`, :mod:`.review_sources`), exports to Word and PDF
(:mod:`.exports`), the deterministic verifier (:mod:`.verifier`), and their pages (:mod:`.views`, :mod:`.urls`).

A package of the ``matters`` app, not an app of its own: its models keep the ``matters`` label and tables, and a
draft is part of the case file (its findings point at the matter's pages). See docs/layout.md.
"""
