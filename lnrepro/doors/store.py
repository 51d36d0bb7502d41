"""Saved records: find, list and load what ``run`` and ``bisect`` wrote, as types. Reading only.

Layout, under the record directory (``--record-dir``, default ``.lnrepro/runs``)::

    run-YYYYmmdd-HHMMSS[-N]/record.json      lnrepro.run/5    (a run and its logs)
    bisect-YYYYmmdd-HHMMSS[-N]/bisect.json   lnrepro.bisect/6 (a bisect's request, steps, result)

A record's id is its directory's name. Older schemas load for viewing (``lnrepro.run/1`` to
``/3``, ``lnrepro.bisect/2`` to ``/4``). A record that cannot be read is listed as ``unreadable`` with the
reason, never a crash, and never stops the rest of the listing. ``last`` names the newest record;
a unique prefix of an id works too.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from lnrepro.doors.proc import stat_fields
from lnrepro.errors import EnvironmentProblem, InputError, MalformedRecord
from lnrepro.model import bisect, jsonio
from lnrepro.model.bisect import BisectRecord, BisectState
from lnrepro.model.listing import Listed, ListedState, RecordKind
from lnrepro.model.record import SCHEMA as RUN_SCHEMA
from lnrepro.model.record import RunRecord

RUN_SCHEMAS = ("lnrepro.run/1", "lnrepro.run/2", "lnrepro.run/3", "lnrepro.run/4", RUN_SCHEMA)
BISECT_SCHEMAS = (*bisect.OLDER_SCHEMAS, bisect.SCHEMA)
FILES = {"run": "record.json", "bisect": "bisect.json"}
Record = RunRecord | BisectRecord


@dataclass(frozen=True, kw_only=True)
class Entry(Listed):
    """One saved record, as ``lnrepro runs`` lists it: its :class:`Listed` line, and the record
    itself for describing it."""

    problem: str | None = None  # why it is unreadable
    record: Record | None = field(default=None, compare=False, repr=False)

    def document(self) -> Listed:
        """The entry as ``runs --json`` writes it."""
        return Listed(**{f.name: getattr(self, f.name) for f in fields(Listed)})


# ---------------------------------------------------------------------------------- reading
def load_path(path: Path) -> Record:
    """A record from its file or its directory."""
    if path.is_dir():
        for name in FILES.values():
            if (path / name).exists():
                path = path / name
                break
        else:
            raise InputError(
                f"{path} holds no lnrepro record", "pass a run-* or bisect-* directory"
            )
    _looks_like_a_record(path)
    r, schema = jsonio.load_schema(path)
    if schema is None:
        raise MalformedRecord(
            f"{path} is not an lnrepro record (a JSON document with no schema)", NOT_A_RECORD_FIX
        )
    assert isinstance(r.value, dict)  # load_schema refused anything else
    if schema in RUN_SCHEMAS:
        if schema in RUN_SCHEMAS[:2]:
            r = jsonio.Reader(_upgrade_run(r.value), str(path))  # /3 reads as /4: hang is new
        return RunRecord.from_json(r, path.parent)
    if schema in BISECT_SCHEMAS:
        rec = bisect.decode(r.value, str(path))  # older schemas upgraded
        rec.id = path.parent.name if path.name == FILES["bisect"] else rec.id
        return rec
    raise MalformedRecord(
        f"{path} has schema {schema!r}, which this lnrepro does not know",
        f"known: {', '.join(RUN_SCHEMAS + BISECT_SCHEMAS)}; a newer lnrepro may read it",
    )


NOT_A_RECORD_FIX = (
    "pass a run or bisect: its id (`lnrepro runs` lists them), `last`, or its directory or "
    "record.json"
)


def _looks_like_a_record(path: Path) -> None:
    """A file that is not JSON at all (a script, a log) is not a record; one that starts as a
    JSON object and breaks off is a record cut off while being written (jsonio says so)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return  # jsonio's read says why
    if head and not head.startswith(b"{"):
        raise MalformedRecord(
            f"{path} is not an lnrepro record (not a JSON object)", NOT_A_RECORD_FIX
        )


# what a /1 or /2 run's emulator backend recorded of its spec
_EMULATOR_KEYS = ("kernel_era", "arch", "block_size", "l1_max_tiles", "fp32_stats", "data", "seed")


def _upgrade_run(d: dict[str, Any]) -> dict[str, Any]:
    """A /1 or /2 run document in /3's shape (its request rebuilt from what it recorded)."""
    b: dict[str, Any] = d["backend"] if isinstance(d.get("backend"), dict) else {}
    kind = b.get("backend", "emulator")
    spec: dict[str, Any] = {"backend": kind}
    if kind == "emulator":
        spec.update({k: b[k] for k in _EMULATOR_KEYS if b.get(k) is not None})
    elif kind == "local":
        spec["binary"] = b.get("binary", "")
    else:
        prof = b.get("profile")
        spec.update(
            {
                "checkout": b.get("checkout", ""),
                "runner": b.get("runner", "docker"),
                "profile": prof.get("name") if isinstance(prof, dict) else prof,
                "image": b.get("image"),
                "mount_set": b.get("mount_set", "full"),
                "env": b.get("env") or {},
                "reset_cmd": b.get("reset_cmd"),
                "watcher_s": b.get("watcher_s"),
            }
        )
    tests = {
        "filter": d.get("filter", "*"),
        "repeat": d.get("repeat", 1),
        "timeout_s": d.get("timeout_s") or 1800.0,
    }
    return {
        **d,
        "request": {
            "backend": spec,
            "tests": tests,
            "record_dir": str(Path(str(d.get("record_dir", "."))).parent),
        },
    }


def entry(path: Path) -> Entry:
    """What ``runs`` shows of one record file; unreadable ones say why."""
    kind = RecordKind.BISECT if path.name == FILES["bisect"] else RecordKind.RUN
    rid = path.parent.name
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = 0.0
    at = functools.partial(Entry, kind=kind, path=path, mtime=mtime)
    try:
        rec = load_path(path)
    except InputError as exc:
        return at(
            id=rid,
            state=ListedState.UNREADABLE,
            headline="",
            where="",
            commit=None,
            problem=exc.message,
        )
    if isinstance(rec, RunRecord):
        b = rec.backend
        where = str(b.get("backend", rec.request.backend.kind.value))
        if b.get("runner"):
            where += f"/{b['runner']}"
        commit = rec.fingerprint.get("commit")
        return at(
            id=rec.id,
            state=ListedState(rec.state.value),
            headline=rec.headline,
            where=where,
            commit=str(commit) if isinstance(commit, str) else None,
            record=rec,
        )
    state, headline = ListedState(rec.state.value), rec.headline
    if rec.state is BisectState.RUNNING and rec.result is None and not _bisect_running(rec):
        state, headline = ListedState.INTERRUPTED, f"{headline}; its process is gone"
    return at(
        id=rec.id or rid,
        state=state,
        headline=headline,
        where=str(rec.request.repo),
        commit=rec.request.bad,
        record=rec,
    )


# ---------------------------------------------------------------------------------- owners
def lock_owner(lock: Path) -> str | None:
    """The pid of the live lnrepro that holds a bisect's lock; None when there is no lock or
    its owner is gone. The lock names its owner as the container door labels containers
    (:func:`lnrepro.doors.container.owner_label`: host, boot, pid namespace, pid, start time),
    and is judged the same way, so a reused pid is not taken for the owner; an owner on another
    machine (a shared disk) is never judged gone. An older lnrepro's lock holds the pid alone."""
    from lnrepro.doors.container import owner_gone

    try:
        # bytes that are not text (a disk's garbage) name no owner: a stale lock like any other
        text = lock.read_bytes().decode("utf-8", "replace").strip()
    except OSError:
        return None
    if text.isascii() and text.isdigit():
        return (
            text if text != "0" and Path(f"/proc/{text}").exists() and not _zombie(text) else None
        )
    if text.count("/") != 4 or owner_gone(text):
        return None
    pid = text.split("/")[3]
    return None if _zombie(pid) else pid


def _zombie(pid: str) -> bool:
    """Killed but not yet reaped: still in /proc with its start time, and gone all the same."""
    return (stat_fields(pid) or [""])[0] in ("Z", "X")


def _bisect_running(rec: BisectRecord) -> bool:
    """A bisect saved as running runs only while an lnrepro holds its repository's lock and
    the repository's state is this bisect (one bisect per repository); else its process died
    (kill -9, SIGPIPE, a reboot) before it could say so."""
    import json

    try:
        from lnrepro.doors import gitops

        where = gitops.common_dir(rec.request.repo) / "lnrepro"
        if lock_owner(where / "bisect.lock") is None:
            return False
        state = json.loads((where / "bisect.json").read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - no repository, no git, no state: nothing runs it
        return False
    return isinstance(state, dict) and state.get("id") == rec.id


# ---------------------------------------------------------------------------------- finding
Bases = Path | Sequence[Path]


def bases_for(record_dir: Path, given: bool, cwd: Path | None = None) -> list[Path]:
    """Where to look: ``--record-dir`` when given; else ``.lnrepro/runs`` and, inside a git
    repository, the bisects' own ``<git-common-dir>/lnrepro/runs`` (kept out of the checkout)."""
    if given:
        return [record_dir]
    out = [record_dir]
    try:
        from lnrepro.doors import gitops

        out.append(gitops.common_dir(cwd or Path.cwd()) / "lnrepro" / "runs")
    except Exception:  # noqa: BLE001 - not a repository, or no git: nothing more to look at
        pass
    return out


def _each(bases: Bases) -> list[Path]:
    return [bases] if isinstance(bases, Path) else list(bases)


def scan(bases: Bases) -> list[Entry]:
    """Every record under the base directories, oldest first."""
    out = [entry(p) for base in _each(bases) for p in _record_files(base)]
    return sorted(out, key=lambda e: (e.mtime, e.id))


def _record_files(base: Path) -> Iterator[Path]:
    try:
        dirs = list(os.scandir(base))
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise EnvironmentProblem(
            f"cannot list {base}: {exc.strerror}",
            f"make {base} readable, or pass another --record-dir",
        ) from None
    for d in dirs:
        for name in FILES.values():
            p = Path(d.path) / name
            try:
                if d.is_dir() and p.exists():
                    yield p
            except OSError:  # a symlink loop, a directory we may not enter: listed as such
                if name == FILES["run"]:
                    yield p


def resolve(base: Bases, ref: str) -> Path:
    """The record file ``ref`` names: ``last``, an id, a unique prefix of one, or a path."""
    as_path = Path(ref)
    try:
        if as_path.is_file():
            return as_path
        if as_path.is_dir():
            for n in FILES.values():
                if (as_path / n).exists():
                    return as_path / n
    except OSError:
        pass
    every = scan(base)
    entries = [e for e in every if e.state is not ListedState.UNREADABLE or e.id == ref]
    if ref in ("last", "latest"):
        if not every:
            raise InputError(
                f"no records under {_names(base)}", "run `lnrepro run` first, or pass --record-dir"
            )
        # the newest, readable or not: a damaged one is named with what is wrong in it (its
        # reader's error), never passed over for an older record the user did not mean
        return every[-1].path
    exact = [e for e in entries if e.id == ref]
    if exact:
        return exact[0].path
    matches = [e for e in entries if e.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0].path
    if matches:
        raise InputError(
            f"{ref!r} matches {len(matches)} records ({', '.join(e.id for e in matches[:3])}…)",
            "give more of the id",
        )
    _not_a_shrink(base, ref)
    raise InputError(f"no record {ref!r} under {_names(base)}", "list them with `lnrepro runs`")


def _not_a_shrink(base: Bases, ref: str) -> None:
    """A shrink's directory (its note names it) is not a run or a bisect: say what it is and
    how to see it, rather than that there is no such record."""
    from lnrepro.errors import UsageError
    from lnrepro.model.shrink import STATE_FILE

    for where in [Path(ref), *(b / ref for b in _each(base))]:
        try:
            saved = (where / STATE_FILE).is_file()
        except OSError:
            continue
        if saved:
            where = where.absolute()
            raise UsageError(
                f"{where.name} is a saved shrink, not a run or bisect record",
                f"`lnrepro shrink --resume {where}` prints its result (and runs only what it "
                "had not judged)",
            )


def _names(bases: Bases) -> str:
    return " or ".join(str(b) for b in _each(bases))


def load(base: Bases, ref: str) -> Record:
    return load_path(resolve(base, ref))


def load_run(base: Bases, ref: str, why: str) -> RunRecord:
    """A run record, or a usage error saying ``why`` a bisect will not do."""
    from lnrepro.errors import UsageError

    rec = load(base, ref)
    if not isinstance(rec, RunRecord):
        raise UsageError(f"{ref} is a bisect record", why)
    return rec


def runs_of_bisect(rec: BisectRecord) -> Iterator[RunRecord]:
    """The run records a bisect's steps point to (those still on disk and readable)."""
    for s in rec.steps:
        if s.evidence.record:
            try:
                r = load_path(Path(s.evidence.record))
            except InputError:
                continue
            if isinstance(r, RunRecord):
                yield r


def logs_of(run: RunRecord) -> dict[str, str]:
    """A run record's attempt logs (name -> text), those still on disk."""
    out: dict[str, str] = {}
    for a in run.attempts:
        try:
            out[a.log] = (run.record_dir / a.log).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return out


def related_bisect(bases: Bases, run: RunRecord) -> BisectRecord | None:
    """The newest finished bisect of the repository a run tested, if one is saved."""
    checkout = str(run.backend.get("checkout") or "")
    if not checkout:
        return None
    for e in reversed(scan(bases)):
        if e.kind is not RecordKind.BISECT or e.state is ListedState.UNREADABLE:
            continue
        rec = load_path(e.path)
        if not isinstance(rec, BisectRecord):
            continue
        repo = str(rec.request.repo)
        if (
            (checkout == repo or checkout.startswith(repo + "/"))
            and rec.result
            and rec.result.first_bad
        ):
            return rec
    return None
