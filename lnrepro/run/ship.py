"""A commit's sources, shipped to a Docker engine that cannot see this machine (a card host).

The engine keeps the tree in a named volume across steps, build directories included, so each
step ships only what changed since the last: a *manifest* (path -> what the file is) lies in the
tree on the engine (:data:`MANIFEST`), and the difference between it and this checkout's is sent
through ``put_archive``; paths no longer there are deleted. What a file *is*:

* a tracked file as the index records it (``git ls-files -s``: mode and blob id, so a picked
  commit's staged files count), in every submodule too;
* a file ``git archive`` rewrites (``export-subst``) as it writes it for this commit: tt-metal's
  cmake/version.cmake falls back to those placeholders when the build has no git metadata
  (cmake/version.cmake at 0731daca24, .gitattributes at 07ddbf30b9), which a shipped tree has not;
* a file changed and not committed, or not tracked, by its content.

Shipped files get the time of shipping as their mtime: a checkout's own mtimes can be older than
the build tree's outputs (a bisect goes back in history), and make or ninja would then skip a
rebuild. Files that did not change keep theirs, so the build stays incremental.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import stat
import tarfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from lnrepro.doors import gitops
from lnrepro.run.inputs import changed_paths

MANIFEST = ".lnrepro-shipped.json"
ARG_BYTES = 64 * 1024  # per `rm` command line there (Linux allows 2 MB; any engine allows this)
SCHEMA = "lnrepro.shipped/1"

Manifest = dict[str, str]  # path -> "<octal mode>:<what>"


@dataclass(frozen=True)
class Transfer:
    """What one step sends: the paths to (re)write and the paths to delete."""

    send: tuple[str, ...]
    delete: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.send and not self.delete


def from_index(ls_files_stage: bytes, prefix: str = "") -> tuple[Manifest, list[str]]:
    """``git ls-files -s -z`` as a manifest, with the submodules' paths (mode 160000) apart."""
    entries = gitops.index_entries(ls_files_stage)
    subs = [prefix + path for mode, _, _, path in entries if mode == "160000"]
    out = {prefix + path: f"{mode}:{oid}" for mode, oid, _, path in entries if mode != "160000"}
    return out, subs


def with_changes(manifest: Manifest, porcelain_z: bytes, root: Path, prefix: str = "") -> Manifest:
    """The manifest with every uncommitted change (``git status --porcelain -z``) as it is on
    disk now: by content, or gone when the file is gone."""
    out = dict(manifest)
    for rel in changed_paths(porcelain_z):
        path = prefix + rel
        try:
            st = (root / path).lstat()
        except OSError:
            out.pop(path, None)
            continue
        if stat.S_ISDIR(st.st_mode):
            continue
        out[path] = f"{_mode(st.st_mode):o}:wt:{_content_id(root / path, st.st_mode)}"
    return out


def with_substituted(manifest: Manifest, subst: Mapping[str, bytes], commit: str) -> Manifest:
    """Files ``git archive`` rewrites are what they are for this commit."""
    out = dict(manifest)
    for path in subst:
        if path in out and ":wt:" not in out[path]:
            out[path] = f"{out[path]}:subst:{commit}"
    return out


def diff(old: Mapping[str, str], new: Mapping[str, str]) -> Transfer:
    send = sorted(p for p, k in new.items() if old.get(p) != k)
    delete = sorted(p for p in old if p not in new)
    return Transfer(tuple(send), tuple(delete))


def parse_manifest(data: bytes | None) -> Manifest:
    """The manifest on the engine; empty (ship everything) when it is missing or not ours."""
    if not data:
        return {}
    try:
        doc = json.loads(data)
    except ValueError:
        return {}
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        return {}
    files = doc.get("files")
    if not isinstance(files, dict):
        return {}
    return {str(k): str(v) for k, v in files.items()}


def manifest_bytes(manifest: Mapping[str, str]) -> bytes:
    return json.dumps({"schema": SCHEMA, "files": dict(sorted(manifest.items()))}).encode()


def archive(
    root: Path,
    top: str,
    transfer: Transfer,
    manifest: Mapping[str, str],
    subst: Mapping[str, bytes],
    owner: tuple[int, int],
) -> bytes:
    """The tar ``put_archive`` extracts in ``top``'s parent: the tree's top directory (owned by
    ``owner``, which makes the volume the invoking user's), the files to send and the new
    manifest. Directories on the way are the owner's too."""
    uid, gid = owner
    now = time.time()
    buf = io.BytesIO()
    made: set[str] = set()

    def entry(name: str, kind: bytes, mode: int, size: int = 0) -> tarfile.TarInfo:
        ti = tarfile.TarInfo(f"{top}/{name}" if name else top)
        ti.type, ti.mode, ti.size, ti.mtime = kind, mode, size, now
        ti.uid, ti.gid = uid, gid
        return ti

    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:

        def dirs(path: str) -> None:
            parts = path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in made:
                    made.add(d)
                    tf.addfile(entry(d, tarfile.DIRTYPE, 0o755))

        tf.addfile(entry("", tarfile.DIRTYPE, 0o755))
        for path in transfer.send:
            mode = int(manifest[path].split(":", 1)[0], 8)
            dirs(path)
            if path in subst and ":wt:" not in manifest[path]:
                data = subst[path]
                tf.addfile(entry(path, tarfile.REGTYPE, mode & 0o777, len(data)), io.BytesIO(data))
            elif stat.S_ISLNK(mode):
                ti = entry(path, tarfile.SYMTYPE, 0o777)
                ti.linkname = str((root / path).readlink())
                tf.addfile(ti)
            else:
                size = (root / path).stat().st_size
                with (root / path).open("rb") as fh:
                    tf.addfile(entry(path, tarfile.REGTYPE, mode & 0o777, size), fh)
        data = manifest_bytes(manifest)
        tf.addfile(entry(MANIFEST, tarfile.REGTYPE, 0o644, len(data)), io.BytesIO(data))
    return buf.getvalue()


def deletions(paths: Iterable[str]) -> list[list[str]]:
    """``rm -rf --`` command lines for the engine, each under :data:`ARG_BYTES`."""
    out: list[list[str]] = []
    line: list[str] = []
    size = 0
    for p in paths:
        n = len(os.fsencode(p)) + 1
        if line and size + n > ARG_BYTES:
            out.append(["rm", "-rf", "--", *line])
            line, size = [], 0
        line.append(p)
        size += n
    if line:
        out.append(["rm", "-rf", "--", *line])
    return out


def _mode(st_mode: int) -> int:
    if stat.S_ISLNK(st_mode):
        return 0o120000
    return 0o100755 if st_mode & 0o111 else 0o100644


def _content_id(path: Path, st_mode: int) -> str:
    if stat.S_ISLNK(st_mode):
        return "link:" + str(path.readlink())
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def sizes(root: Path, paths: Iterable[str]) -> int:
    """Bytes the paths hold on this machine (progress and the log)."""
    total = 0
    for p in paths:
        with contextlib.suppress(OSError):
            total += (root / p).lstat().st_size
    return total


def local_manifest(checkout: Path) -> tuple[Manifest, dict[str, bytes]]:
    """This checkout's manifest (its submodules' files included) and the files ``git archive``
    would rewrite, with their rewritten bytes."""
    commit = gitops.git(checkout, "rev-parse", "HEAD").strip()
    subst = gitops.export_subst(checkout)
    manifest: Manifest = {}
    pending = [("", checkout)]
    while pending:
        prefix, root = pending.pop()
        found, subs = from_index(gitops.tree_listing(root), prefix)
        manifest.update(with_changes(found, gitops.status_z(root), checkout, prefix))
        pending += [(s + "/", checkout / s) for s in subs if (checkout / s / ".git").exists()]
    return with_substituted(manifest, subst, commit), subst
