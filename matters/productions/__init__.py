"""Outgoing productions: Bates numbers reserved per matter and prefix, stamping and packing a volume
(:mod:`.services` over the Django-free :mod:`.bates`), overlaps between productions (:mod:`.overlaps`), and their
pages (:mod:`.views`, :mod:`.urls`)."""
