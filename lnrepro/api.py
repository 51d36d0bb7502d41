"""lnrepro as a library: one function per command, typed requests in, typed records out.

Every function validates its request completely before anything starts (no record, lock,
worktree or state for a request that is wrong) and raises :class:`~lnrepro.errors.LnreproError`
subclasses for expected failures, each with a one-line message, a fix and an exit code. Progress
goes to an :class:`~lnrepro.model.events.Events` you pass (the default shows nothing).

Example (see ``docs/api.md``)::

    from pathlib import Path
    from lnrepro import api
    from lnrepro.model.requests import EmulatorSpec, RunRequest, TestSpec

    record = api.run(RunRequest(EmulatorSpec(), TestSpec(repeat=3), Path("/tmp/runs")))
    print(record.verdict, [(t.name, t.verdict) for t in record.tests])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lnrepro.model.bisect import BisectRecord
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import RunRecord
from lnrepro.model.requests import BisectRequest, RunRequest, TtMetalSpec
from lnrepro.model.shrink import ShrinkEvents, ShrinkRecord, ShrinkRequest

__all__ = ["Plan", "bisect", "bisect_log", "check", "list_tests", "plan", "resume", "run", "shrink",
           "shrink_resume"]  # fmt: skip


def run(request: RunRequest, events: Events | None = None) -> RunRecord:
    """``lnrepro run``: build, run the tests ``repeat`` times, write and return the record.

    Outcomes that say nothing about the kernel (the build failed, no test matched, the
    environment failed) are the record's verdict and ``why``, not exceptions.
    """
    from lnrepro.run.backends.factory import make_backend
    from lnrepro.run.pipeline import run_tests
    from lnrepro.run.validate import validate_run

    req = validate_run(request)
    return run_tests(make_backend(req.backend), req, events=events)


def check(request: RunRequest) -> RunRequest:
    """``request`` validated and made concrete, as :func:`run` would (nothing starts): a caller
    that shows progress asks this first, so a wrong request is its one line and nothing else."""
    from lnrepro.run.validate import validate_run

    return validate_run(request)


@dataclass(frozen=True)
class Plan:
    """What ``run`` would do, as lines a person could type; nothing is started or written."""

    request: RunRequest
    backend: dict[str, JSON]
    build: list[str]
    test: str
    warnings: list[str]

    def to_json(self) -> dict[str, JSON]:
        return {"schema": "lnrepro.plan/1", "request": self.request.to_json(),
                "backend": self.backend, "filter": self.request.tests.selection,
                "build": self.build, "test": self.test, "warnings": self.warnings}  # fmt: skip


def plan(request: RunRequest) -> Plan:
    """``lnrepro run --dry-run``."""
    from lnrepro.run.backends.factory import make_backend
    from lnrepro.run.pipeline import attempt_argv
    from lnrepro.run.validate import validate_run

    req = validate_run(request)
    backend = make_backend(req.backend)
    where = req.record_dir / "run-<id>"
    test = backend.shell_line(attempt_argv(backend, req.tests, 1, where), where)
    desc = backend.describe()
    warnings = (
        [str(w) for w in desc.get("warnings") or []]
        if isinstance(desc.get("warnings"), list)
        else []
    )
    if isinstance(req.backend, TtMetalSpec):  # the requested tests, read before any build
        from lnrepro.doors.fsio import read_tree
        from lnrepro.model.tests_known import missing_note, missing_patterns

        facts = read_tree(req.backend.checkout)
        if facts.test_file_present and not req.tests.pytest:
            note = missing_note(missing_patterns(req.tests.gtest_filter, list(facts.tests)))
            warnings += [note] if note else []
    return Plan(req, desc, backend.build_lines(where), test, warnings)


def list_tests(request: RunRequest) -> str:
    """``lnrepro run --list``: what ``--gtest_list_tests`` prints (after a build if need be)."""
    from lnrepro.run.backends.factory import make_backend
    from lnrepro.run.pipeline import list_tests as listing
    from lnrepro.run.validate import validate_run

    req = validate_run(request)
    return listing(make_backend(req.backend), req.record_dir, req.tests)


def _runs_dir(req: BisectRequest) -> Path:
    from lnrepro.bisect import state

    # by default a bisect's records stay inside .git: the checkout stays clean
    return req.record_dir or state.state_dir(req.repo) / "runs"


def bisect(request: BisectRequest, events: BisectEvents | None = None) -> BisectRecord:
    """``lnrepro bisect``: find the first bad (or, ``find_fix``, fixed) commit.

    Raises :class:`~lnrepro.errors.EndpointsDoNotSeparate` when the endpoints (or a merge base)
    do not show the bug as they should; the record says so too. Raises a usage error, and
    replaces nothing, when the repository holds a bisect that did not finish (``resume`` it,
    or remove its state).
    """
    from lnrepro.bisect import loop, state
    from lnrepro.bisect.oracle import oracles_for
    from lnrepro.bisect.validate import validate_bisect
    from lnrepro.doors.fsio import new_record_dir

    req = validate_bisect(request)
    runs = _runs_dir(req)
    record = BisectRecord(req, rerun=tuple(req.argv()))
    b = loop.build(record, oracles_for(req, runs))
    with state.lock(req.repo):
        state.check_replaceable(req.repo)  # an interrupted bisect is continued or discarded
        record.record = new_record_dir(runs, "bisect") / "bisect.json"
        record.id = record.record.parent.name
        b.save()
        b.run(events or BisectEvents())
    return record


def resume(repo: Path, events: BisectEvents | None = None) -> BisectRecord:
    """``lnrepro bisect --resume``: the saved bisect, continued with its own request; a finished
    one (:func:`lnrepro.bisect.state.finished`) is returned as it is, nothing run."""
    from lnrepro.bisect import loop, state
    from lnrepro.bisect.oracle import oracles_for
    from lnrepro.bisect.validate import check_repo

    repo = check_repo(repo)
    with state.lock(repo):
        record = state.load(repo)
        if state.finished(record):  # its answer stands (the CLI says so)
            return record
        req = record.request
        b = loop.build(record, oracles_for(req, _runs_dir(req)))
        b.replay(record.steps)
        b.run(events or BisectEvents())
    return record


def bisect_log(repo: Path) -> BisectRecord:
    """``lnrepro bisect --log``: the saved bisect of ``repo``, as it stands."""
    from lnrepro.bisect import state
    from lnrepro.bisect.validate import check_repo

    return state.load(check_repo(repo), "show")


def shrink(request: ShrinkRequest, events: ShrinkEvents | None = None) -> ShrinkRecord:
    """``lnrepro shrink``: from a test (failing, flaky or passing) to the smallest, loudest case
    that fails every time, its one-step-smaller neighbours and (``request.source``) a test file.

    Nothing failing is an answer, not an error: the record's ``result`` is None and its ``note``
    says what was tried.
    """
    from lnrepro.shrink.run import shrink as run_shrink
    from lnrepro.shrink.validate import validate_shrink

    return run_shrink(validate_shrink(request), events)


def shrink_resume(
    where: Path, events: ShrinkEvents | None = None, budget: int | None = None
) -> ShrinkRecord:
    """``lnrepro shrink --resume DIR``: a saved shrink (a checkout's, a ``--command``'s) with
    its judgments replayed and only the rest run; ``budget`` replaces the saved one."""
    from lnrepro.shrink.run import resume

    return resume(where, events, budget)
