"""The password every test account gets (``make_user``), for tests that log in through a form."""

PASSWORD = "correct-horse-battery"
