"""Whether two builds test the same thing: one hash over everything a test can read.

A bisect shares a verdict between two commits only when their hashes are equal, so the hash must
cover every input of the test, not only the binary:

* the build's outputs: every file under the build directories (the binary, the shared libraries,
  kernel modules, data the build put there), but not CMake's and Ninja's bookkeeping or object
  files, which only say how the outputs were made;
* the source tree as git records it (``git ls-files -s``: a blob id per file, a commit id per
  submodule), because tt-metal JIT-compiles kernels at run time from the tree: its own kernels, the
  dispatch kernels, the LLK submodule's headers, the SFPI version file (tt_metal/CMakeLists.txt's
  ``jitapi`` file set, read at 00694d6bd0, lists them);
* the submodules as checked out (what ``git submodule status --recursive`` says, read from their
  ``HEAD`` files by ``gitops.submodule_status``: a submodule at another commit than the one
  recorded is another input) and every change not committed, staged or not, untracked files
  included (a picked test, a patch).

Only paths nothing can read at run time are left out: ``docs/``, ``.github/``, Markdown and
reStructuredText. When in doubt a path is in, so the worst a wrong guess costs is a re-run.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from lnrepro.doors import gitops

DOC_DIRS = ("docs/", ".github/")
DOC_SUFFIXES = (".md", ".rst")
# directories a build or a run writes into the checkout: never sources
# (and every top-level build or build_* directory)
OUTPUT_DIRS = ("tt-train/build", "generated", "built", ".cpmcache", "python_env", ".lnrepro")
BOOKKEEPING_DIRS = frozenset({"CMakeFiles", "Testing", ".cmake"})
BOOKKEEPING_FILES = frozenset(
    {
        "CMakeCache.txt",
        ".ninja_log",
        ".ninja_deps",
        "build.ninja",
        "rules.ninja",
        "Makefile",
        "cmake_install.cmake",
        "CTestTestfile.cmake",
        "compile_commands.json",
        "install_manifest.txt",
        "DartConfiguration.tcl",
        "CPackConfig.cmake",
        "CPackSourceConfig.cmake",
    }
)
BOOKKEEPING_SUFFIXES = (".o", ".d", ".obj", ".gch", ".pch", ".cmake", ".tmp")


def is_doc(path: str) -> bool:
    """A tracked path no test reads."""
    return path.startswith(DOC_DIRS) or path.endswith(DOC_SUFFIXES)


def is_output(path: str) -> bool:
    """A path (relative to the checkout) inside a directory builds and runs write."""
    first, sep, _ = path.partition("/")
    if sep and (first == "build" or first.startswith("build_")):  # not build_metal.sh
        return True
    return any(path == d or path.startswith(d + "/") for d in OUTPUT_DIRS)


def is_bookkeeping(rel: Path) -> bool:
    """A file in a build tree that says how outputs were made, not what they are."""
    return (
        any(part in BOOKKEEPING_DIRS for part in rel.parts[:-1])
        or rel.name in BOOKKEEPING_FILES
        or rel.name.endswith(BOOKKEEPING_SUFFIXES)
    )


def tracked_digest(ls_files_stage: bytes) -> str:
    """``git ls-files -s -z`` (mode, object id, stage, path per entry) without the doc paths."""
    h = hashlib.sha256()
    for mode, oid, stage, path in gitops.index_entries(ls_files_stage):
        if not is_doc(path):
            h.update(f"{mode} {oid} {stage}\t".encode() + os.fsencode(path) + b"\0")
    return h.hexdigest()


def changed_paths(porcelain_z: bytes) -> list[str]:
    """Paths ``git status --porcelain -z --untracked-files=all`` names, renames' both sides,
    without docs and build/run outputs."""
    out: list[str] = []
    fields = porcelain_z.split(b"\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        xy, path = entry[:2], os.fsdecode(entry[3:])
        paths = [path]
        if b"R" in xy or b"C" in xy:  # the rename's source follows as its own field
            if i < len(fields):
                paths.append(os.fsdecode(fields[i]))
            i += 1
        out += [p for p in paths if not is_doc(p) and not is_output(p)]
    return sorted(set(out))


# ------------------------------------------------------------------ file contents (the disk)
_memo: dict[tuple[int, int, int, int], str] = {}  # (dev, inode, size, mtime_ns) -> sha256


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (a symlink: of its target's name), memoised by inode and mtime,
    so a bisect hashes an unchanged 100 MB library once."""
    try:
        st = path.lstat()
    except OSError:
        return "missing"
    if stat.S_ISLNK(st.st_mode):
        try:
            return "link:" + str(path.readlink())
        except OSError:
            return "unreadable-link"
    if not stat.S_ISREG(st.st_mode):
        return "special"
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if key in _memo:
        return _memo[key]
    h = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except OSError:
        return "unreadable"
    _memo[key] = h.hexdigest()
    return _memo[key]


def outputs_digest(roots: Iterable[Path], base: Path) -> tuple[str, int]:
    """Every build output under ``roots`` (bookkeeping left out, symlinks not followed), by path
    and content; with the number of files."""
    h = hashlib.sha256()
    count = 0
    for root in roots:
        if not root.is_dir():
            h.update(f"absent:{root.relative_to(base)}\0".encode())
            continue
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d not in BOOKKEEPING_DIRS)
            here = Path(dirpath)
            found += [here / f for f in filenames]
            found += [here / d for d in dirnames if (here / d).is_symlink()]
        for f in sorted(found):
            if is_bookkeeping(f.relative_to(root)):
                continue
            h.update(
                os.fsencode(str(f.relative_to(base))) + b"\0" + file_digest(f).encode() + b"\0"
            )
            count += 1
    return h.hexdigest(), count


def contents_digest(paths: Iterable[str], base: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(os.fsencode(p) + b"\0" + file_digest(base / p).encode() + b"\0")
    return h.hexdigest()
