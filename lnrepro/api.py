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

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal

from lnrepro import options
from lnrepro.model.bisect import BisectRecord
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.jsonio import JSON, strings
from lnrepro.model.record import RunRecord
from lnrepro.model.requests import (
    DEFAULT_RECORD_DIR,
    BisectRequest,
    CompareRequest,
    EnvCheckRequest,
    ExplainRequest,
    ParseRequest,
    ReportFormat,
    ReportRequest,
    ResolvedBisect,
    RunRequest,
    RunsRequest,
    ShowRequest,
    ToleranceRequest,
    TtMetalSpec,
)
from lnrepro.model.shrink import ShrinkEvents, ShrinkRecord, ShrinkRequest
from lnrepro.studies.explain_doc import (
    EXPLAIN_READS,
    EXPLAIN_SCHEMA,
    Explanation,
    HangText,
    read_log,
    read_run,
)

if TYPE_CHECKING:
    from lnrepro.doors.store import Entry
    from lnrepro.envcheck import EnvReport
    from lnrepro.model.compare import CompareRow
    from lnrepro.model.gtest import GtestRun
    from lnrepro.studies.tolerance import ShapeStudy, TestVerdict

__all__ = [
    "EXPLAIN_SCHEMA",
    "RUNS_SCHEMA",
    "Comparison",
    "Explanation",
    "HangText",
    "Plan",
    "Progress",
    "Report",
    "ShapeTolerance",
    "TestsTolerance",
    "bisect",
    "bisect_log",
    "check",
    "check_env",
    "check_tolerance",
    "compare",
    "env_check",
    "explain",
    "list_tests",
    "parse",
    "plan",
    "report",
    "resume",
    "run",
    "runs",
    "show",
    "shrink",
    "shrink_resume",
    "tolerance",
]


def run(request: RunRequest, events: Events | None = None) -> RunRecord:
    """``lnrepro run``: build, run the tests ``repeat`` times, write and return the record.

    Outcomes that say nothing about the kernel (the build failed, no test matched, the
    environment failed) are the record's verdict and ``why``, not exceptions.
    """
    from lnrepro.run.backends.factory import make_backend
    from lnrepro.run.pipeline import run_tests

    req = check(request)
    return run_tests(make_backend(req.backend), req, events=events)


def check(request: RunRequest) -> RunRequest:
    """``request`` validated and made concrete, as :func:`run` would (nothing starts): a caller
    that shows progress asks this first, so a wrong request is its one line and nothing else."""
    from lnrepro.run.validate import validate_run

    return validate_run(request)


# /2: a Python project's backend (issue 46)
PLAN_SCHEMA: Literal["lnrepro.plan/2"] = "lnrepro.plan/2"


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What ``run`` would do, as lines a person could type; nothing is started or written.
    ``run --dry-run --json`` prints it (docs/schemas/plan.json is derived from it)."""

    schema: Literal["lnrepro.plan/2"] = PLAN_SCHEMA
    request: RunRequest
    backend: dict[str, JSON]  # the backend's resolved setup, as it describes itself
    filter: str  # the tests it selects (the request's filter, or its pytest node ids)
    build: list[str]
    test: str
    warnings: list[str]

    def to_json(self) -> JSON:
        from lnrepro.model import codec

        return codec.encode(self)


def plan(request: RunRequest) -> Plan:
    """``lnrepro run --dry-run``."""
    from lnrepro.run.backends.factory import make_backend
    from lnrepro.run.pipeline import attempt_argv

    req = check(request)
    backend = make_backend(req.backend)
    where = req.record_dir / "run-<id>"
    test = backend.shell_line(attempt_argv(backend, req.tests, 1, where), where)
    desc = backend.describe()
    warnings = strings(desc, "warnings")
    if isinstance(req.backend, TtMetalSpec):  # the requested tests, read before any build
        from lnrepro.doors.fsio import read_tree
        from lnrepro.model.tests_known import missing_note, missing_patterns

        facts = read_tree(req.backend.checkout)
        if facts.test_file_present and not req.tests.pytest:
            note = missing_note(missing_patterns(req.tests.gtest_filter, list(facts.tests)))
            warnings += [note] if note else []
    return Plan(
        request=req,
        backend=desc,
        filter=req.tests.selection,
        build=backend.build_lines(where),
        test=test,
        warnings=warnings,
    )


def list_tests(request: RunRequest) -> str:
    """``lnrepro run --list``: what ``--gtest_list_tests`` prints (after a build if need be)."""
    from lnrepro.run.backends.factory import make_backend
    from lnrepro.run.pipeline import list_tests as listing

    req = check(request)
    return listing(make_backend(req.backend), req.record_dir, req.tests)


def _runs_dir(req: ResolvedBisect) -> Path:
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
    from lnrepro.bisect.validate import check_bisect, resolve_bisect
    from lnrepro.doors.fsio import new_record_dir

    req = resolve_bisect(check_bisect(request))  # the request's rules, then what it names
    runs = _runs_dir(req)
    record = BisectRecord(request=req, rerun=tuple(options.argv(req)))
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


# ---------------------------------------------------------------------------------- saved records
RUNS_SCHEMA = "lnrepro.runs/1"


def _what_is(path: Path) -> str | None:
    """What is wrong with a record directory the user named: missing, or not a directory. A
    path nobody may look at is left to the store, which says so (exit 5)."""
    try:
        if not path.exists():
            return None if path.is_symlink() else "does not exist"
        return None if path.is_dir() else "is a file, not a directory"
    except OSError:
        return None


def _bases(record_dir: Path | None) -> list[Path]:
    """Where to look: ``record_dir`` when given; else the default and the bisects' own place."""
    from lnrepro.doors.store import bases_for
    from lnrepro.errors import UsageError

    if record_dir is None:
        return bases_for(DEFAULT_RECORD_DIR, False)
    what = _what_is(record_dir)
    if what is not None:
        raise UsageError(
            f"--record-dir {record_dir} {what}",
            "pass the directory lnrepro run and bisect write their records to "
            f"(default {DEFAULT_RECORD_DIR})",
        )
    return bases_for(record_dir, True)


def runs(request: RunsRequest) -> list[Entry]:
    """``lnrepro runs``: every saved run and bisect, oldest first; one that cannot be read is an
    entry whose ``state`` is ``unreadable`` and whose ``problem`` says why."""
    from lnrepro.doors.store import scan

    return scan(_bases(request.record_dir))


def show(request: ShowRequest) -> RunRecord | BisectRecord:
    """``lnrepro show``: a saved run or bisect."""
    from lnrepro.doors.store import load

    return load(_bases(request.record_dir), request.ref)


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """Two runs and, per test, what changed from ``a`` to ``b``."""

    a: RunRecord
    b: RunRecord
    rows: list[CompareRow]

    def to_json(self) -> JSON:
        from lnrepro.model.codec import encode
        from lnrepro.model.compare import CompareDoc, environment_changes

        changes = tuple(environment_changes(self.a, self.b))
        return encode(
            CompareDoc(a=self.a.id, b=self.b.id, tests=tuple(self.rows), environment=changes)
        )


def compare(request: CompareRequest) -> Comparison:
    """``lnrepro compare``: two saved runs, test by test."""
    from lnrepro.doors.store import load_run
    from lnrepro.model.compare import compare as compare_rows

    where = _bases(request.record_dir)
    a = load_run(where, request.a, "compare takes two runs")
    b = load_run(where, request.b, "compare takes two runs")
    return Comparison(a=a, b=b, rows=compare_rows(a, b))


@dataclass(frozen=True, kw_only=True)
class Report:
    """A saved record and its report, ready to print or write."""

    record: RunRecord | BisectRecord
    format: ReportFormat
    text: str


def report(request: ReportRequest) -> Report:
    """``lnrepro report``: a run or bisect as a GitHub issue body (md), JUnit XML or its JSON."""
    from lnrepro.doors import store
    from lnrepro.errors import UsageError
    from lnrepro.model.jsonio import dumps
    from lnrepro.present import junit, markdown

    fmt = ReportFormat(request.format)
    where = _bases(request.record_dir)
    rec = store.load(where, request.ref)
    related = store.load(where, request.bisect) if request.bisect else None
    if related is not None and not isinstance(related, BisectRecord):
        raise UsageError(f"--bisect {request.bisect} is a run record", "pass a bisect-* id")
    if fmt is ReportFormat.JSON:
        text = dumps(rec.to_json()) + "\n"
    elif isinstance(rec, BisectRecord):
        text = (
            junit.bisect_junit(rec)
            if fmt is ReportFormat.JUNIT
            else markdown.bisect_markdown(rec, next(iter(store.runs_of_bisect(rec)), None))
        )
    elif fmt is ReportFormat.JUNIT:
        text = junit.run_junit(rec, store.logs_of(rec))
    else:
        bis = related or store.related_bisect(where, rec)
        text = markdown.run_markdown(rec, store.logs_of(rec), bis)
    return Report(record=rec, format=fmt, text=text)


# ---------------------------------------------------------------------------------- a gtest log
def parse(request: ParseRequest, stream: BinaryIO | None = None) -> GtestRun:
    """``lnrepro parse``: a gtest console log (``request.log``; None: ``stream``, named
    "standard input") and its report, read into typed results (``ok``: every test passed)."""
    from lnrepro.errors import UsageError
    from lnrepro.gtest.files import parse_log_file, parse_log_stream
    from lnrepro.model.metrics import MetricRules
    from lnrepro.run.validate import check_metric_patterns

    check_metric_patterns(request.metric_patterns)
    rules = MetricRules(extra_patterns=request.metric_patterns)
    if request.log is not None:
        return parse_log_file(
            request.log, report=request.report, exit_code=request.exit_code, rules=rules
        )
    if stream is None:
        raise UsageError("no log to parse", "pass a log path, or a stream with log=None")
    return parse_log_stream(
        stream, "standard input", report=request.report, exit_code=request.exit_code, rules=rules
    )


# ---------------------------------------------------------------------------------- studies
class Progress:
    """A long study's progress, as one line that changes: the default shows nothing."""

    def started(self, what: str) -> None: ...
    def update(self, what: str, subject: str = "") -> None:
        """``subject`` (a test's name): a new one is worth a line of its own in a log."""

    def finished(self) -> None: ...


def explain(
    request: ExplainRequest, progress: Progress | None = None, stream: BinaryIO | None = None
) -> HangText | Explanation:
    """``lnrepro explain``: which mechanism explains what a card showed. A hang text alone is
    its diagnosis (:class:`HangText`); a run or gtest log has every candidate model (defect set
    x kernel era x arch) scored on its tests (:class:`Explanation`). An input error when it
    holds no test that passed or failed and no hang."""
    from dataclasses import replace

    from lnrepro.errors import InputError, MalformedLog
    from lnrepro.options.table import flag
    from lnrepro.studies import model_fit as ex

    ref, path = request.ref, Path(request.ref)
    if ("/" in ref or path.suffix) and not path.exists() and not path.is_symlink():
        # a path, not a record id (run-*, bisect-*, `last` have neither a slash nor a suffix)
        raise MalformedLog(f"{ref}: no such file", EXPLAIN_READS)
    is_log = (
        path.is_file()
        and path.name not in ("record.json", "bisect.json")
        and not ref.endswith(".json")
    )
    if ref == "-" and stream is not None:  # `explain -`: a paste on standard input, as parse -
        found = read_log(Path("standard input"), stream)
    else:
        found = read_log(path) if is_log else read_run(_bases(request.record_dir), ref)
    if isinstance(found, HangText):
        return found
    if not found.observed and not found.hangs and not found.undiagnosed:
        raise InputError(
            f"no passed or failed test and no hang diagnosis in {found.source}",
            "pass a log or run that ran the tests (for a hang: a run with "
            f"{flag(TtMetalSpec, 'watcher_s')} N)",
        )
    if not found.observed:
        return found  # nothing to score: its meta says no model, no test
    ex.check_modelled(found.observed)  # before anything is shown: a wrong log is one line
    shown = progress or Progress()
    total = ex.n_models(ex.ERAS, ex.ARCHES)
    shown.started(f"explain: {total} models on {len(found.observed)} test(s)")
    try:
        fits, meta = ex.explain(
            found.observed,
            eras=ex.ERAS,
            arches=ex.ARCHES,
            on_progress=lambda n, of: shown.update(
                f"explain: {total} models, emulator run {n}/{of}"
            ),
        )
    finally:
        shown.finished()
    return replace(found, fits=fits, meta=meta)


@dataclass(frozen=True, kw_only=True)
class _Tolerance:
    """A :class:`ToleranceRequest` made concrete: what the study runs on."""

    request: ToleranceRequest
    rows: int = 0  # with a shape: B*S*H rows of F features
    features: int = 0
    models: tuple[str, ...] = ()  # with a shape: the studies' names of the defect sets
    tests: list[str] = field(default_factory=list)  # without: the modelled tests


@dataclass(frozen=True, kw_only=True)
class ShapeTolerance:
    """``tolerance --shape``: bands per tensor and rtol, every data kind (and a plot, if asked)."""

    shape: str
    study: ShapeStudy
    plot: Path | None

    def to_json(self) -> JSON:
        from lnrepro.model import codec

        return codec.encode(self.study.document(self.shape))


@dataclass(frozen=True, kw_only=True)
class TestsTolerance:
    """``tolerance``: each test's own tolerance, judged."""

    __test__ = False
    trials: int
    alpha: float
    tests: list[TestVerdict]

    def to_json(self) -> JSON:
        from lnrepro.model import codec
        from lnrepro.studies.tolerance import TestsDoc

        doc = TestsDoc(trials=self.trials, alpha=self.alpha, tests=tuple(self.tests))
        return codec.encode(doc)


def tolerance_model(text: str) -> str:
    """A ``--defect`` of tolerance, read as run reads its own: the study's name for that set."""
    from lnrepro.emulator.defects import defects_label, parse_defects
    from lnrepro.errors import UsageError
    from lnrepro.studies.tolerance import MODELS

    try:
        chosen = parse_defects(text)
    except ValueError as exc:
        raise UsageError(f"--defect: {exc}", "see `lnrepro tolerance --help`") from None
    if not chosen:  # the correct kernel: the study's reference, not a model to compare with it
        raise UsageError(
            f"--defect {text} is the correct kernel, which every study measures as its reference",
            "name a defect to compare with it, e.g. --defect shipped",
        )
    return next((name for name, d in MODELS.items() if d == chosen), defects_label(chosen))


def _shape(text: str) -> tuple[int, int]:
    """B,S,H,F as (rows, features), within what this machine can study."""
    from lnrepro.errors import UsageError
    from lnrepro.studies.tolerance import check_shape

    try:
        b, sq, h, f = (int(v) for v in text.split(","))
        if min(b, sq, h, f) < 1:
            raise ValueError
    except ValueError:
        raise UsageError(f"--shape {text!r} is not B,S,H,F", "e.g. --shape 3,273,1,8462") from None
    problem = check_shape(b * sq * h, f)
    if problem:
        raise UsageError(
            f"--shape {text}: {problem}", "study a smaller shape (the bug shows from 64 tiles on)"
        )
    return b * sq * h, f


def check_tolerance(request: ToleranceRequest) -> _Tolerance:
    """``request`` validated and made concrete, as :func:`tolerance` would (nothing starts)."""
    from lnrepro.errors import UsageError
    from lnrepro.model.requests import StudyEra
    from lnrepro.run.validate import within

    r = request
    StudyEra(r.kernel_era)
    within(r.trials, "--trials", 2, 100_000, "e.g. --trials 200")
    if not (math.isfinite(r.alpha) and 1e-12 <= r.alpha <= 0.5):
        raise UsageError(f"--alpha {r.alpha:g} is not from 1e-12 to 0.5", "e.g. --alpha 1e-6")
    if r.shape is None:
        for flag, v in (
            ("--defect", r.defects),
            ("--reference-variants", r.reference_variants),
            ("--plot", r.plot),
        ):
            if v:
                raise UsageError(
                    f"{flag} only applies with --shape", f"add --shape B,S,H,F, or drop {flag}"
                )
    elif r.tests:
        raise UsageError("--test and --shape do not go together", "pick one")
    from lnrepro.studies import tolerance as tl

    if r.shape is not None:
        rows, features = _shape(r.shape)
        models = tuple(tolerance_model(d) for d in r.defects) or tuple(tl.MODELS)
        if r.plot is not None:
            from lnrepro.present.plot import check_path

            check_path(r.plot)
        return _Tolerance(request=r, rows=rows, features=features, models=models)
    names = tl.select_tests(r.tests)
    if not names:
        raise UsageError(
            f"no modelled test matches {', '.join(r.tests)}", "see `lnrepro run --list`"
        )
    return _Tolerance(request=r, tests=names)


def tolerance(
    request: ToleranceRequest, progress: Progress | None = None
) -> ShapeTolerance | TestsTolerance:
    """``lnrepro tolerance``: what a tolerance does, measured on the emulator (with a shape:
    the bands the correct kernel passes and each defect's power against them; without: the
    verdict of each test's own tolerance). Writes ``request.plot`` when given."""
    from lnrepro.emulator.defects import Era
    from lnrepro.studies import tolerance as tl

    t = check_tolerance(request)
    r, era, shown = t.request, Era(request.kernel_era), progress or Progress()
    shown.started("tolerance: sampling")
    try:
        if r.shape is not None:
            study = tl.shape_study(
                t.rows,
                t.features,
                trials=r.trials,
                models=t.models,
                era=era,
                alpha=r.alpha,
                reference_variants=r.reference_variants,
                progress=lambda d, n: shown.update(f"tolerance: draw {d}/{n}"),
            )
        else:
            verdicts = tl.seeds_table(
                t.tests,
                trials=r.trials,
                alpha=r.alpha,
                era=era,
                progress=lambda nm, d, n: shown.update(f"tolerance: draw {d}/{n} of {nm}", nm),
            )
    finally:
        shown.finished()
    if r.shape is None:
        return TestsTolerance(trials=r.trials, alpha=r.alpha, tests=verdicts)
    if r.plot is not None:
        from lnrepro.present.plot import tolerance_plot

        s = study.samples
        tolerance_plot(
            {m: s.get(m, "test", "dx", 0.0) for m in s.data},
            study.plot_lines(),
            f"dx errors, shape {r.shape}, {r.trials} draws",
            "atol needed to pass (dx, rtol 0)",
            r.plot,
        )
    return ShapeTolerance(shape=r.shape, study=study, plot=r.plot)


# ---------------------------------------------------------------------------------- env-check
_VERSION = re.compile(r"^\d+(?:\.\d+){0,3}$")


def check_env(request: EnvCheckRequest) -> EnvCheckRequest:
    """``request`` validated, as :func:`env_check` would (nothing starts)."""
    from lnrepro.errors import UsageError
    from lnrepro.model.requests import MountSet
    from lnrepro.run.validate import check_image

    r = request
    if r.sysroot is not None and r.container:
        raise UsageError("--sysroot and --container do not go together", "pick one")
    if not r.container and (r.image is not None or r.mount_set is not None):
        raise UsageError(
            ("--image" if r.image is not None else "--mount-set")
            + " only applies with --container",
            "add --container, or drop the option",
        )
    check_image(r.image)
    if r.min_driver is not None and not _VERSION.match(r.min_driver):
        raise UsageError(
            f"--min-driver {r.min_driver!r} is not a version", "give a version like 1.33 or 2.0.0"
        )
    if r.mount_set is not None:
        MountSet(r.mount_set)
    return r


def env_check(request: EnvCheckRequest) -> EnvReport:
    """``lnrepro env-check``: every check (stable ids) of this host, a sysroot or (also) the
    inside of lnrepro's container, each failure with its fix; ``failed`` when any failed."""
    from lnrepro import envcheck
    from lnrepro.model.requests import MountSet

    r = check_env(request)
    home = r.tt_metal.absolute() if r.tt_metal is not None else None
    if r.sysroot is not None:
        return envcheck.check_sysroot(r.sysroot, home, r.min_driver)
    if r.container:
        from lnrepro.doors.container import DEFAULT_IMAGE

        mounts = MountSet(r.mount_set or MountSet.FULL).value
        return envcheck.check_container(r.image or DEFAULT_IMAGE, home, r.min_driver, mounts)
    return envcheck.check_host(home, r.min_driver)
