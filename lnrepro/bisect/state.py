"""Where a bisect keeps its state, the lock that keeps two bisects apart, and reading it back.

* State: ``<git-common-dir>/lnrepro/bisect.json`` (a :class:`BisectRecord`, schema
  ``lnrepro.bisect/6``), rewritten atomically after every step, and the same document in the
  bisect's record directory. It holds the whole request, so ``--resume`` needs nothing else.
* Lock: ``<git-common-dir>/lnrepro/bisect.lock`` with the owner's pid; a dead owner's lock is
  taken over.
* Worktrees: ``<git-common-dir>/lnrepro/worktree[-N]``, one per job, reused across steps and
  runs so incremental builds and ccache pay off.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from lnrepro.doors import gitops
from lnrepro.doors.container import owner_label
from lnrepro.doors.fsio import write_json
from lnrepro.doors.store import lock_owner
from lnrepro.errors import EnvironmentProblem, InputError, MalformedRecord, UsageError
from lnrepro.model import jsonio
from lnrepro.model.bisect import OLDER_SCHEMAS, SCHEMA, BisectRecord, BisectState, decode

OLD_SCHEMAS = ("lnrepro.bisect/2",)


def state_dir(repo: Path) -> Path:
    return gitops.common_dir(repo) / "lnrepro"


def state_path(repo: Path) -> Path:
    return state_dir(repo) / "bisect.json"


def worktree_path(repo: Path, job: int) -> Path:
    return state_dir(repo) / ("worktree" if job == 0 else f"worktree-{job}")


def _unusable(path: Path, exc: OSError) -> EnvironmentProblem:
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return EnvironmentProblem(
            f"cannot write the bisect's state at {path}: {exc.strerror}",
            "bisect a clone on a writable disk (git clone --shared keeps it small)",
        )
    return EnvironmentProblem(f"cannot use {path}: {exc.strerror}", f"remove {path} and retry")


@contextlib.contextmanager
def lock(repo: Path) -> Iterator[None]:
    """One bisect per repository; a lock whose owner is dead is taken over."""
    path = state_dir(repo) / "bisect.lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unusable(path.parent, exc) from None
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            if path.is_dir() and not path.is_symlink():
                raise EnvironmentProblem(
                    f"the bisect lock {path} is a directory", f"remove it: rmdir {path}"
                ) from None
            pid = lock_owner(path)
            if pid is not None and pid != str(os.getpid()):
                raise UsageError(
                    f"another lnrepro bisect (pid {pid}) is running on {repo}",
                    "wait for it, or stop it; its state survives and --resume continues it",
                ) from None
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # its owner is gone
        except OSError as exc:
            raise _unusable(path, exc) from None
    else:
        raise EnvironmentProblem(
            f"cannot take the bisect lock {path}", "remove it if no bisect runs"
        )
    try:
        os.write(fd, f"{owner_label()}\n".encode())  # judged as containers' owners are
        os.close(fd)
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


def load(repo: Path, to: str = "resume") -> BisectRecord:
    """The bisect whose state is in ``repo``; a missing, damaged or older one says what to do.
    ``to`` is what the caller wants of it ("resume", "show")."""
    path = state_path(repo)
    if not path.exists():
        raise InputError(
            f"no bisect to {to} in {repo}: none has been started there",
            "start one with --good and --bad",
        )
    return read(path)


def read(path: Path) -> BisectRecord:
    """A bisect record from its file (state or record copy)."""
    r, schema = jsonio.load_schema(path)
    if schema in OLD_SCHEMAS:
        raise MalformedRecord(
            f"{path} was written by an older lnrepro ({schema}), whose state does not hold "
            "every option of the bisect",
            f"finish it with that version, or move {path} aside and start again",
        )
    # /3 lacks only the hang keys, /4 the lost jobs, /5 the margins: they resume
    if schema not in (*OLDER_SCHEMAS, SCHEMA):
        raise MalformedRecord(
            f"{path} is not an lnrepro bisect state (schema {schema!r})",
            f"move {path} aside and start again",
        )
    return decode(r.value, str(path))


def finished(record: BisectRecord) -> bool:
    """The bisect is over with an answer (a commit, or undecided): ``--resume`` has nothing to
    continue. One whose endpoints did not separate is not: resuming says that error again."""
    r = record.result
    return record.state is BisectState.COMPLETE and r is not None and not r.error


def check_replaceable(repo: Path) -> None:
    """A new bisect replaces the repository's saved one only when that one is over (finished,
    or stopped by an error): an interrupted one (Ctrl-C, a kill, a lost terminal) is the user's
    to continue or to discard, and starting another must not lose it silently. Called holding
    the lock, so a bisect saved as running is one whose process is gone."""
    import shlex

    path = state_path(repo)
    if not path.exists():
        return
    try:
        old = read(path)
    except InputError:
        return  # damaged or from an older lnrepro: nothing to continue (--resume says so)
    if old.state not in (BisectState.RUNNING, BisectState.INTERRUPTED) or old.result is not None:
        return
    where = "" if repo == Path.cwd() else f" --repo {shlex.quote(str(repo))}"
    why = old.stop_reason or "its process is gone"
    raise UsageError(
        f"the bisect {old.id or ''} saved in {repo} did not finish ({why}; "
        f"{len(old.steps)} step(s)), and a new one would replace it",
        f"continue it with `lnrepro bisect --resume{where}`, or discard it "
        f"(rm {shlex.quote(str(path))}) and start again",
    )


def save(record: BisectRecord, repo: Path) -> None:
    """The state file and the record copy, each rewritten atomically."""
    doc = record.to_json()
    for path in (state_path(repo), record.record):
        if path is not None:
            write_json(path, doc)
