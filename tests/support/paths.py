"""Where the repository and the shared public corpus are, for tests and the processes they start."""

from pathlib import Path

from bench.corpus import corpus_dir

BASE_DIR = Path(__file__).resolve().parent.parent.parent
# Beside the repository unless LAWDESK_CORPUS says otherwise (bench.corpus); tests only ever read copies of it.
CORPUS = corpus_dir()
