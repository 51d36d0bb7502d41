"""One bisect over a real repository: isolated, resumable, one at a time.

* Isolation: every commit is checked out in a dedicated worktree
  (``<git-common-dir>/lnrepro/worktree``), reused across steps and runs so incremental builds and
  ccache pay off. The user's checkout, branch, index, stash and uncommitted work are never touched.
* Test injection: ``--pick`` commits are cherry-picked (uncommitted) and ``--patch`` files applied
  on top of each tested commit; a commit where they do not apply is skipped with the reason.
* State: ``<git-common-dir>/lnrepro/bisect.json``, rewritten atomically after every step;
  ``--resume`` rebuilds the search from it without repeating a finished step. A lock file (with
  the owner's pid; a dead owner's lock is taken over) keeps two bisects off one repository.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lnrepro import gitops
from lnrepro.bisect.core import Graph, Mark, Search, graph_from_rev_list
from lnrepro.bisect.oracle import Evidence, Oracle
from lnrepro.errors import EndpointsDoNotSeparate, GitError, InputError, UsageError
from lnrepro.events import BisectEvents
from lnrepro.fsio import atomic_write_text, write_error

SCHEMA = "lnrepro.bisect/1"


@dataclass
class Plan:
    """Everything a bisect needs to be repeated (and resumed)."""

    repo: Path
    good: list[str]
    bad: str
    find_fix: bool = False
    first_parent: bool = False
    paths: tuple[str, ...] = ()
    picks: list[str] = field(default_factory=list)
    patches: list[str] = field(default_factory=list)
    confirm: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"repo": str(self.repo), "good": self.good, "bad": self.bad, "find_fix": self.find_fix,
                "first_parent": self.first_parent, "paths": list(self.paths), "picks": self.picks,
                "patches": self.patches, "confirm": self.confirm}  # fmt: skip

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Plan:
        return cls(Path(d["repo"]), list(d["good"]), d["bad"], bool(d["find_fix"]),
                   bool(d["first_parent"]), tuple(d.get("paths", ())), list(d["picks"]),
                   list(d["patches"]), bool(d.get("confirm", True)))  # fmt: skip


def state_dir(repo: Path) -> Path:
    return gitops.common_dir(repo) / "lnrepro"


@contextlib.contextmanager
def lock(repo: Path) -> Any:
    """One bisect per repository; a lock whose owner is dead is taken over."""
    path = state_dir(repo) / "bisect.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            try:
                pid = int(path.read_text().strip() or "0")
            except (OSError, ValueError):
                pid = 0
            if pid and Path(f"/proc/{pid}").exists() and pid != os.getpid():
                raise UsageError(
                    f"another lnrepro bisect (pid {pid}) is running on {repo}",
                    "wait for it, or stop it; its state survives and --resume continues it",
                ) from None
            path.unlink(missing_ok=True)  # its owner is gone
    else:
        raise UsageError(f"cannot take the bisect lock {path}", "remove it if no bisect runs")
    try:
        os.write(fd, f"{os.getpid()}\n".encode())
        os.close(fd)
        yield
    finally:
        path.unlink(missing_ok=True)


@dataclass
class Bisect:
    plan: Plan
    oracle: Oracle
    graph: Graph
    search: Search
    steps: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None

    # ------------------------------------------------------------------ state
    @property
    def state_path(self) -> Path:
        return state_dir(self.plan.repo) / "bisect.json"

    def save(self) -> None:
        doc = {
            "schema": SCHEMA,
            "plan": self.plan.to_json(),
            "oracle": self.oracle.describe(),
            "steps": self.steps,
            "result": self.result,
        }
        try:
            atomic_write_text(self.state_path, json.dumps(doc, indent=1) + "\n")
        except OSError as exc:
            raise write_error(self.state_path, exc) from None

    # ------------------------------------------------------------------ one step
    def _mark(self, evidence: Evidence) -> Mark:
        """The oracle speaks of passing and failing; with --find-fix "bad" is the new, fixed state."""
        if not self.plan.find_fix or evidence.mark is Mark.SKIP:
            return evidence.mark
        return Mark.BAD if evidence.mark is Mark.GOOD else Mark.GOOD

    def test(self, sha: str, kind: str, events: BisectEvents) -> Mark:
        repo = self.plan.repo
        info = gitops.commit_info(repo, sha)
        cands = len(self.search.candidates())
        events.step_started(kind, info, cands, self.search.steps_left())
        worktree = gitops.ensure_worktree(repo, state_dir(repo) / "worktree")
        start = time.monotonic()
        note = gitops.checkout_clean(worktree, sha)
        checkout_s = time.monotonic() - start
        problem = None
        for pick in self.plan.picks:
            problem = problem or gitops.apply_pick(worktree, pick)
        for patch in self.plan.patches:
            problem = problem or gitops.apply_patch(worktree, Path(patch))
        prep = time.monotonic() - start
        if problem:
            evidence = Evidence(Mark.SKIP, problem)
        else:
            evidence = self.oracle.evaluate(worktree, events)
        mark = self._mark(evidence)
        self.steps.append({"kind": kind, "sha": sha, "subject": info["subject"],
                           "prepare_s": round(prep, 3), "checkout_s": round(checkout_s, 3), "note": note,
                           **evidence.to_json(),
                           "oracle_mark": evidence.mark.value, "mark": mark.value})  # fmt: skip
        if kind != "confirm":
            self.search.record(sha, mark)
        self.save()
        events.step_finished(kind, info, evidence)
        return mark

    # ------------------------------------------------------------------ the loop
    def run(self, events: BisectEvents) -> dict[str, Any]:
        done = {(s["kind"], s["sha"]) for s in self.steps}
        events.started(len(self.search.candidates()), self.search.steps_left())
        if self.plan.confirm:
            ends = [(self.search.bad, Mark.BAD), *((g, Mark.GOOD) for g in self.search.goods)]
            for sha, want in ends:
                if ("endpoint", sha) in done:
                    continue
                got = self.test(sha, "endpoint", events)
                if got is not want:
                    self.result = {
                        "error": f"endpoint {sha[:12]} tested {got.value}, expected {want.value}"
                    }
                    self.save()
                    raise EndpointsDoNotSeparate(
                        f"the {'bad' if want is Mark.BAD else 'good'} endpoint {sha[:12]} tested "
                        f"{got.value}: the bug does not separate the endpoints",
                        "check --good/--bad and the test (or --pick the tests), or pass --no-confirm",
                    )
        while (nxt := self.search.next()) is not None:
            self.test(nxt, "step", events)
        self.result = self._result()
        fb = self.result.get("first_bad")
        if self.plan.confirm and fb:
            for sha in (fb, *self.result.get("last_good_all", [])):
                if ("confirm", sha) not in done:
                    self.test(sha, "confirm", events)
            self.result = self._result()
        self.save()
        return self.result

    def _result(self) -> dict[str, Any]:
        repo = self.plan.repo
        fb = self.search.first_bad()
        if fb is None:
            return {
                "first_bad": None,
                "candidates": [gitops.commit_info(repo, c) for c in self.search.candidates()],
                "reason": "skipped commits hide which candidate is first",
                "steps": len([s for s in self.steps if s["kind"] == "step"]),
            }
        good = self.search.last_good()
        confirms = {(s["sha"], s["mark"]) for s in self.steps if s["kind"] == "confirm"}
        consistent = all(
            (sha, want) in confirms or not any(s[0] == sha for s in confirms)
            for sha, want in [(fb, Mark.BAD.value), *((g, Mark.GOOD.value) for g in good)]
        )
        return {
            "first_bad": fb,
            "commit": gitops.commit_info(repo, fb),
            "last_good": good[0] if good else None,
            "last_good_all": good,
            "kind": "first fixed commit" if self.plan.find_fix else "first bad commit",
            "confirmed": consistent if confirms else None,
            "steps": len([s for s in self.steps if s["kind"] == "step"]),
            "endpoint_checks": len([s for s in self.steps if s["kind"] == "endpoint"]),
        }


def build(plan: Plan, oracle: Oracle) -> Bisect:
    """Resolve the plan's refs and build the commit graph and the search."""
    repo = plan.repo
    bad = gitops.resolve(repo, plan.bad)
    goods = [gitops.resolve(repo, g) for g in plan.good]
    # --find-fix: the fixed (new) state plays "bad", the older buggy commits play "good"
    tip, bottoms = (goods[0], [bad]) if plan.find_fix else (bad, goods)
    if plan.find_fix and len(goods) != 1:
        raise UsageError("--find-fix takes one --good (the fixed commit)", "pass a single --good")
    for b in bottoms:
        if not gitops.is_ancestor(repo, b, tip):
            raise GitError(
                f"{b[:12]} is not an ancestor of {tip[:12]}",
                "the older commit must come first: swap --good/--bad, or use --find-fix",
            )
    if plan.paths:  # path-limited, as git: the search's top is the newest commit touching PATHS
        top = gitops.git(repo, "rev-list", "-1", tip, "--", *plan.paths).strip()
        if not top or any(gitops.is_ancestor(repo, top, b) for b in bottoms):
            raise UsageError(
                f"no commit between the endpoints touches {' '.join(plan.paths)}",
                "widen the paths, or drop them",
            )
        tip = top
    lines = gitops.rev_list_parents(
        repo, tip, bottoms, first_parent=plan.first_parent, paths=plan.paths
    )
    graph = graph_from_rev_list([*bottoms, *lines], first_parent=plan.first_parent)
    plan.bad, plan.good = (bad, goods)
    search = Search(graph, tip, bottoms)
    return Bisect(plan, oracle, graph, search)


def load_state(repo: Path) -> dict[str, Any]:
    path = state_dir(repo) / "bisect.json"
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(
            f"no bisect to resume in {repo}", "start one with --good and --bad"
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "remove it and start again") from None
    if doc.get("schema") != SCHEMA:
        raise InputError(f"{path} is not an lnrepro bisect state", "remove it and start again")
    return doc


def resume(repo: Path, make_oracle: Callable[[dict[str, Any]], Oracle]) -> Bisect:
    """The bisect in the state file, with its finished steps replayed (none is repeated)."""
    doc = load_state(repo)
    b = build(Plan.from_json(doc["plan"]), make_oracle(doc["oracle"]))
    b.steps = list(doc["steps"])
    for s in b.steps:
        if s["kind"] != "confirm":
            b.search.record(s["sha"], Mark(s["mark"]))
    return b
