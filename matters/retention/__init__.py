"""Retention: a matter's legal hold, which every deletion respects (:mod:`.services`), purging a matter not on
hold (:mod:`.purge`), and the matter page's retention section (:mod:`.views`, :mod:`.urls`)."""
