"""The audit log: recording and verifying entries (:mod:`.services`), the hash schemes (:mod:`.schemes`), the seal
kept outside the database (:mod:`.seal`), logins (:mod:`.login`), audited admin changes (:mod:`.admin`), and the
matter's audit page (:mod:`.views`, :mod:`.urls`).

Import from the module that holds a name: the ``AuditEntry`` model imports :mod:`.schemes`, and loading it must not
load the services that import the models.
"""
