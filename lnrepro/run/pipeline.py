"""Build once, run the gtests N times with a timeout each, parse, aggregate: a run record.

This is the oracle every later command (bisect included) asks. It knows nothing of the
command line or of rich: progress goes out through :class:`~lnrepro.model.events.Events`, the
caller renders. How to build and run is the backend's business (:mod:`lnrepro.run.backends`);
what the results mean is the record's (:mod:`lnrepro.model.record`).

Each attempt is its own process (or container), so a crash or hang in attempt 3 costs attempt 3
only. The record directory exists before the build, so the build log lands in it, and the record
is rewritten after every attempt. Outcomes that say nothing about the kernel (the build failed,
nothing matched the filter, the program printed no googletest output) are the record's verdict
and ``why``, not exceptions: every outcome leaves a record that says what happened and where the
log is.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path

from lnrepro.doors.fsio import new_record_dir, write_error, write_json
from lnrepro.errors import (
    BuildFailed,
    LnreproError,
    MalformedReport,
    NoGtestOutput,
    Stopped,
    Terminated,
)
from lnrepro.gtest.console import ConsoleParser
from lnrepro.gtest.reportfile import merge, read_report
from lnrepro.model.events import Events
from lnrepro.model.metrics import MetricRules
from lnrepro.model.record import Attempt, EnvScanner, RunRecord, RunState
from lnrepro.model.requests import RunRequest
from lnrepro.model.tests_known import missing_note, missing_patterns
from lnrepro.run.backends import Backend

LIST_TIMEOUT_S = 300.0


def gtest_argv(program: list[str], gtest_filter: str, report: Path) -> list[str]:
    """The one place googletest's flags are added to a test program."""
    return [*program, f"--gtest_filter={gtest_filter}", f"--gtest_output=json:{report}",
            "--gtest_color=no"]  # fmt: skip


def list_tests(backend: Backend, record_base: Path, gtest_filter: str = "*") -> str:
    """What ``--gtest_list_tests`` prints for the backend's program (built first if need be)."""
    work = new_record_dir(record_base, "list")
    try:
        build = backend.build(work, Events())
        if build is not None and not build.ok:
            raise BuildFailed(
                f"the build failed ({build.reason or build.first_error}); nothing to list",
                "fix the build (or pass --profile), then list again",
            )
        chunks: list[bytes] = []
        argv = [*backend.program(1), "--gtest_list_tests", f"--gtest_filter={gtest_filter}"]
        res = backend.execute(argv, work, 1, chunks.append, LIST_TIMEOUT_S)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = b"".join(chunks).decode("utf-8", "replace")
    if res.exit_code != 0:
        raise NoGtestOutput(
            f"listing the tests failed (exit {res.exit_code}): {out.strip()[-200:]}",
            "run the test program by hand with --gtest_list_tests",
        )
    return out


def run_attempt(
    backend: Backend,
    index: int,
    total: int,
    gtest_filter: str,
    record_dir: Path,
    timeout_s: float | None,
    rules: MetricRules,
    events: Events,
) -> Attempt:
    report = record_dir / f"attempt-{index}.json"
    log_path = record_dir / f"attempt-{index}.log"
    argv = gtest_argv(backend.program(index), gtest_filter, report)
    events.attempt_started(index, total, argv)
    parser = ConsoleParser(
        rules, on_test_start=events.test_started, on_test_end=events.test_finished
    )
    scanner = EnvScanner()
    try:
        with log_path.open("wb") as log:

            def sink(data: bytes) -> None:
                log.write(data)
                parser.feed(data)
                scanner.feed(data)

            problem = backend.prepare_attempt(record_dir, index, sink)
            if problem is not None:
                return Attempt(index, argv, 0, False, 0.0, log_path.name, saw_output=False,
                               env_error=problem, warnings=[f"not run: {problem}"])  # fmt: skip
            res = backend.execute(argv, record_dir, index, sink, timeout_s)
    except OSError as exc:
        raise write_error(log_path, exc) from None
    run = parser.close(res.exit_code, killed_after=timeout_s if res.timed_out else None)
    if res.timed_out:
        run.warnings.append(f"attempt {index} killed by lnrepro after the {timeout_s:g} s timeout")
    if res.leftovers:
        run.warnings.append(
            f"the test binary left {res.leftovers} process(es) running in its group; killed"
        )
    if res.escaped:
        run.warnings.append(
            f"{res.escaped} process(es) escaped the test binary's group (setsid) and were killed"
        )
    if scanner.found:
        run.warnings.append(f"the output carries a driver-layer message: {scanner.found!r}")
    if report.is_file() and not res.timed_out:
        try:
            run = merge(run, read_report(report))
        except MalformedReport as exc:  # this attempt's problem: its console output stands
            run.warnings.append(f"report ignored: {exc.message}")
    outside = [f for it in run.iterations for f in it.global_failures]
    outside += [f for it in run.iterations for fs in it.suite_failures.values() for f in fs]
    return Attempt(index, argv, res.exit_code, res.timed_out, res.seconds, log_path.name,
                   run.tests, run.warnings, run.saw_gtest_output, res.leftovers, res.escaped,
                   scanner.found, outside)  # fmt: skip


def run_tests(
    backend: Backend,
    request: RunRequest,
    *,
    events: Events | None = None,
    after_build: Callable[[RunRecord], str | None] | None = None,
) -> RunRecord:
    """Build, then run the request's tests ``repeat`` times; write and return the record.

    ``request`` must be validated (:func:`lnrepro.run.validate.validate_run`). ``after_build``
    may end the run once it has built, without attempts, by returning why (a bisect that finds
    the build identical to one it has already tested): the record says so.

    The record is written after the build and after every attempt, so a run that ends early
    (Ctrl-C, a signal, a full disk, an error) keeps every finished attempt and says why it
    stopped. A run stopped before it built or ran anything leaves no directory.
    """
    events = events or Events()
    tests = request.tests
    rules = MetricRules(extra_patterns=tests.metric_patterns)
    record = RunRecord(request, new_record_dir(request.record_dir, "run"))
    record.backend = backend.describe()
    try:
        record.fingerprint = backend.fingerprint()
        probe = record.record_dir / "attempt-1.json"
        record.commands = {
            "build": backend.build_lines(record.record_dir),
            "test": backend.shell_line(gtest_argv(backend.program(1), tests.gtest_filter, probe), record.record_dir),
        }  # fmt: skip
        record.build = backend.build(record.record_dir, events)
        if record.build is not None:
            write_json(record.record_dir / "record.json", record.to_json())
            if not record.build.ok:
                return _complete(record, record.why)
        if after_build is not None and (why := after_build(record)) is not None:
            return _complete(record, why)
        for i in range(1, tests.repeat + 1):
            attempt = run_attempt(backend, i, tests.repeat, tests.gtest_filter, record.record_dir,
                                  tests.timeout_s, rules, events)  # fmt: skip
            record.attempts.append(attempt)
            write_json(record.record_dir / "record.json", record.to_json())
            events.attempt_finished(attempt)
            if not attempt.saw_output and not attempt.timed_out and not attempt.env_error:
                return _complete(
                    record,
                    f"the test program printed no googletest output (exit {attempt.exit_code}); "
                    f"see {record.record_dir / attempt.log}",
                )
        record.missing = missing_patterns(tests.gtest_filter, [t.name for t in record.tests])
        note = missing_note(record.missing)
        if note is not None:
            record.notes.append(note)
    except BaseException as exc:
        _stop(record, exc)
        raise
    return _complete(record, None)


def _complete(record: RunRecord, why: str | None) -> RunRecord:
    record.state, record.stop_reason = RunState.COMPLETE, why
    write_json(record.record_dir / "record.json", record.to_json())
    return record


def _stop(record: RunRecord, exc: BaseException) -> None:
    """Write why the run ended; remove its directory if nothing was built or run."""
    if record.state is RunState.COMPLETE:
        return
    if not record.attempts and record.build is None:
        shutil.rmtree(record.record_dir, ignore_errors=True)
        return
    if isinstance(exc, KeyboardInterrupt):
        record.state, record.stop_reason = RunState.INTERRUPTED, "interrupted (Ctrl-C)"
    elif isinstance(exc, Terminated):
        import signal

        name = signal.Signals(exc.signum).name
        record.state, record.stop_reason = RunState.INTERRUPTED, f"interrupted ({name})"
    elif isinstance(exc, Stopped):
        record.state, record.stop_reason = RunState.INTERRUPTED, "stopped: no longer needed"
    elif isinstance(exc, LnreproError):
        record.state, record.stop_reason = RunState.ABORTED, exc.one_line()
    else:
        record.state, record.stop_reason = RunState.ABORTED, f"{type(exc).__name__}: {exc}"
    # on a full disk the attempts' own files are all that can be kept
    with contextlib.suppress(LnreproError):
        write_json(record.record_dir / "record.json", record.to_json())
