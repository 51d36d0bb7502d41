"""The one door for writing files: atomic writes, fresh record directories.

Nothing lnrepro writes ever replaces a record the user already had: a record
directory is new for every run, and files are written to a temporary name and
renamed into place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from lnrepro.errors import DiskFull, EnvironmentProblem
from lnrepro.model.checkout import (
    BUILD_METAL,
    CHECKOUT_FILES,
    SFPI_VERSION,
    TreeFacts,
    default_toolchain,
)


def write_error(path: Path, exc: OSError) -> EnvironmentProblem:
    """A failed write as the one-line error it is: a full disk, or an unusable directory."""
    if exc.errno == errno.ENOSPC:
        return DiskFull(
            f"no space left on the device writing {path}", f"free space at {path.parent}"
        )
    return EnvironmentProblem(f"cannot write {path}: {exc.strerror}", "check the record directory")


@contextlib.contextmanager
def log_writer(path: Path) -> Iterator[Callable[[bytes], None]]:
    """A log opened for writing, as the function that appends to it. Only the log's own failures
    become write errors: what the code around it raises goes through as it is (a runner's or the
    Docker SDK's OSError is not "cannot write the log")."""
    try:
        fh = path.open("wb")
    except OSError as exc:
        raise write_error(path, exc) from None

    def put(data: bytes) -> None:
        try:
            fh.write(data)
        except OSError as exc:
            raise write_error(path, exc) from None

    try:
        yield put
    except BaseException:
        with contextlib.suppress(OSError):
            fh.close()
        raise
    try:
        fh.close()
    except OSError as exc:
        raise write_error(path, exc) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temporary file and a rename; the result has the permissions ``open`` gives."""
    atomic_write_bytes(path, text.encode("utf-8", "surrogateescape"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temporary file and a rename; the result has the permissions ``open`` gives."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; records are as readable as logs
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
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
        raise EnvironmentProblem(
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
        except OSError as exc:
            raise EnvironmentProblem(
                f"cannot create a record directory under {base}: {exc.strerror}",
                f"make {base} writable (and free space there), or pass --record-dir",
            ) from None
    raise EnvironmentProblem(f"cannot find a free record name under {base}", "clean up old records")


def write_json(path: Path, doc: object) -> None:
    """A document as strict JSON (:func:`lnrepro.model.jsonio.dumps`), written atomically; a
    failed write is the one-line error it is."""
    from lnrepro.model.jsonio import dumps

    text = dumps(doc)
    write_text(path, text + "\n")
    capture_json(text)


def write_text(path: Path, text: str) -> None:
    """``text`` written atomically; a failed write is the one-line error it is."""
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise write_error(path, exc) from None


_captured = 0


def capture_json(text: str) -> None:
    """``LNREPRO_JSON_CAPTURE=DIR``: also keep a copy of every JSON document lnrepro writes or
    prints in DIR (the test suite checks them all against docs/schemas). Never fails a command."""
    global _captured
    where = os.environ.get("LNREPRO_JSON_CAPTURE")
    if not where:
        return
    _captured += 1
    with contextlib.suppress(OSError):
        Path(where).mkdir(parents=True, exist_ok=True)
        final = Path(where) / f"{os.getpid()}-{_captured}-{time.monotonic_ns()}.json"
        part = final.with_suffix(".part")  # a process killed mid-write leaves no half document
        part.write_text(text, encoding="utf-8")
        part.replace(final)


# ------------------------------------------------------------------ a checkout's files
def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_tree(checkout: Path) -> TreeFacts:
    """:class:`~lnrepro.model.checkout.TreeFacts` of the files checked out at ``checkout`` now."""
    files = {f: _read_text(checkout / f) for f in CHECKOUT_FILES}
    present = {f for f in SFPI_VERSION if (checkout / f).is_file()}
    toolchain = default_toolchain(files.get(BUILD_METAL) or "")
    if toolchain and (checkout / toolchain).is_file():
        present.add(toolchain)
    return TreeFacts.parse(files, frozenset(present))
