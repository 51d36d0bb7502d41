"""Every JSON document lnrepro writes or prints during a test session is kept (the
``LNREPRO_JSON_CAPTURE`` folder, lnrepro/doors/fsio.py) and checked against docs/schemas.

The controller of the session checks them as they come, in a thread: it is idle while the workers
run, and checking the ~1,800 documents of a whole run one after another at its end was 6 to 8 s
of wall time on one core with the other idle. When the session ends only the last few are left.
A document appears whole (written beside, then renamed), so each is read once.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tests.consumers.schemas import errors


class CaptureCheck:
    def __init__(self, folder: Path, every_s: float = 1.0) -> None:
        self.folder = folder
        self.every_s = every_s
        self.seen: set[Path] = set()
        self.bad: list[tuple[Path, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="capture-check", daemon=True)

    def start(self) -> CaptureCheck:
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self._sweep()

    def _sweep(self) -> None:
        new = sorted(set(self.folder.glob("*.json")) - self.seen) if self.folder.is_dir() else []
        for f in new:
            self.seen.add(f)
            self.bad += [(f, e) for e in errors(f.read_text(encoding="utf-8"))[:3]]

    def finish(self) -> tuple[list[Path], list[tuple[Path, str]]]:
        """Stop, check what is left; every document and every error, in order."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._sweep()
        return sorted(self.seen), sorted(self.bad)
