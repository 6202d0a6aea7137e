# The two commands of the README. Each installs what it needs first (Debian packages when missing, then a
# virtual environment from requirements.txt).
.PHONY: run test bench

run:
	scripts/setup.sh run
	.venv/bin/python -m lawdesk.run

test:
	scripts/test.sh

bench:
	scripts/setup.sh test
	.venv/bin/python bench/ingest.py
