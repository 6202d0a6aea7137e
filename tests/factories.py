"""Test data without running the pipeline: factory_boy factories for the case file and the model topology.

A page with text comes from ``PageFactory(text=...)`` or ``ExhibitFactory(pages=[...])`` without storing an original
or running ingest; a production numbers given pages (``ProductionFactory(pages=[...])``); a model server comes pinned
to the GPUs of one board of its host, as the topology rules require (docs/topology.md). Factories write rows only:
no audit entries, no files, no tasks. For what the services add (an audit line, an original under its SHA-256, the
worker's processing), call the services, as ``tests/conftest.py``'s ``matter`` and ``ingest`` fixtures do.
"""

import hashlib

import factory
from django.contrib.auth import get_user_model
from django.db.models import Max
from django.utils import timezone

from matters.exhibits.services import format_label
from matters.models import (
    BatesPage,
    Draft,
    DraftVersion,
    Exhibit,
    Finding,
    Matter,
    Origin,
    Page,
    Production,
    ProductionDocument,
)
from matters.roles import role_group
from pipeline.models import GPU, Board, Host, ModelServer, RoleAssignment
from tests.support.accounts import PASSWORD

LETTER_PT = (612.0, 792.0)  # US Letter in PDF points, the size of most American court filings
V100_MIB = 32768  # a Tesla V100-SXM2-32GB as NVML reports it, the deployment's GPU


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class UserFactory(factory.django.DjangoModelFactory):
    """A user with the test password, in the group of ``role`` (``attorney`` unless given; ``None`` for no role)."""

    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password(PASSWORD)

    @factory.post_generation
    def role(self, create, extracted, **kwargs):
        role = "attorney" if extracted is None else extracted
        if create and role:
            self.groups.add(role_group(role))


class MatterFactory(factory.django.DjangoModelFactory):
    """A matter and its members: ``members=[user, ...]``, or by default one new attorney (only members see a
    matter, so a matter without one is out of everyone's reach)."""

    class Meta:
        model = Matter
        skip_postgeneration_save = True

    name = factory.Faker("bothify", text="????? v. ?????")
    court = "D. Mass."
    case_number = factory.Sequence(lambda n: f"1:24-cv-{n:05d}")

    @factory.post_generation
    def members(self, create, extracted, **kwargs):
        if create:
            self.members.add(*(extracted if extracted is not None else [UserFactory()]))


class ExhibitFactory(factory.django.DjangoModelFactory):
    """A ready client exhibit labelled after the matter's last one, as uploads are. ``pages=["text of page 1",
    ...]`` adds its pages (with ``page_count``); without it the exhibit has none. Its SHA-256 stands for an
    original that was never stored."""

    class Meta:
        model = Exhibit
        skip_postgeneration_save = True

    matter = factory.SubFactory(MatterFactory)
    label_seq = factory.LazyAttribute(lambda o: (o.matter.exhibits.aggregate(last=Max("label_seq"))["last"] or 0)
                                      + 1)
    label = factory.LazyAttribute(lambda o: format_label(o.label_seq, o.matter.label_style))
    title = factory.Faker("sentence", nb_words=4)
    origin = Origin.CLIENT
    original_name = factory.Faker("file_name", extension="pdf")
    sha256 = factory.Sequence(lambda n: _sha256(f"exhibit {n}"))
    size_bytes = 4096
    mime_type = "application/pdf"
    kind = Exhibit.Kind.PDF
    status = Exhibit.Status.READY

    @factory.post_generation
    def pages(self, create, extracted, **kwargs):
        if not create or not extracted:
            return
        for number, text in enumerate(extracted, start=1):
            PageFactory(exhibit=self, number=number, text=text, **kwargs)
        self.page_count = self.pages_pdf = len(extracted)
        self.save(update_fields=["page_count", "pages_pdf"])


class PageFactory(factory.django.DjangoModelFactory):
    """A page with text from the PDF's own text layer, on US Letter, numbered after the exhibit's last page.
    ``Page.save`` writes its reading form, so search and the verifier find it as they find an ingested page."""

    class Meta:
        model = Page

    exhibit = factory.SubFactory(ExhibitFactory)
    number = factory.LazyAttribute(lambda o: o.exhibit.pages.count() + 1)
    text = factory.Faker("paragraph", nb_sentences=6)
    source = Page.Source.PDF
    width_pt, height_pt = LETTER_PT


class ProductionFactory(factory.django.DjangoModelFactory):
    """A done production of its matter. ``pages=[page, ...]`` numbers them in order from ``first_number`` (one
    produced document per exhibit, each page's Bates number recorded as stamping records it), and ends the range
    at the last of them."""

    class Meta:
        model = Production
        skip_postgeneration_save = True

    matter = factory.SubFactory(MatterFactory)
    prefix = "SMITH"
    first_number = 1
    last_number = factory.LazyAttribute(lambda o: o.first_number)
    status = Production.Status.DONE
    finished_at = factory.LazyFunction(timezone.now)

    @factory.post_generation
    def pages(self, create, extracted, **kwargs):
        if not create or not extracted:
            return
        documents: dict[int, ProductionDocument] = {}
        rows = []
        for number, page in enumerate(extracted, start=self.first_number):
            if page.exhibit_id not in documents:
                documents[page.exhibit_id] = ProductionDocument.objects.create(
                    production=self, exhibit_id=page.exhibit_id, order=len(documents) + 1, first_number=number)
            document = documents[page.exhibit_id]
            document.last_number, document.page_count = number, document.page_count + 1
            rows.append(BatesPage(production=self, document=document, page=page, number=number,
                                  bates=self.bates(number)))
        BatesPage.objects.bulk_create(rows)
        for document in documents.values():
            document.save(update_fields=["last_number", "page_count"])
        self.last_number = self.first_number + len(extracted) - 1
        self.page_count = self.pages_done = len(extracted)
        self.save(update_fields=["last_number", "page_count", "pages_done"])


class DraftFactory(factory.django.DjangoModelFactory):
    """A draft of a matter, written by no job (``kind`` blank)."""

    class Meta:
        model = Draft

    matter = factory.SubFactory(MatterFactory)
    title = factory.Faker("sentence", nb_words=5)


class DraftVersionFactory(factory.django.DjangoModelFactory):
    """The next version of a draft (a new draft unless ``draft`` is given), written by a person; ``sha256`` is over
    its UTF-8 text, as the draft services store it."""

    class Meta:
        model = DraftVersion

    draft = factory.SubFactory(DraftFactory)
    number = factory.LazyAttribute(lambda o: o.draft.versions.count() + 1)
    text = factory.Faker("paragraph", nb_sentences=4)
    sha256 = factory.LazyAttribute(lambda o: _sha256(o.text))
    author_kind = DraftVersion.AuthorKind.PERSON


class FindingFactory(factory.django.DjangoModelFactory):
    """A grounded date found at the start of its version's text (the verdict is the status, as before an
    attorney resolves it); ``key`` is unique per finding, so no resolution carries over to it by accident."""

    class Meta:
        model = Finding

    version = factory.SubFactory(DraftVersionFactory, text=factory.SelfAttribute("..text"))
    kind = Finding.Kind.DATE
    status = Finding.Status.GROUNDED
    verdict = factory.SelfAttribute("status")
    text = "March 3, 2021"
    start = 0
    end = factory.LazyAttribute(lambda o: o.start + len(o.text))
    message = "Found on the cited page."
    key = factory.Sequence(lambda n: _sha256(f"finding {n}"))


class HostFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Host

    name = factory.Sequence(lambda n: f"host{n}")
    address = "127.0.0.1"


class GPUFactory(factory.django.DjangoModelFactory):
    """A V100 (32 GiB, compute capability 7.0) at the next NVML index of its host."""

    class Meta:
        model = GPU

    host = factory.SubFactory(HostFactory)
    index = factory.LazyAttribute(lambda o: o.host.gpus.count())
    name = "Tesla V100-SXM2-32GB"
    memory_total_mib = V100_MIB
    compute_capability = "7.0"


class BoardFactory(factory.django.DjangoModelFactory):
    """An NVLink group of its host holding ``gpus=[...]``, or by default two new GPUs of that host."""

    class Meta:
        model = Board
        skip_postgeneration_save = True

    host = factory.SubFactory(HostFactory)
    name = factory.Sequence(lambda n: f"Board {n}")
    kind = Board.Kind.NVLINK_GROUP

    @factory.post_generation
    def gpus(self, create, extracted, **kwargs):
        if create:
            self.gpus.set(extracted if extracted is not None else GPUFactory.create_batch(2, host=self.host))


class ModelServerFactory(factory.django.DjangoModelFactory):
    """An enabled llama.cpp server on loopback, pinned to every GPU of a new board of its host (``gpus=[...]``
    pins those instead, ``gpus=[]`` none), holding ``roles=[Role.DRAFTER, ...]`` (none by default)."""

    class Meta:
        model = ModelServer
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"server{n}")
    host = factory.SubFactory(HostFactory)
    base_url = factory.Sequence(lambda n: f"http://127.0.0.1:{18000 + n}")
    model_name = "scripted-model"
    context_tokens = 8192

    @factory.post_generation
    def gpus(self, create, extracted, **kwargs):
        if create:
            self.gpus.set(extracted if extracted is not None else BoardFactory(host=self.host).gpus.all())

    @factory.post_generation
    def roles(self, create, extracted, **kwargs):
        for role in (extracted or []) if create else []:
            RoleAssignment.objects.update_or_create(role=role, defaults={"server": self})
