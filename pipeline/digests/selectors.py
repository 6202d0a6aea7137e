"""The digests the pages show: an exhibit's, and a matter's list. Membership is checked by the caller (the
views use :func:`matters.selectors.exhibit_for_user` and :func:`matters.selectors.matter_for_user`)."""

from matters.models import Exhibit, Matter
from matters.selectors import evidence_exhibits

from .models import ExhibitDigest
from .services import digest_key, summarizer_server


def exhibit_digest(exhibit: Exhibit) -> ExhibitDigest | None:
    """The digest to show for ``exhibit``: the one under the current summarizer's key (in whatever state), else
    the latest ``done`` digest of the same content under another model or prompt; None when there is none."""
    server = summarizer_server()
    if server is not None:
        current = ExhibitDigest.objects.filter(**digest_key(exhibit, server)).first()
        if current is not None:
            return current
    return ExhibitDigest.objects.filter(sha256=exhibit.sha256, status=ExhibitDigest.Status.DONE).order_by(
        "-finished_at").first()


def matter_digests(matter: Matter) -> list[tuple[Exhibit, ExhibitDigest | None]]:
    """Every ready evidence exhibit of ``matter`` in label order with the digest :func:`exhibit_digest` would
    show (None where there is none), in two queries whatever the number of exhibits."""
    exhibits = list(evidence_exhibits(matter).order_by("label_seq", "pk"))
    server = summarizer_server()
    key = digest_key(Exhibit(sha256=""), server) if server is not None else None
    rows = ExhibitDigest.objects.filter(sha256__in={e.sha256 for e in exhibits}).order_by("finished_at")
    current: dict[str, ExhibitDigest] = {}
    done: dict[str, ExhibitDigest] = {}
    for row in rows:
        if key is not None and (row.prompt_template, row.model) == (key["prompt_template"], key["model"]):
            current[row.sha256] = row
        elif row.status == ExhibitDigest.Status.DONE:
            done[row.sha256] = row  # the latest, by the ordering
    return [(e, current.get(e.sha256) or done.get(e.sha256)) for e in exhibits]
