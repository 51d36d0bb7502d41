"""Build once, run the gtests N times with a timeout each, parse, aggregate: a run record.

This is the oracle every later command (bisect included) asks. It knows nothing of the
command line or of rich: progress goes out through :class:`~lnrepro.model.events.Events`, the caller
renders. How to build and run is the backend's business (:mod:`lnrepro.run.backends`); what the
results mean is the record's (:mod:`lnrepro.model.record`).

Each attempt is its own process (or container), so a crash or hang in attempt 3 costs attempt 3
only. The record directory exists before the build, so the build log lands in it, and the record
is rewritten after every attempt.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

from lnrepro.doors.fsio import new_record_dir, write_error
from lnrepro.errors import (
    BuildFailed,
    LnreproError,
    MalformedReport,
    NoGtestOutput,
    NoTestsMatched,
    Stopped,
    Terminated,
)
from lnrepro.gtest.console import ConsoleParser
from lnrepro.gtest.reportfile import merge, read_report
from lnrepro.model.events import Events
from lnrepro.model.metrics import MetricRules
from lnrepro.model.record import Attempt, EnvScanner, RunRecord, RunState, Verdict, write_record
from lnrepro.run.backends import Backend

DEFAULT_FILTER = "LayerNormBackwardOpTest.BugRepro_*:LayerNormBackwardOpTest.NIGHTLY_*"
DEFAULT_TIMEOUT_S = 1800.0  # tt-metal's own bisect script allows 30 minutes


def list_tests(
    backend: Backend, record_base: Path, gtest_filter: str = "*", timeout_s: float = 300.0
) -> str:
    """What ``--gtest_list_tests`` prints for the backend's binary (built first if need be)."""
    work = new_record_dir(record_base, "list")
    try:
        build = backend.build(work, Events())
        if build is not None and not build.get("ok"):
            raise BuildFailed(
                f"the build failed; see {work / 'build.log'}", "fix the build, then list again"
            )
        chunks: list[bytes] = []
        res = backend.execute(
            gtest_filter, work / "list.json", 1, chunks.append, timeout_s
        )  # the report flag is harmless with --gtest_list_tests; the list is on stdout
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = b"".join(chunks).decode("utf-8", "replace")
    if res.exit_code != 0:
        raise NoGtestOutput(
            f"listing the tests failed (exit {res.exit_code}): {out.strip()[-200:]}",
            "run the binary by hand with --gtest_list_tests",
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
    argv = backend.command(gtest_filter, report, index)
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

            res = backend.execute(gtest_filter, report, index, sink, timeout_s)
    except OSError as exc:
        raise write_error(log_path, exc) from None
    run = parser.close(res.exit_code)
    if res.timed_out:
        run.warnings.append(f"attempt {index} killed after the {timeout_s:g} s timeout")
    if res.leftovers:
        run.warnings.append(
            f"the test binary left {res.leftovers} process(es) running in its group; killed"
        )
    if res.escaped:
        run.warnings.append(
            f"{res.escaped} process(es) escaped the test binary's group (setsid) and were killed"
        )
    if scanner.found:
        run.warnings.append(f"environment, not kernel: the output says {scanner.found!r}")
    if report.is_file() and not res.timed_out:
        try:
            run = merge(run, read_report(report))
        except MalformedReport as exc:  # this attempt's problem: its console output stands
            run.warnings.append(f"report ignored: {exc.message}")
    return Attempt(
        index,
        argv,
        res.exit_code,
        res.timed_out,
        res.seconds,
        log_path.name,
        run,
        res.leftovers,
        res.escaped,
        scanner.found,
    )


def run_tests(
    backend: Backend,
    *,
    gtest_filter: str = DEFAULT_FILTER,
    repeat: int = 1,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    record_base: Path = Path(".lnrepro/runs"),
    rules: MetricRules | None = None,
    events: Events | None = None,
    after_build: Callable[[RunRecord], str | None] | None = None,
) -> RunRecord:
    """Build, then run the filtered tests ``repeat`` times; write and return the record.

    ``after_build`` may end the run once it has built, without attempts, by returning why (a
    bisect that finds the build identical to one it has already tested): the record says so.

    The record is written after the build and after every attempt, so a run that ends early
    (Ctrl-C, a signal, a full disk, an error) keeps every finished attempt and says why it
    stopped. A run that fails before it built or ran anything leaves no directory.

    Outcomes that say nothing about the kernel end the run with their verdict recorded and their
    own error type raised: :class:`BuildFailed`, :class:`NoTestsMatched`, :class:`NoGtestOutput`.
    """
    events = events or Events()
    rules = rules or MetricRules()
    record = RunRecord(
        backend.describe(),
        gtest_filter,
        repeat,
        timeout_s,
        new_record_dir(record_base.absolute(), "run"),
    )
    record.rerun = ["lnrepro", "run", *backend.rerun_args(), "--filter", gtest_filter]
    if repeat != 1:
        record.rerun += ["--repeat", str(repeat)]
    if timeout_s != DEFAULT_TIMEOUT_S:
        record.rerun += ["--timeout", f"{timeout_s:g}" if timeout_s is not None else "0"]
    try:
        record.fingerprint = backend.fingerprint()
        record.commands = dict(backend.plan(gtest_filter, record.record_dir))
        record.build = backend.build(record.record_dir, events)
        if record.build is not None:
            write_record(record)
            if not record.build.get("ok"):
                record.state = RunState.COMPLETE
                write_record(record)
                raise BuildFailed(
                    f"the build failed ({record.build.get('reason') or _first_error(record.build)}); "
                    f"see {record.record_dir / 'build.log'}",
                    "fix the build (or pass --profile), then rerun",
                )
        if after_build is not None and (why := after_build(record)) is not None:
            record.state, record.stop_reason = RunState.COMPLETE, why
            write_record(record)
            return record
        for i in range(1, repeat + 1):
            attempt = run_attempt(
                backend, i, repeat, gtest_filter, record.record_dir, timeout_s, rules, events
            )
            record.attempts.append(attempt)
            write_record(record)
            events.attempt_finished(attempt)
            if not attempt.run.saw_gtest_output and not attempt.timed_out and not attempt.env_error:
                raise NoGtestOutput(
                    f"the test command printed no googletest output (exit {attempt.exit_code}); "
                    f"see {record.record_dir / attempt.log}",
                    "run the command by hand: " + shlex.join(attempt.argv),
                )
        if record.verdict is Verdict.NOT_RUN:
            record.state = RunState.COMPLETE
            write_record(record)
            raise NoTestsMatched(
                f"no test matched the filter {gtest_filter!r}",
                "see which tests exist with `lnrepro run --list` and fix --filter",
            )
    except BaseException as exc:
        _stop(record, exc)
        raise
    record.state = RunState.COMPLETE
    write_record(record)
    return record


def _first_error(build: dict[str, object]) -> str:
    """The line of a failed build's tail a person looks for first: the first compiler error."""
    tail = [str(x) for x in build.get("tail") or []]  # type: ignore[attr-defined]
    line = next((x for x in tail if "error" in x.lower()), tail[-1] if tail else "")
    return line.strip()[:200]


def _stop(record: RunRecord, exc: BaseException) -> None:
    """Write why the run ended; remove its directory if nothing was built or run."""
    if record.state is RunState.COMPLETE:
        return  # an outcome (build failed, nothing matched): recorded as such already
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
        write_record(record)
