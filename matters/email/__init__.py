"""Email as litigation treats it: messages read into exhibits with their attachments as a family
(:mod:`.intake`), the headers kept per message, threads (:mod:`.threads`) and duplicates across custodians.

:mod:`.parse`, :mod:`.outlook` and :mod:`.render` import nothing from Django (type sniffing uses :mod:`.parse`);
this ``__init__`` re-exports nothing, as the models load :mod:`matters.exhibits.sniff`, which loads :mod:`.parse`.
See docs/email.md.
"""
