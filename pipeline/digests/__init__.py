"""Per-exhibit digests: what a document is, its date, author, parties and key facts with page cites, written
once by the summarizer role and cached by the exhibit's SHA-256, the prompt version and the model.

Modules: ``models`` (:class:`ExhibitDigest`), ``schema`` (the JSON schema the model answers in and the checks of
its content), ``cites`` (each fact's page cite checked against the page's words), ``services`` (queueing and
making a digest), ``selectors`` (the digests an exhibit page and a matter page show). A digest is model output:
it is never evidence and never enters the evidence packet (docs/jobs.md).
"""
