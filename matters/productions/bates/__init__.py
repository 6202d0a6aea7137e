"""Bates productions: stamping pages (:mod:`.stamp`), laying out the volume (:mod:`.volume`). No Django here."""
