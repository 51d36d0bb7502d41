"""The one door for git: everything lnrepro asks of a repository goes through here (GitPython)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lnrepro.errors import GitError

LFS_HEADER = b"version https://git-lfs.github.com/spec/v1"
LFS_POINTER_MAX = 1024  # pointer files are ~130 bytes


@dataclass(frozen=True)
class SubmoduleState:
    path: str
    state: str  # "ok", "uninitialised", "wrong commit", "conflict"
    commit: str


def _repo(path: Path):  # type: ignore[no-untyped-def]
    import git

    try:
        return git.Repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(
            f"{path} is not a git work tree", "pass the root of a tt-metal clone"
        ) from None


def _command_error(path: Path, exc: Any) -> GitError:
    """A failed git command as a one-line GitError with the fix git's own message implies."""
    stderr = " ".join(str(getattr(exc, "stderr", "") or exc).split())
    if "dubious ownership" in stderr:
        return GitError(
            f"git refuses {path}: it belongs to another user (dubious ownership)",
            f"git config --global --add safe.directory {path}",
        )
    return GitError(f"git failed in {path}: {stderr[:200]}", "run the same git command by hand")


def is_work_tree(path: Path) -> bool:
    try:
        _repo(path)
    except GitError:
        return False
    return True


def submodules(path: Path) -> list[SubmoduleState]:
    """``git submodule status --recursive``, typed."""
    import git

    try:
        out = _repo(path).git.submodule("status", "--recursive")
    except git.GitCommandError as exc:
        raise _command_error(path, exc) from None
    states = {" ": "ok", "-": "uninitialised", "+": "wrong commit", "U": "conflict"}
    result = []
    for line in out.splitlines():
        if not line:
            continue
        fields = line[1:].split()
        result.append(
            SubmoduleState(
                fields[1] if len(fields) > 1 else "?", states.get(line[0], "unknown"), fields[0]
            )
        )
    return result


def lfs_pointers(path: Path, limit: int = 1000) -> list[str]:
    """Tracked files (in this repo and its submodules) that are still git-LFS pointer files."""
    repo = _repo(path)
    found: list[str] = []
    roots = [(Path(repo.working_tree_dir or path), "")]
    with contextlib.suppress(ValueError, OSError):
        roots += [
            (Path(sm.abspath), sm.path + "/")
            for sm in repo.submodules
            if Path(sm.abspath, ".git").exists()
        ]
    import git

    for root, prefix in roots:
        try:
            names = _repo(root).git.ls_files("-z").split("\0")
        except GitError:
            continue
        except git.GitCommandError as exc:
            raise _command_error(root, exc) from None
        for name in names:
            if not name:
                continue
            f = root / name
            try:
                if f.is_symlink() or f.stat().st_size > LFS_POINTER_MAX:
                    continue
                with f.open("rb") as fh:
                    if fh.read(len(LFS_HEADER)) == LFS_HEADER:
                        found.append(prefix + name)
            except OSError:
                continue
            if len(found) >= limit:
                return found
    return found
