"""The breadcrumb trail: every page's trail comes from the one ``crumbs`` tag, and none ends in a separator."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template import Context, Template
from django.urls import reverse

from matters.models import IncomingBatesPage, IncomingProduction
from matters.templatetags.crumbs import SEPARATOR
from tests.factories import DraftVersionFactory, ExhibitFactory, ProductionFactory

pytestmark = pytest.mark.django_db

_TRAIL = re.compile(r'<p class="crumbs">(.*?)</p>', re.DOTALL)


def test_no_template_writes_a_trail_of_its_own():
    written = [str(path) for folder in settings.TEMPLATES[0]["DIRS"] for path in Path(folder).rglob("*.html")
               if 'class="crumbs"' in path.read_text() or "›</p>" in path.read_text()]
    assert written == []


def test_the_separator_stands_only_between_links():
    html = Template('{% load crumbs %}{% crumbs "Smith v. Jones" "/m/1/" "Drafts" "/m/1/d/" %}').render(Context())
    assert html == '<p class="crumbs"><a href="/m/1/">Smith v. Jones</a> › <a href="/m/1/d/">Drafts</a></p>'
    one = Template('{% load crumbs %}{% crumbs name "/m/2/" %}').render(Context({"name": "A & B"}))
    assert one == '<p class="crumbs"><a href="/m/2/">A &amp; B</a></p>'


def test_no_page_ends_its_trail_in_a_separator(client, attorney, matter):
    exhibit = ExhibitFactory(matter=matter, pages=["The tenant paid rent."])
    production = ProductionFactory(matter=matter, pages=list(exhibit.pages.all()))
    version = DraftVersionFactory(draft__matter=matter)
    incoming = IncomingProduction.objects.create(matter=matter, origin="opposing_party", source_name="VOL001.zip",
                                                 sha256="0" * 64, status=IncomingProduction.Status.DONE)
    IncomingBatesPage.objects.create(incoming=incoming, page=exhibit.pages.get(), bates="JONES0001")
    ids = [matter.pk]
    pages = [reverse("matters:productions", args=ids), reverse("matters:audit", args=ids),
             reverse("matters:drafts", args=ids), reverse("matters:exhibit", args=[*ids, exhibit.pk]),
             reverse("matters:page", args=[*ids, exhibit.pk, 1]),
             reverse("matters:draft", args=[*ids, version.draft.pk]),
             reverse("matters:draft_versions", args=[*ids, version.draft.pk]),
             reverse("matters:incoming", args=[*ids, incoming.pk]),
             reverse("matters:privilege_log", args=[*ids, production.pk])]
    client.force_login(attorney)
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        trails = _TRAIL.findall(response.content.decode())
        assert len(trails) == 1, url
        assert trails[0].startswith(f'<a href="{matter.get_absolute_url()}">'), url
        assert not trails[0].rstrip().endswith(SEPARATOR.strip()), url
