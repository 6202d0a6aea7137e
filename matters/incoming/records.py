"""Each record of an incoming volume becomes exactly one exhibit, however many times the import is read.

An import runs under a lease (:mod:`matters.leases`); if its worker dies, :mod:`matters.recovery` queues it again and
another worker reads the kept upload from the start. :class:`RecordExhibits` numbers the records in reading order
(the same files read the same way give the same numbers) and writes each record's exhibit together with its
``IncomingDocument`` link, in one transaction: a record already linked keeps its exhibit, which is read to the end
here if the dead worker left it unread.
"""

import io
import logging
import time

from django.db import transaction

from matters.exhibits.processing import exhibit_process, exhibit_render_previews
from matters.exhibits.services import exhibit_create
from matters.leases import LeaseKeeper, LeaseLost
from matters.models import Exhibit, IncomingDocument, IncomingProduction
from matters.recovery import exhibits_recover

logger = logging.getLogger(__name__)

# How often to look again at an exhibit another live worker is reading, seconds.
OTHER_READER_POLL_S = 1.0


class RecordExhibits:
    """Hand out the exhibit of each record of one reading of ``incoming``, in reading order.

    ``keeper`` is the import's lease keeper (None when the import runs in the caller, as the command line does);
    once it reports the lease lost, :meth:`exhibit_for` raises :class:`matters.leases.LeaseLost`."""

    def __init__(self, incoming: IncomingProduction, keeper: LeaseKeeper | None = None) -> None:
        self.incoming, self.keeper = incoming, keeper
        self.next_record = 0
        # The last record's own exhibit: a duplicate's row itself, not the exhibit it repeats (a family links it).
        self.own: Exhibit | None = None

    def exhibit_for(self, data: bytes, name: str) -> Exhibit:
        """Return the exhibit of the next record (``data``: its PDF bytes; ``name``: its file name), read to its
        end: ``ready``, or another status with its reason. A document identical to one already in the matter is
        that exhibit (productions repeat documents), whose pages then carry both Bates numbers."""
        record, self.next_record = self.next_record, self.next_record + 1
        self._check_lease()
        link = IncomingDocument.objects.filter(incoming=self.incoming, record=record).select_related("exhibit").first()
        if link is None:
            with transaction.atomic():
                exhibit = exhibit_create(matter=self.incoming.matter, stream=io.BytesIO(data), original_name=name,
                                         origin=self.incoming.origin, uploaded_by=self.incoming.created_by,
                                         enqueue=False)
                IncomingDocument.objects.create(incoming=self.incoming, record=record, name=name[:300],
                                                exhibit=exhibit)
            fresh = True
        else:
            exhibit, fresh = link.exhibit, False
        self.own = exhibit
        if exhibit.status == Exhibit.Status.DUPLICATE:
            first = exhibit.duplicate_of
            # The file it repeats may not be read yet: an email native's attachment, queued when the message was
            # read, produced again as a record of its own. Its pages are what this record's numbers name.
            if first.status in (Exhibit.Status.QUEUED, Exhibit.Status.PROCESSING):
                return self._read(first, fresh=False)
            return first
        return self._read(exhibit, fresh)

    def _read(self, exhibit: Exhibit, fresh: bool) -> Exhibit:
        while True:
            self._check_lease()
            if exhibit.status == Exhibit.Status.QUEUED:
                exhibit = exhibit_process(exhibit_id=exhibit.pk, previews="inline")
                if exhibit.status == Exhibit.Status.PROCESSING:  # another worker claimed it first
                    continue
                return exhibit
            if exhibit.status == Exhibit.Status.PROCESSING:
                # Left by the import's dead worker: take it back once its own lease has expired; while another
                # worker renews it, wait for that worker, which stops at the ingest time limit at the latest.
                if not exhibits_recover(exhibit_id=exhibit.pk, enqueue=False):
                    time.sleep(OTHER_READER_POLL_S)
                exhibit = Exhibit.objects.get(pk=exhibit.pk)
                continue
            if not fresh and exhibit.status == Exhibit.Status.READY and not exhibit.previews_ready:
                exhibit_render_previews(exhibit_id=exhibit.pk)  # the dead worker may have stopped before them
            return exhibit

    def _check_lease(self) -> None:
        if self.keeper is not None and self.keeper.lost:
            raise LeaseLost(f"import {self.incoming.pk}")
