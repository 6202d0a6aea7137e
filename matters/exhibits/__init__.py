"""Exhibits: upload (:mod:`.services`), processing in a limited child (:mod:`.processing` over :mod:`.ingest`),
search (:mod:`.search`, :mod:`.search_index`), the reading form of page text (:mod:`.reading`), type sniffing
(:mod:`.sniff`), and their pages (:mod:`.views`, :mod:`.urls`).

Import from the module that holds a name: this ``__init__`` re-exports nothing, because the models import
:mod:`.reading` and :mod:`.sniff`, and loading them must not load the services that import the models.
"""
