"""The simulated users of bench/load.py (a locustfile; locust runs it, never the app).

Each user holds a logged-in session made by bench/load_matter.py and, with a second or so between requests, opens
what an attorney or assistant opens during a working day: the matter page, a page of its exhibit list, a page in
the viewer, a search (as the search box sends it, an htmx request for the results only), the review page of the
draft, and an original's download. Anything but a 200 counts as an error, a redirect to the login page included.
The matter is described by the JSON file named in ``LOAD_BENCH_MATTER``.
"""

import itertools
import json
import os
import random

from locust import HttpUser, between, task

MATTER = json.loads(open(os.environ["LOAD_BENCH_MATTER"]).read())
SESSIONS = itertools.cycle(MATTER["sessions"])  # one session per user while there are enough
EXHIBITS_PER_LIST_PAGE = 100
# Common words (most pages hold them: the case that made PostgreSQL scan every page), rarer ones and phrases.
QUERIES = ["court", "the court", "appeal", "judgment", "district court", '"summary judgment"', "plaintiff",
           "jurisdiction", "affirmed", "counsel", "evidence", "motion to dismiss", '"due process"', "statute"]


class Attorney(HttpUser):
    wait_time = between(0.5, 1.5)

    def on_start(self) -> None:
        self.client.cookies.set("sessionid", next(SESSIONS))
        self.base = f"/matters/{MATTER['matter']}"

    def _get(self, name: str, url: str, **kwargs) -> None:
        with self.client.get(url, name=name, allow_redirects=False, catch_response=True, **kwargs) as response:
            if response.status_code != 200:
                response.failure(f"status {response.status_code}")

    @task(3)
    def matter_page(self) -> None:
        self._get("matter page", f"{self.base}/")

    @task(2)
    def exhibit_list(self) -> None:
        last = (len(MATTER["exhibits"]) - 1) // EXHIBITS_PER_LIST_PAGE + 1
        self._get("exhibit list", f"{self.base}/?page={random.randint(1, last)}",
                  headers={"HX-Request": "true", "HX-Target": "exhibit-list"})

    @task(6)
    def page_viewer(self) -> None:
        exhibit = random.choice(MATTER["exhibits"])
        self._get("page viewer", f"{self.base}/exhibits/{exhibit['id']}/pages/{random.randint(1, exhibit['pages'])}/")

    @task(3)
    def search(self) -> None:
        self._get("search", f"{self.base}/", params={"q": random.choice(QUERIES)},
                  headers={"HX-Request": "true", "HX-Target": "search-results"})

    @task(2)
    def review_page(self) -> None:
        self._get("review page", f"{self.base}/drafts/{MATTER['draft']}/")

    @task(1)
    def download(self) -> None:
        exhibit = random.choice(MATTER["exhibits"])
        self._get("download", f"{self.base}/exhibits/{exhibit['id']}/original/")
