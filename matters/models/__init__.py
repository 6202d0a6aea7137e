"""The models of the ``matters`` app, one module per sub-domain under one app label.

Django finds models through this package, and code imports them from here (``from matters.models import
Exhibit``): the modules are where each model is written, not a public path of their own.
"""

from .audit import AuditEntry
from .case import (
    EVIDENCE_ORIGINS,
    GENERATED_ORIGINS,
    UPLOAD_ORIGINS,
    Custodian,
    Exhibit,
    GeneratedDocument,
    Matter,
    Origin,
    Page,
)
from .deadlines import CourtClosedDay, Deadline
from .drafts import Draft, DraftVersion, Finding, PageFact, ReviewAttack
from .email import EmailMessage, NearDuplicate
from .incoming import IncomingBatesPage, IncomingDocument, IncomingProduction
from .privilege import ImproperRedaction, PrivilegeBasis, PrivilegeLogEntry, Redaction, RedactionReason
from .productions import BatesPage, Production, ProductionDocument

__all__ = [
    "EVIDENCE_ORIGINS",
    "GENERATED_ORIGINS",
    "UPLOAD_ORIGINS",
    "AuditEntry",
    "BatesPage",
    "CourtClosedDay",
    "Deadline",
    "Custodian",
    "Draft",
    "EmailMessage",
    "NearDuplicate",
    "DraftVersion",
    "Exhibit",
    "Finding",
    "GeneratedDocument",
    "ImproperRedaction",
    "IncomingBatesPage",
    "IncomingDocument",
    "IncomingProduction",
    "Matter",
    "Origin",
    "Page",
    "PageFact",
    "PrivilegeBasis",
    "PrivilegeLogEntry",
    "ProductionDocument",
    "Production",
    "Redaction",
    "RedactionReason",
    "ReviewAttack",
]
