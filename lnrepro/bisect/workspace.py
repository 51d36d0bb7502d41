"""Where a bisect's commits are made ready to test, and where its state is kept: the loop's seam.

:class:`~lnrepro.bisect.loop.Bisect` asks a :class:`Workspace` for a job's tree at a commit
(checked out, ``--pick`` commits and ``--patch`` files applied), for a commit's subject and
author, and to save the record after every step. :class:`GitWorkspace` does it in the
repository's own lnrepro worktrees (:mod:`~lnrepro.bisect.state`); a test gives the loop a
scripted one, so the real loop runs in process over a made-up history.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from lnrepro.bisect import state
from lnrepro.doors import gitops
from lnrepro.model.bisect import BisectRecord, CommitInfo


@dataclass(frozen=True)
class Prep:
    """What making a commit's tree ready cost: all of it, the checkout alone, and a note."""

    seconds: float
    checkout_s: float
    note: str | None


@dataclass(frozen=True)
class Prepared:
    """A job's tree at a commit, or why it could not be prepared (a pick or patch that does not
    apply): then the commit cannot be tested."""

    tree: Path
    prep: Prep
    problem: str | None = None


class Workspace(Protocol):
    def open(self, jobs: int) -> None:
        """Make the jobs' trees before they run at once (one at a time: git locks to add one)."""
        ...

    def prepare(self, job: int, sha: str) -> Prepared:
        """Job ``job``'s tree at ``sha`` with the picks and patches on it (any thread)."""
        ...

    def describe(self, sha: str) -> CommitInfo:
        """The commit's subject, author and date."""
        ...

    def save(self, record: BisectRecord) -> None:
        """Keep the record where ``--resume`` reads it."""
        ...


@dataclass(frozen=True)
class GitWorkspace:
    """The repository's lnrepro worktrees, one per job; the user's checkout is never touched."""

    repo: Path
    picks: tuple[str, ...] = ()
    patches: tuple[Path, ...] = ()

    def open(self, jobs: int) -> None:
        for job in range(jobs):
            gitops.ensure_worktree(self.repo, state.worktree_path(self.repo, job))

    def prepare(self, job: int, sha: str) -> Prepared:
        worktree = gitops.ensure_worktree(self.repo, state.worktree_path(self.repo, job))
        start = time.monotonic()
        note = gitops.checkout_clean(worktree, sha)
        checkout_s = time.monotonic() - start
        problem = None
        for pick in self.picks:
            problem = problem or gitops.apply_pick(worktree, pick)
        for patch in self.patches:
            problem = problem or gitops.apply_patch(worktree, patch)
        return Prepared(worktree, Prep(time.monotonic() - start, checkout_s, note), problem)

    def describe(self, sha: str) -> CommitInfo:
        return gitops.commit_info(self.repo, sha)

    def save(self, record: BisectRecord) -> None:
        state.save(record, self.repo)
