"""The leak scan of a production's volume (:func:`scan_volume`), its natives read beside the stamping in a child
process (:class:`NativeScan`) (the standard library and :mod:`.leaks`; nothing from Django, so the child starts
without it).

Reading the natives is most of the scan's time (opening each in MuPDF, working out the key of each of its pages,
reading each of its objects: about 0.7 ms a page of one core, a flat profile of MuPDF calls and small Python steps
that much trimming has not made smaller), and the stamping of the next document does not need it. So a large
production hands each native, the very bytes it writes into the volume, to :class:`NativeScan` as it writes them;
one child process reads them in turn while the worker stamps on, and the worker takes over what the child found
(:meth:`.leaks.Scanner.absorb`, in the order the natives were written) once the volume is written. The rest of the
volume (TEXT, DAT, OPT, the index, page images through OCR) and the combined PDF are then scanned in the worker as
before, the combined PDF skipping every page and object the child read in a native
(:meth:`.leaks.Scanner.absorb_read`). One child is enough: it reads a native in about a fifth of the time the
worker takes to stamp it.

The child is this module run by the worker's own interpreter (``python -m``), not a multiprocessing child: the
ingest readers' sandbox sets multiprocessing's executable for the whole worker to its bubblewrap wrapper, and a
fork would share the worker's database connections and lease-keeping thread. The worker sends it pickles on its
standard input (the secrets and the keys of the ingested pages, not their texts; then a native's name and bytes
at a time; at the end a request for what it read). The child answers on its standard output in JSON lines and
nothing else, as ingest's children do (docs/security.md): it parses PDFs made from files the office received, and
a child a hostile file took over must not be able to run code in the worker, which unpickling its answers would
allow. Each answer is checked for its shape and size; one that is not an answer fails the scan. A thread of the
worker reads the answers as they come, so neither side waits on a full pipe. The child inherits the worker's
niceness and ends when its input closes (the production ended, or the worker died); an exception reading a native
fails the scan with its words when the worker takes the results over, as the same native read in the worker
would.
"""

import json
import os
import pickle
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

from .leaks import Finding, Scanner, ScanRead, Secrets

_REPOSITORY = Path(__file__).resolve().parents[3]
# The longest answer line the worker reads: what a child read at 100,000 pages is about 25 MiB of digests.
ANSWER_MAX_BYTES = 256 * 1024 * 1024


class BadAnswer(Exception):
    """The child sent something that is not an answer."""


def _child_command() -> list[str]:
    return [sys.executable, "-m", __name__]


class NativeScan:
    """A child process scanning natives for ``secrets`` as :meth:`submit` hands them over; ``ingested_keys``: the
    keys of the exhibit pages ingest read from their text layer (:class:`.leaks.IngestedPages`). Use as a context
    manager, so the child stops with the production however it ends."""

    def __init__(self, secrets: Secrets, ingested_keys: frozenset[bytes]):
        self.names: list[str] = []
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(_REPOSITORY),
                                                                         os.environ.get("PYTHONPATH")])))
        self._child = subprocess.Popen(_child_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._answers: list[tuple] = []
        self._arrived = threading.Condition()
        self._ended = False
        self._reader = threading.Thread(target=self._read_answers, name="lawdesk-leak-scan-answers", daemon=True)
        self._reader.start()
        self._send((secrets.runs, ingested_keys))

    def __enter__(self) -> "NativeScan":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _send(self, message) -> None:
        try:
            pickle.dump(message, self._child.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self._child.stdin.flush()
        except (BrokenPipeError, ValueError):  # the child has ended: absorb_into says so
            pass

    def _read_answers(self) -> None:
        while True:
            try:
                line = self._child.stdout.readline(ANSWER_MAX_BYTES + 1)
            except (OSError, ValueError):
                break
            if not line:
                break
            try:
                answer = _answer(line)
            except BadAnswer as exc:
                answer = exc
            with self._arrived:
                self._answers.append(answer)
                self._arrived.notify_all()
            if isinstance(answer, BadAnswer):
                self._child.kill()
                break
        with self._arrived:
            self._ended = True
            self._arrived.notify_all()

    def submit(self, name: str, data: bytes) -> None:
        """Scan the native PDF ``data``, the volume's member ``name``, in the child."""
        self.names.append(name)
        self._send((name, data))

    def absorb_into(self, scanner: Scanner) -> None:
        """Wait for the child to read every native submitted, and hand ``scanner`` what it found and read
        (:meth:`.leaks.Scanner.absorb`, :meth:`.leaks.Scanner.absorb_read`). Raises what reading a native
        raised, and RuntimeError when the child stopped before it answered."""
        self._send(None)
        expected = len(self.names) + 1
        with self._arrived:
            self._arrived.wait_for(lambda: len(self._answers) >= expected or self._ended)
            answers = list(self._answers)
        bad = next((answer for answer in answers if isinstance(answer, BadAnswer)), None)
        if bad is not None or len(answers) < expected:
            self._child.kill()  # it may still be alive, waiting for input nobody will send
            self._child.wait()
            if bad is not None:
                raise RuntimeError(f"the leak scan's child process sent something that is not an answer ({bad})")
            raise RuntimeError(f"the leak scan's child process stopped (exit status {self._child.returncode}) "
                               f"after {min(len(answers), len(self.names))} of the production's {len(self.names)} "
                               "natives")
        for answer in answers[:expected]:
            if "error" in answer:
                raise RuntimeError(answer["error"])
        for answer in answers[:expected - 1]:
            scanner.absorb(answer["findings"], answer["unread"])
        if "read" not in answers[expected - 1]:
            raise RuntimeError("the leak scan's child process answered out of turn")
        scanner.absorb_read(answers[expected - 1]["read"])

    def close(self) -> None:
        """Stop the child, dropping the natives it has not read."""
        if self._child.poll() is None:
            try:
                self._child.stdin.close()
            except OSError:
                pass
            self._child.kill()
        self._child.wait()
        self._reader.join()
        self._child.stdout.close()


def scan_volume(scanner: Scanner, zip_path: Path, pdf_path: Path, pdf_name: str,
                read_images: set[str] = frozenset(), natives: "NativeScan | None" = None) -> None:
    """Scan every member of the volume ZIP at ``zip_path``, then the combined PDF at ``pdf_path`` (named
    ``pdf_name`` in findings), with ``scanner``. ``read_images``: the page images to read through its OCR.
    ``natives``: the natives already handed to a :class:`NativeScan` as they were written; what it found and
    read is taken over first, and those members are not read again."""
    scanned = set()
    if natives is not None:
        natives.absorb_into(scanner)
        scanned = set(natives.names)
    with zipfile.ZipFile(zip_path) as volume:
        for name in volume.namelist():
            if name not in scanned:
                scanner.scan_file(volume.read(name), name, read_image=name in read_images)
    scanner.scan_pdf_file(pdf_path, pdf_name)


def _strings(value, width: int) -> list:
    if not isinstance(value, list) or not all(
            isinstance(row, list) and len(row) == width and all(isinstance(item, str) for item in row)
            for row in value):
        raise BadAnswer("a list of strings was expected")
    return value


def _digests(value) -> set[bytes]:
    if not isinstance(value, list) or not all(isinstance(item, str) and len(item) == 40 for item in value):
        raise BadAnswer("a list of digests was expected")
    try:
        return {bytes.fromhex(item) for item in value}
    except ValueError as exc:
        raise BadAnswer("a digest is not hexadecimal") from exc


def _answer(line: bytes) -> dict:
    """One answer of the child, checked: ``{"findings": [Finding], "unread": [(where, key)]}`` for a native,
    ``{"error": words}``, or ``{"read": ScanRead}``. Raises BadAnswer for anything else."""
    if len(line) > ANSWER_MAX_BYTES or not line.endswith(b"\n"):
        raise BadAnswer("an answer is too long")
    try:
        answer = json.loads(line)
    except ValueError as exc:
        raise BadAnswer("an answer is not JSON") from exc
    if not isinstance(answer, dict):
        raise BadAnswer("an answer is not an object")
    if "error" in answer and isinstance(answer["error"], str):
        return {"error": answer["error"][:2000]}
    if "findings" in answer:
        unread = _strings(answer.get("unread"), 2)
        try:
            keys = [bytes.fromhex(key) for _where, key in unread]
        except ValueError as exc:
            raise BadAnswer("a page key is not hexadecimal") from exc
        return {"findings": [Finding(*row) for row in _strings(answer["findings"], 3)],
                "unread": [(where, key) for (where, _hex), key in zip(unread, keys)]}
    read = answer.get("read")
    if isinstance(read, dict):
        counts = read.get("pages_extracted"), read.get("pages_ingested")
        if not all(isinstance(count, int) and count >= 0 for count in counts):
            raise BadAnswer("a count is not a number")
        return {"read": ScanRead(_digests(read.get("streams")), _digests(read.get("objects")),
                                 _digests(read.get("pages")), *counts)}
    raise BadAnswer("an answer of no known kind")


def _serve() -> None:
    """The child: read the secrets and keys, then answer each native (its findings and unchanged pages, or the
    exception reading it raised) and each request for what was read, until the input ends."""
    channel = os.fdopen(os.dup(1), "wb")
    # MuPDF and anything else printing goes to standard error, never into the answers.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer
    runs, ingested_keys = pickle.load(requests)
    scanner = Scanner(Secrets(runs=runs), ingested_keys=ingested_keys)
    while True:
        try:
            request = pickle.load(requests)
        except EOFError:
            return
        if request is None:
            read = scanner.read()
            answer: dict = {"read": {"streams": [d.hex() for d in read.streams],
                                     "objects": [d.hex() for d in read.objects],
                                     "pages": [d.hex() for d in read.pages],
                                     "pages_extracted": read.pages_extracted, "pages_ingested": read.pages_ingested}}
        else:
            name, data = request
            found, unread = len(scanner.findings), len(scanner.unread_texts)
            try:
                scanner.scan_file(data, name)
                answer = {"findings": [[f.where, f.text, f.what] for f in scanner.findings[found:]],
                          "unread": [[where, key.hex()] for where, key in scanner.unread_texts[unread:]]}
            except Exception as exc:
                answer = {"error": f"{name} could not be scanned for what must not leave ({exc})"}
        channel.write(json.dumps(answer).encode() + b"\n")
        channel.flush()


if __name__ == "__main__":
    _serve()
