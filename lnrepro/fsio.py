"""The one door for writing files: atomic writes, fresh record directories.

Nothing lnrepro writes ever replaces a record the user already had: a record
directory is new for every run, and files are written to a temporary name and
renamed into place.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from lnrepro.errors import InputError


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def new_record_dir(base: Path, prefix: str) -> Path:
    """A directory under ``base`` that did not exist before: ``<prefix>-YYYYmmdd-HHMMSS[-N]``."""
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create record directory {base}: {exc.strerror}",
            "pass --record-dir with a writable directory",
        ) from None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        candidate = base / (f"{prefix}-{stamp}" + (f"-{n}" if n else ""))
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise InputError(f"cannot find a free record name under {base}", "clean up old records")
