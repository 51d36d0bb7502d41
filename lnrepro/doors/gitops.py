"""The one door for git: everything lnrepro asks of a repository goes through here.

Commands run through :mod:`lnrepro.doors.proc` (a timeout, the whole process group killed on
timeout, Ctrl-C or SIGTERM) — GitPython's defaults have neither; GitPython is used for reading
repository structure. ``GIT_TERMINAL_PROMPT=0`` so a credential prompt can never hang a run.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lnrepro.errors import GitError
from lnrepro.model.bisect import CommitInfo

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


GIT_TIMEOUT_S = 600.0


def git(repo: Path, *args: str, timeout: float = GIT_TIMEOUT_S) -> str:
    """``git -C repo ARGS``; its stdout+stderr, or a one-line GitError (timeouts included)."""
    from lnrepro.doors import proc

    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    code, out = proc.capture(["git", "-C", str(repo), *args], timeout=timeout, env=env)
    if code == 124:
        raise GitError(
            f"git {args[0] if args else ''} in {repo} did not finish within {timeout:g} s",
            "check the repository (a lock file, a network remote) and retry",
        )
    if code != 0:
        raise _command_error(repo, out, args)
    return out


def head(repo: Path) -> dict[str, Any]:
    """The checkout's commit, ``git describe``, branch and whether it has uncommitted changes."""
    sha = git(repo, "rev-parse", "HEAD").strip()
    try:
        describe = git(repo, "describe", "--tags", "--always", "--dirty").strip()
    except GitError:
        describe = sha[:12]
    branch = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    dirty = bool(git(repo, "status", "--porcelain", "--untracked-files=no").strip())
    return {"commit": sha, "describe": describe, "branch": branch, "dirty": dirty}


def _command_error(path: Path, exc: Any, args: tuple[str, ...] = ()) -> GitError:
    """A failed git command as a one-line GitError with the fix git's own message implies."""
    stderr = " ".join(str(getattr(exc, "stderr", "") or exc).split())
    if "dubious ownership" in stderr:
        return GitError(
            f"git refuses {path}: it belongs to another user (dubious ownership)",
            f"git config --global --add safe.directory {path}",
        )
    import shlex

    command = shlex.join(["git", "-C", str(path), *args]) if args else "the same git command"
    return GitError(f"git failed in {path}: {stderr[:200]}", f"run {command} by hand to see why")


def is_work_tree(path: Path) -> bool:
    try:
        _repo(path)
    except GitError:
        return False
    return True


def submodules(path: Path) -> list[SubmoduleState]:
    """``git submodule status --recursive``, typed."""
    out = git(path, "submodule", "status", "--recursive")
    states = {" ": "ok", "-": "uninitialised", "+": "wrong commit", "U": "conflict"}
    fields = [(line[0], line[1:].split()) for line in out.splitlines() if line]
    return [
        SubmoduleState(f[1] if len(f) > 1 else "?", states.get(mark, "unknown"), f[0])
        for mark, f in fields
    ]


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
    for root, prefix in roots:
        if not is_work_tree(root):
            continue
        for name in filter(None, git(root, "ls-files", "-z").split("\0")):
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


# ------------------------------------------------------------------ what a checkout holds
def tree_listing(repo: Path) -> bytes:
    """``git ls-files -s -z``: mode, object id and path of every tracked file (the index's, so
    staged changes count), a commit id for every submodule."""
    return git(repo, "ls-files", "-s", "-z").encode("utf-8", "surrogateescape")


def index_entries(listing: bytes) -> list[tuple[str, str, str, str]]:
    """(mode, object id, stage, path) of each entry of :func:`tree_listing`'s listing."""
    out = []
    for entry in filter(None, listing.split(b"\0")):
        meta, _, path = entry.partition(b"\t")
        mode, oid, stage = meta.decode().split(" ")
        out.append((mode, oid, stage, os.fsdecode(path)))
    return out


def status_z(repo: Path) -> bytes:
    """``git status --porcelain -z``, every untracked file listed (ignored ones not)."""
    out = git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    return out.encode("utf-8", "surrogateescape")


def export_subst(repo: Path) -> dict[str, bytes]:
    """The tracked files ``git archive`` rewrites (``export-subst`` in .gitattributes, with
    ``$Format:…$`` placeholders), as ``git archive HEAD`` writes them. tt-metal marks
    cmake/version.cmake so (.gitattributes at 07ddbf30b9), whose fallback then carries the
    version into a build that has no git metadata (cmake/version.cmake at 0731daca24)."""
    import io
    import tarfile

    from lnrepro.doors import proc

    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    code, out = proc.capture(
        ["git", "-C", str(repo), "grep", "-l", "-z", "-F", "-e", "$Format:", "HEAD", "--"],
        timeout=GIT_TIMEOUT_S,
        env=env,
    )
    if code != 0:  # 1: no file has a placeholder
        return {}
    paths = [p.split(":", 1)[1] for p in out.split("\0") if p.startswith("HEAD:")]
    if not paths:
        return {}
    attrs = git(repo, "check-attr", "-z", "export-subst", "--", *paths).split("\0")
    marked = [attrs[i] for i in range(0, len(attrs) - 2, 3) if attrs[i + 2] == "set"]
    if not marked:
        return {}
    code, text = proc.capture(
        ["git", "-C", str(repo), "archive", "--format=tar", "HEAD", "--", *marked],
        timeout=GIT_TIMEOUT_S,
        env=env,
    )
    if code != 0:
        raise _command_error(repo, text)
    found: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(text.encode("utf-8", "surrogateescape"))) as tf:
        for m in tf:
            f = tf.extractfile(m) if m.isfile() else None
            if f is not None:
                found[m.name] = f.read()
    return found


def submodule_status(repo: Path, listing: bytes | None = None) -> str:
    """Each submodule's checked-out commit, marked when it differs from the recorded one
    (``-`` not checked out, ``+`` another commit), a line each; recursively.

    What ``git submodule status --recursive`` tells, read from the index's gitlinks
    (``listing``: :func:`tree_listing`'s, when the caller has it) and each submodule's own
    ``HEAD`` file: git's command is a shell script of some 26 processes (``git`` 15 times,
    ``sed``, ``envsubst``), about 0.04 core-s per call, twice per bisect step. Where the files
    cannot say (a HEAD that names a branch, a merge conflict), git answers for that one.
    """
    return "\n".join(_status_lines(repo, tree_listing(repo) if listing is None else listing, ""))


def _status_lines(repo: Path, listing: bytes, prefix: str) -> list[str]:
    lines = []
    links = _gitlinks(listing)
    conflicts = sorted({path for stage, _, path in links if stage != "160000:0"})
    for path in conflicts:  # git says what a conflict is
        said = git(repo, "--literal-pathspecs", "submodule", "status", "--", path).strip()
        lines.append(f"{said[:1]}{said[1:].split(' ', 1)[0]} {prefix}{path}")
    for _, sha, path in links:
        sub = repo / path
        if path in conflicts:
            continue
        head = _checked_out(sub)
        if head is None:
            lines.append(f"-{sha} {prefix}{path}")
            continue
        lines.append(f"{' ' if head == sha else '+'}{head} {prefix}{path}")
        if (sub / ".gitmodules").is_file():
            lines += _status_lines(sub, tree_listing(sub), f"{prefix}{path}/")
    return lines


def _gitlinks(listing: bytes) -> list[tuple[str, str, str]]:
    """(mode:stage, commit, path) of the submodule entries of ``git ls-files -s -z``."""
    return [
        (f"160000:{stage}", sha, path)
        for mode, sha, stage, path in index_entries(listing)
        if mode == "160000"
    ]


def _linked_gitdir(checkout: Path) -> Path | None:
    """The git directory a checkout's ``.git`` file names (``gitdir: PATH``, as written: relative
    to the checkout or absolute); None when ``.git`` is no such file (a directory, or none)."""
    dotgit = checkout / ".git"
    try:
        text = dotgit.read_text("utf-8", "surrogateescape").strip() if dotgit.is_file() else ""
    except OSError:
        return None
    return Path(text[len("gitdir:") :].strip()) if text.startswith("gitdir:") else None


def _checked_out(sub: Path) -> str | None:
    """The commit checked out in the submodule at ``sub``; None when it is not checked out."""
    dotgit, linked = sub / ".git", _linked_gitdir(sub)
    gitdir = sub / linked if linked else dotgit if dotgit.is_dir() else None  # absolute stays so
    if gitdir is None:
        return None
    try:
        head = (gitdir / "HEAD").read_text(errors="replace").strip()
    except OSError:
        return None
    if len(head) == 40 and all(c in "0123456789abcdef" for c in head):  # detached, as git leaves it
        return head
    return git(sub, "rev-parse", "HEAD").strip()


def submodules_as_recorded(repo: Path) -> bool:
    """Whether every submodule is checked out at its recorded commit with no change to what it
    tracks, and none has submodules of its own: then ``submodule update`` has nothing to do.
    Two git processes (the index's gitlinks, ``status``), where the update is some 26."""
    try:
        links = _gitlinks(tree_listing(repo))
        if any(
            stage != "160000:0"
            or _checked_out(repo / path) != sha
            or (repo / path / ".gitmodules").exists()
            for stage, sha, path in links
        ):
            return False
        if not links:
            return True
        # a submodule whose tracked files changed (a build that wrote into it) is listed
        # whatever submodule.<name>.ignore says; untracked build leftovers are no reason
        paths = [p for *_, p in links]
        out = git(
            repo,
            "--literal-pathspecs",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=no",
            "--ignore-submodules=untracked",
            "--",
            *paths,
        )
    except GitError:  # the update says what is wrong
        return False
    return not out.strip("\0")


def git_dirs(checkout: Path) -> tuple[Path, ...]:
    """The git directories a checkout's git commands need that lie outside it: a worktree's
    ``.git`` is a file pointing into the main repository's ``.git/worktrees/NAME``, whose
    ``commondir`` names the shared ``.git`` (objects, refs, the submodules' repositories).
    Read from those files, no git needed; empty for an ordinary clone."""
    gitdir = _linked_gitdir(checkout)
    if gitdir is None:
        return ()
    if not gitdir.is_absolute():
        gitdir = (checkout / gitdir).resolve()
    common = gitdir
    try:
        rel = (gitdir / "commondir").read_text(encoding="utf-8").strip()
        common = (gitdir / rel).resolve() if not Path(rel).is_absolute() else Path(rel)
    except OSError:
        pass
    inside = checkout.resolve()
    out = [d for d in (common,) if not d.resolve().is_relative_to(inside)]
    if not gitdir.resolve().is_relative_to(common.resolve()):
        out.append(gitdir)
    return tuple(out)


# ------------------------------------------------------------------ bisect support
def common_dir(repo: Path) -> Path:
    """The repository's shared .git directory (the same for every worktree)."""
    out = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    return Path(out)


def resolve(repo: Path, rev: str) -> str:
    """The full sha of ``rev``, or a GitError that names the bad ref."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except GitError:
        raise GitError(
            f"{rev!r} is not a commit in {repo}", "check the ref (git log --oneline), or fetch it"
        ) from None


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    from lnrepro.doors import proc

    code, _ = proc.capture(
        ["git", "-C", str(repo), "merge-base", "--is-ancestor", older, newer], timeout=GIT_TIMEOUT_S
    )
    return code == 0


def merge_bases(repo: Path, a: str, b: str) -> list[str]:
    """``git merge-base --all A B``: the best common ancestors (several after criss-cross merges)."""
    return git(repo, "merge-base", "--all", a, b).split()


def rev_list_parents(
    repo: Path, tip: str, bottoms: list[str], *, first_parent: bool, paths: tuple[str, ...] = ()
) -> list[str]:
    """``git rev-list --parents --reverse --topo-order TIP ^BOTTOM…``: oldest first."""
    args = ["rev-list", "--parents", "--reverse", "--topo-order"]
    if first_parent:
        args.append("--first-parent")
    args += [tip, *(f"^{b}" for b in bottoms)]
    if paths:
        args += ["--", *paths]
    return git(repo, *args).splitlines()


def commit_info(repo: Path, sha: str) -> CommitInfo:
    import re

    out = git(repo, "show", "-s", "--format=%H%x00%s%x00%an <%ae>%x00%aI", sha)
    full, subject, author, date = ([*out.rstrip("\n").split("\x00"), "", "", "", ""])[:4]
    pr = re.findall(r"#(\d+)", subject)
    return CommitInfo(
        sha=full, subject=subject, author=author, date=date, pr=int(pr[-1]) if pr else None
    )


def ensure_worktree(repo: Path, where: Path) -> Path:
    """A detached worktree of ``repo`` at ``where``, made once and reused (builds stay warm)."""
    if (where / ".git").exists():
        return where
    where.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "prune")
    git(repo, "worktree", "add", "--detach", "--force", str(where), "HEAD")
    return where


def checkout_clean(worktree: Path, sha: str) -> str | None:
    """``sha`` in the worktree, tracked files exactly as committed (untracked build trees stay).

    The same two commands a person runs — ``checkout --force`` (which also throws away the last
    step's picks and patches) and ``submodule update`` — plus ``submodule sync`` only when
    ``.gitmodules`` changed: on a 50,000-file tree every extra git command costs an index read.
    The update is left out when every submodule is already as recorded
    (:func:`submodules_as_recorded`): it is a shell script of some 26 processes.
    """
    _clear_stale_index_lock(worktree)
    modules = worktree / ".gitmodules"
    before = modules.read_bytes() if modules.is_file() else None
    git(worktree, "checkout", "--detach", "--force", "--quiet", sha)
    after = modules.read_bytes() if modules.is_file() else None
    if after is not None:
        if after != before:
            git(worktree, "submodule", "sync", "--recursive", "--quiet")
        # --force as tt-metal's tests/scripts/tt_bisect.sh does: a submodule left dirty by a build
        if after != before or not submodules_as_recorded(worktree):
            git(worktree, "submodule", "update", "--init", "--recursive", "--force", "--quiet")
    return pull_lfs(worktree)  # a note when LFS files had to stay pointers


def _clear_stale_index_lock(worktree: Path) -> None:
    """A git command killed mid-way (a stopped ``bisect --jobs`` action) leaves ``index.lock``.

    lnrepro's worktrees are its own and the bisect lock is held, so no one else's git can be
    using it: the lock is stale and would fail every later checkout.
    """
    gitdir = _linked_gitdir(worktree)
    if gitdir is not None:
        (worktree / gitdir / "index.lock").unlink(missing_ok=True)


def uses_lfs(worktree: Path) -> bool:
    attrs = worktree / ".gitattributes"
    try:
        return "filter=lfs" in attrs.read_text(errors="replace")
    except OSError:
        return False


def pull_lfs(worktree: Path) -> str | None:
    """``git lfs pull`` (and in submodules) when the checkout uses LFS; why not, when it cannot."""
    import shutil

    if not uses_lfs(worktree):
        return None
    if shutil.which("git-lfs") is None:
        return "the checkout uses git-LFS but git-lfs is not installed: LFS files stay pointers"
    git(worktree, "lfs", "pull")
    if (worktree / ".gitmodules").is_file():
        git(worktree, "submodule", "foreach", "--recursive", "git lfs pull")
    return None


def apply_pick(worktree: Path, sha: str) -> str | None:
    """Cherry-pick ``sha`` uncommitted; None on success, else why it does not apply (undone)."""
    try:
        git(worktree, "cherry-pick", "--no-commit", sha)
        return None
    except GitError as exc:
        git(worktree, "reset", "--hard", "--quiet")
        with contextlib.suppress(GitError):
            git(worktree, "cherry-pick", "--quit")
        return f"--pick {sha[:12]} does not apply: {exc.message[:160]}"


def apply_patch(worktree: Path, patch: Path) -> str | None:
    try:
        git(worktree, "apply", "--index", str(patch))
        return None
    except GitError as exc:
        git(worktree, "reset", "--hard", "--quiet")
        return f"--patch {patch.name} does not apply: {exc.message[:160]}"
