"""The job and digest pages are guarded by the login middleware alone (``LoginRequiredMiddleware`` in the
settings): an anonymous request, GET or POST, is sent to the login page and nothing runs. The chronology's page is
in ``tests/matters/test_access.py``."""

import pytest
from django.urls import reverse

from pipeline.job_models import Job

pytestmark = pytest.mark.django_db

# No such rows exist: the middleware answers before any view looks for them.
URLS = [
    ("pipeline:jobs", [1]), ("pipeline:job", [1]), ("pipeline:job_cancel", [1]), ("pipeline:stage_retry", [1]),
    ("pipeline:job_continue", [1]), ("pipeline:job_front", [1]), ("pipeline:digests", [1]),
    ("pipeline:digests_request", [1]), ("pipeline:exhibit_digest", [1, 1]),
    ("pipeline:exhibit_digest_request", [1, 1]), ("matters:chronology", [1]),
]


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("name, args", URLS)
def test_an_anonymous_request_is_sent_to_the_login_page(client, name, args, method):
    url = reverse(name, args=args)
    response = getattr(client, method)(url, {"reason": "an anonymous request to start work"})
    assert response.status_code == 302, url
    assert response.url.startswith(reverse("login")) and "next=" in response.url, url
    assert not Job.objects.exists()
