"""Saved records: find, list and load what ``run`` and ``bisect`` wrote. Reading only.

Layout, under the record directory (``--record-dir``, default ``.lnrepro/runs``)::

    run-YYYYmmdd-HHMMSS[-N]/record.json      lnrepro.run/2    (a run and its logs)
    bisect-YYYYmmdd-HHMMSS[-N]/bisect.json   lnrepro.bisect/2 (a bisect's plan, steps, result)

A record's id is its directory's name. Older schema versions load (``lnrepro.run/1`` had no
``id``); a record that cannot be read is listed as ``unreadable`` with the reason, never a crash.
``last`` names the newest record; a unique prefix of an id works too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lnrepro.errors import InputError, MalformedReport

RUN_SCHEMAS = ("lnrepro.run/1", "lnrepro.run/2")
BISECT_SCHEMAS = ("lnrepro.bisect/2",)
FILES = {"run": "record.json", "bisect": "bisect.json"}


@dataclass(frozen=True)
class Entry:
    """One saved record, as ``lnrepro runs`` lists it."""

    id: str
    kind: str  # run | bisect
    path: Path  # the record file
    mtime: float
    state: str  # complete | running | interrupted | aborted | unreadable
    headline: str
    where: str  # backend / runner, or the repository bisected
    commit: str | None
    problem: str | None = None  # why it is unreadable

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "path": str(self.path), "mtime": self.mtime,
                "state": self.state, "headline": self.headline, "where": self.where,
                "commit": self.commit, "problem": self.problem}  # fmt: skip


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path} does not exist", "list the records with `lnrepro runs`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MalformedReport(f"cannot read {path}: {exc}", "check the file") from None
    except ValueError as exc:
        raise MalformedReport(
            f"{path} is not valid JSON ({exc}); the run was probably cut off while writing",
            "rerun it; the logs beside it are intact",
        ) from None
    if not isinstance(doc, dict):
        raise MalformedReport(f"{path} is not an lnrepro record", "check the file")
    return doc


def upgrade(doc: dict[str, Any], path: Path) -> dict[str, Any]:
    """A record of any supported schema as the current one (a copy; the file is not touched)."""
    schema = doc.get("schema")
    if schema in RUN_SCHEMAS:
        out = dict(doc)
        out["id"] = path.parent.name  # /1 had none; a copied record takes its new directory's
        out["kind"] = "run"
        return out
    if schema in BISECT_SCHEMAS:
        out = dict(doc)
        out["id"] = path.parent.name
        out["kind"] = "bisect"
        return out
    raise MalformedReport(
        f"{path} has schema {schema!r}, which this lnrepro does not know",
        f"known: {', '.join(RUN_SCHEMAS + BISECT_SCHEMAS)}; a newer lnrepro may read it",
    )


def load_path(path: Path) -> dict[str, Any]:
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
    return upgrade(_read(path), path)


def _headline_run(doc: dict[str, Any]) -> str:
    counts: dict[str, int] = {}
    for t in doc.get("tests") or []:
        if isinstance(t, dict):
            v = str(t.get("verdict", "?"))
            counts[v] = counts.get(v, 0) + 1
    order = ("FAIL", "FLAKY", "CRASH", "HANG", "ENV_ERROR", "PASS", "SKIP")
    parts = [f"{counts.pop(v)} {v}" for v in order if v in counts]
    parts += [f"{n} {v}" for v, n in counts.items()]
    return ", ".join(parts) or str(doc.get("verdict", "no tests"))


def _headline_bisect(doc: dict[str, Any]) -> str:
    r = doc.get("result") or {}
    if not r:
        return f"{len(doc.get('steps') or [])} step(s) so far"
    if r.get("error"):
        return f"stopped: {r['error']}"
    fb = r.get("first_bad")
    if fb:
        subject = (r.get("commit") or {}).get("subject", "")
        conf = f" (p={r['confidence']:.3f})" if isinstance(r.get("confidence"), float) else ""
        return f"{r.get('kind', 'first bad commit')} {str(fb)[:12]}{conf}: {subject}"[:120]
    return f"undecided: {r.get('reason') or 'no single commit'}"


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    v = doc.get(key)
    return v if isinstance(v, dict) else {}


def entry(path: Path) -> Entry:
    """What ``runs`` shows of one record file; unreadable ones say why."""
    kind = "bisect" if path.name == FILES["bisect"] else "run"
    rid = path.parent.name
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = 0.0
    try:
        doc = upgrade(_read(path), path)
    except (InputError, MalformedReport) as exc:
        return Entry(rid, kind, path, mtime, "unreadable", "", "", None, exc.message)
    if kind == "run":
        b = _table(doc, "backend")
        fp = _table(doc, "fingerprint")
        where = str(b.get("backend", "?")) + (f"/{b['runner']}" if b.get("runner") else "")
        return Entry(str(doc["id"]), kind, path, mtime, str(doc.get("state", "complete")),
                     _headline_run(doc), where, fp.get("commit"))  # fmt: skip
    plan = _table(doc, "plan")
    state = "complete" if doc.get("result") else "running"
    return Entry(str(doc["id"]), kind, path, mtime, str(doc.get("state", state)),
                 _headline_bisect(doc), str(plan.get("repo", "?")), plan.get("bad"))  # fmt: skip


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


def scan(bases: Bases) -> list[Entry]:
    """Every record under the base directories, oldest first."""
    out = []
    for base in [bases] if isinstance(bases, Path) else bases:
        out += _scan_one(base)
    return sorted(out, key=lambda e: (e.mtime, e.id))


def _scan_one(base: Path) -> list[Entry]:
    out = []
    try:
        dirs = [d for d in os.scandir(base) if d.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise InputError(f"cannot list {base}: {exc.strerror}", "check --record-dir") from None
    for d in dirs:
        for name in FILES.values():
            p = Path(d.path) / name
            if p.exists():
                out.append(entry(p))
    return out


def resolve(base: Bases, ref: str) -> Path:
    """The record file ``ref`` names: ``last``, an id, a unique prefix of one, or a path."""
    as_path = Path(ref)
    if as_path.exists() and (
        as_path.is_file() or any((as_path / n).exists() for n in FILES.values())
    ):
        return (
            as_path
            if as_path.is_file()
            else next(as_path / n for n in FILES.values() if (as_path / n).exists())
        )
    entries = [e for e in scan(base) if e.state != "unreadable" or e.id == ref]
    if ref in ("last", "latest"):
        if not entries:
            raise InputError(
                f"no records under {base}", "run `lnrepro run` first, or pass --record-dir"
            )
        return entries[-1].path
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
    raise InputError(f"no record {ref!r} under {_names(base)}", "list them with `lnrepro runs`")


def _names(bases: Bases) -> str:
    return " or ".join(str(b) for b in ([bases] if isinstance(bases, Path) else bases))


def load(base: Bases, ref: str) -> dict[str, Any]:
    return load_path(resolve(base, ref))


def runs_of_bisect(doc: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """The run records a bisect's steps point to (those still on disk and readable)."""
    for s in doc.get("steps") or []:
        rec = s.get("record") if isinstance(s, dict) else None
        if rec:
            try:
                yield load_path(Path(rec))
            except (InputError, MalformedReport):
                continue


def logs_of(run: dict[str, Any]) -> dict[str, str]:
    """A run record's attempt logs (name -> text), those still on disk."""
    out: dict[str, str] = {}
    rdir = Path(str(run.get("record_dir", "")))
    for a in run.get("attempts") or []:
        name = str(a.get("log", ""))
        try:
            out[name] = (rdir / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return out


def related_bisect(bases: Bases, run: dict[str, Any]) -> dict[str, Any] | None:
    """The newest finished bisect of the repository a run tested, if one is saved."""
    checkout = str((run.get("backend") or {}).get("checkout") or "")
    if not checkout:
        return None
    for e in reversed(scan(bases)):
        if e.kind != "bisect" or e.state == "unreadable":
            continue
        doc = load_path(e.path)
        repo = str((doc.get("plan") or {}).get("repo", ""))
        if (
            repo
            and (checkout == repo or checkout.startswith(repo + "/"))
            and (doc.get("result") or {}).get("first_bad")
        ):
            return doc
    return None
