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
import os
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from lnrepro import options
from lnrepro.doors.fsio import log_writer, new_record_dir, write_json
from lnrepro.doors.proc import ProcResult
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
from lnrepro.hang.model import Diagnosis
from lnrepro.model.events import Events
from lnrepro.model.gtest import (
    CrashInfo,
    GtestRun,
    Iteration,
    TestResult,
    TestStatus,
    describe_exit,
)
from lnrepro.model.jsonio import JSON
from lnrepro.model.metrics import MetricRules
from lnrepro.model.record import Attempt, EnvScanner, RunRecord, RunState
from lnrepro.model.requests import BackendSpec, BinarySpec, RunRequest, TestSpec, TtMetalSpec
from lnrepro.model.tests_known import missing_nodeids, missing_note, missing_patterns
from lnrepro.run.backends import Backend, Call

LIST_TIMEOUT_S = 300.0
DPRINT_TAIL = 16 << 20  # the end of a hung attempt's log read for DPRINT lines


def gtest_argv(program: list[str], gtest_filter: str, report: Path) -> list[str]:
    """The one place googletest's flags are added to a test program."""
    return [
        *program,
        f"--gtest_filter={gtest_filter}",
        f"--gtest_output=json:{report}",
        "--gtest_color=no",
    ]


def attempt_argv(backend: Backend, tests: TestSpec, index: int, record_dir: Path) -> list[str]:
    """The command of attempt ``index``: the gtest binary with its flags, or pytest on the node
    ids with its JUnit report (:mod:`lnrepro.pytests.argv`)."""
    if tests.pytest:
        from lnrepro.numerics.plugin import MODULE
        from lnrepro.pytests.argv import pytest_argv

        return pytest_argv(
            tests.pytest,
            record_dir / f"attempt-{index}.xml",
            python=backend.python(index),
            extra=("-p", MODULE),
        )
    return gtest_argv(
        backend.program(index), tests.gtest_filter, record_dir / f"attempt-{index}.json"
    )


def list_tests(backend: Backend, record_base: Path, tests: TestSpec) -> str:
    """What ``--gtest_list_tests`` (or ``pytest --collect-only -q``) prints for the backend's
    program (built first if need be)."""
    work = new_record_dir(record_base, "list")
    try:
        build = backend.build(work, Events())
        if build is not None and not build.ok:
            raise BuildFailed(
                f"the build failed ({build.reason or build.first_error}); nothing to list",
                "fix the build (or pass --profile), then list again",
            )
        chunks: list[bytes] = []
        if tests.pytest:
            from lnrepro.pytests.argv import COLLECT

            argv = [backend.python(1), *COLLECT, *tests.pytest]
        else:
            argv = [
                *backend.program(1),
                "--gtest_list_tests",
                f"--gtest_filter={tests.gtest_filter}",
            ]
        res = backend.execute(
            Call(
                argv=argv,
                record_dir=work,
                attempt=1,
                on_output=chunks.append,
                timeout=LIST_TIMEOUT_S,
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = b"".join(chunks).decode("utf-8", "replace")
    if res.exit_code != 0:
        raise NoGtestOutput(
            f"listing the tests failed (exit {res.exit_code}): {out.strip()[-200:]}",
            "run the test program by hand with --gtest_list_tests (or pytest --collect-only)",
        )
    return out


def _log_tail(log_path: Path) -> str:
    """The end of an attempt's log (DPRINT lines, tt-metal's own timeout and triage's output)."""
    try:
        with log_path.open("rb") as fh:
            fh.seek(max(0, log_path.stat().st_size - DPRINT_TAIL))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _diagnose_hang(
    record_dir: Path, index: int, console: str
) -> tuple[Diagnosis | None, str | None]:
    """The hung attempt's watcher log read into a diagnosis, with the attempt's DPRINT lines
    about circular buffers attached to the cores they came from."""
    watcher = record_dir / f"attempt-{index}.watcher.log"
    if not watcher.is_file():
        return None, None
    from lnrepro.hang.door import read_watcher

    return read_watcher(watcher, console), watcher.name


def _keep_triage(record_dir: Path, index: int, console: str) -> Path | None:
    """tt-triage's output for a hung attempt: the file lnrepro's own run of it wrote
    (``attempt-N.triage.txt``), else what tt-metal's timeout command printed into the log,
    written to that file."""
    from lnrepro.hang.door import device_timeout_seen, triage_in_log

    path = record_dir / f"attempt-{index}.triage.txt"
    if path.is_file():
        return path
    text = triage_in_log(console) if device_timeout_seen(console) else None
    if not text or not text.strip():
        return None
    with contextlib.suppress(OSError):
        path.write_text(text, encoding="utf-8")
        return path
    return None


def read_triage(path: Path) -> Diagnosis | None:
    """tt-triage's output read into a hang diagnosis (None: nothing in it places a hang), by the
    one reader of hang texts (:func:`lnrepro.hang.door.read_triage`)."""
    from lnrepro.hang.door import read_triage as read

    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return read(text)


def _is_file(path: Path) -> bool:
    """Whether the attempt wrote its report. One lnrepro may not even look at (a folder on the
    way lost its search permission) counts as none: the console output stands, never a crash."""
    try:
        return path.is_file()
    except OSError:
        return False


def _pytest_results(tests: TestSpec, report: Path, res: ProcResult, root: Path | None) -> GtestRun:
    """A pytest attempt read from its JUnit XML; without one (a hang, a crash), each requested
    node id ended as the process did."""
    from lnrepro.pytests.argv import exit_meaning
    from lnrepro.pytests.junit import read_junit

    if _is_file(report) and not res.timed_out:
        try:
            return read_junit(report, requested=tests.pytest, root=root).as_run(res.exit_code)
        except MalformedReport as exc:
            run = GtestRun(exit_code=res.exit_code, warnings=[f"report ignored: {exc.message}"])
    else:
        run = GtestRun(exit_code=res.exit_code)
    if res.timed_out:
        status, crash = (
            TestStatus.TIMEOUT,
            CrashInfo(signal="SIGKILL", reason="killed by lnrepro at the timeout"),
        )
    else:
        status, crash = describe_exit(res.exit_code)
        crash = replace(crash, reason=f"{crash.reason}; pytest: {exit_meaning(res.exit_code)}")
    it = Iteration(
        index=1,
        tests=[TestResult(name=nid, status=status, crash=crash) for nid in tests.pytest],
        started=True,
    )
    run.iterations.append(it)
    run.saw_gtest_output = True
    return run


def _plugin_env(record_dir: Path, index: int, given: str | None = None) -> dict[str, str]:
    """The environment that loads lnrepro's margin plugin into a pytest attempt (issue 47): the
    plugin copied into the record directory as a module of its own (the project's Python needs
    no lnrepro; the directory is mounted where a container runs the tests), on ``PYTHONPATH``
    before the user's (``given``: the request's ``--env PYTHONPATH``, else this process's), and
    the file it writes each test's margins to."""
    from lnrepro.numerics import plugin

    shutil.copyfile(plugin.__file__, record_dir / f"{plugin.MODULE}.py")
    user = given if given is not None else os.environ.get("PYTHONPATH")
    path = os.pathsep.join(p for p in (str(record_dir), user) if p)
    return {"PYTHONPATH": path, plugin.ENV: str(record_dir / f"attempt-{index}.margins.jsonl")}


def _add_margins(run: GtestRun, path: Path) -> None:
    """Each test's comparisons from the plugin's file, as the metric ``used`` of the call site
    (``test_x.py:12``), on passes too; a test whose name differs from the plugin's node id (the
    report names it from another root) is matched by its end."""
    from lnrepro.numerics import plugin

    per_test = plugin.read_tests(path)
    if not per_test:
        return
    for it in run.iterations:
        for t in it.tests:
            sites = per_test.get(t.name) or next(
                (
                    m
                    for nid, m in per_test.items()
                    if nid.endswith(f"/{t.name}") or t.name.endswith(f"/{nid}")
                ),
                None,
            )
            for site, used in (sites or {}).items():
                t.metrics.setdefault(site, {})["used"] = used


def run_attempt(
    backend: Backend,
    index: int,
    total: int,
    tests: TestSpec,
    record_dir: Path,
    rules: MetricRules,
    events: Events,
) -> Attempt:
    log_path = record_dir / f"attempt-{index}.log"
    argv = attempt_argv(backend, tests, index, record_dir)
    report = record_dir / (f"attempt-{index}.xml" if tests.pytest else f"attempt-{index}.json")
    events.attempt_started(index, total, argv)
    from lnrepro.hang.door import DeviceTimeoutScanner

    timeout_scan = DeviceTimeoutScanner()

    def test_finished(t: TestResult) -> None:  # a crash on tt-metal's TIMEOUT is a hang
        events.test_finished(timeout_scan.as_hang(t))

    parser = ConsoleParser(rules, on_test_start=events.test_started, on_test_end=test_finished)
    scanner = EnvScanner()
    extra_env = None
    if tests.pytest:
        from lnrepro.pytests.argv import ENV_REMOVE, ENV_SET

        extra_env = {**ENV_SET, **dict.fromkeys(ENV_REMOVE, "")}  # empty: pytest reads none
        spec_env = getattr(getattr(backend, "spec", None), "env", None) or {}
        extra_env.update(_plugin_env(record_dir, index, spec_env.get("PYTHONPATH")))
    with log_writer(log_path) as put:

        def sink(data: bytes) -> None:
            put(data)
            timeout_scan.feed(data)
            if not tests.pytest:
                parser.feed(data)
            scanner.feed(data)

        problem = backend.prepare_attempt(record_dir, index, sink)
        if problem is not None:
            return Attempt(
                index=index,
                argv=argv,
                exit_code=0,
                timed_out=False,
                seconds=0.0,
                log=log_path.name,
                saw_output=False,
                env_error=problem,
                warnings=[f"not run: {problem}"],
            )
        res = backend.execute(
            Call(
                argv=argv,
                record_dir=record_dir,
                attempt=index,
                on_output=sink,
                timeout=tests.timeout_s,
                extra_env=extra_env,
            )
        )
    if tests.pytest:
        run = _pytest_results(tests, report, res, getattr(backend, "checkout", None))
        _add_margins(run, record_dir / f"attempt-{index}.margins.jsonl")
    else:
        run = parser.close(res.exit_code, killed_after=tests.timeout_s if res.timed_out else None)
    if res.timed_out:
        run.warnings.append(
            f"killed by lnrepro after the {tests.timeout_s:g} s timeout"  # shown as "attempt N: …"
        )
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
    if not tests.pytest and _is_file(report) and not res.timed_out:
        try:
            run = merge(run, read_report(report))
        except MalformedReport as exc:  # this attempt's problem: its console output stands
            run.warnings.append(f"report ignored: {exc.message}")
    outside = [f for it in run.iterations for f in it.global_failures]
    outside += [f for it in run.iterations for fs in it.suite_failures.values() for f in fs]
    console = _log_tail(log_path)
    from lnrepro.hang.door import device_timeout_seen, mark_device_timeout

    device_timeout = device_timeout_seen(console)
    if device_timeout:
        mark_device_timeout(run)
    hang, watcher = _diagnose_hang(record_dir, index, console)
    if hang is not None and not (res.timed_out or device_timeout or hang.hung):
        hang = None  # a failed attempt's log with nothing stuck in it: kept, not a hang
    files = {"watcher": watcher} if watcher else {}
    if res.timed_out or device_timeout:
        triaged = _keep_triage(record_dir, index, console)
        if triaged is not None:
            files["triage"] = triaged.name
            if hang is None:  # the watcher's log, when the user asked for one, comes first
                hang = read_triage(triaged)
    return Attempt(
        index=index,
        argv=argv,
        exit_code=res.exit_code,
        timed_out=res.timed_out,
        seconds=res.seconds,
        log=log_path.name,
        tests=run.tests,
        warnings=run.warnings,
        saw_output=run.saw_gtest_output,
        leftover_processes_killed=res.leftovers,
        escaped_processes_killed=res.escaped,
        env_error=scanner.found,
        outside_failures=outside,
        extra_files=files,
        hang=hang,
    )


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
    record_dir = new_record_dir(request.record_dir, "run")
    record = RunRecord(request=request, record_dir=record_dir, rerun=options.argv(request))
    record.backend = backend.describe()
    try:
        record.fingerprint = backend.fingerprint()
        record.commands = {
            "build": list[JSON](backend.build_lines(record.record_dir)),
            "test": backend.shell_line(
                attempt_argv(backend, tests, 1, record.record_dir), record.record_dir
            ),
        }
        record.build = backend.build(record.record_dir, events)
        refreeze = getattr(backend, "read_freeze", None)  # a Python project's step environment
        if record.build is not None and record.build.ok and refreeze is not None:
            record.fingerprint["python_env"] = refreeze()
        if record.build is not None:
            write_json(record.record_dir / "record.json", record.to_json())
            if not record.build.ok:
                return _complete(record, record.why)
        if after_build is not None and (why := after_build(record)) is not None:
            return _complete(record, why)
        for i in range(1, tests.repeat + 1):
            attempt = run_attempt(backend, i, tests.repeat, tests, record.record_dir, rules, events)
            record.attempts.append(attempt)
            write_json(record.record_dir / "record.json", record.to_json())
            events.attempt_finished(attempt)
            if not attempt.saw_output and not attempt.timed_out and not attempt.env_error:
                return _complete(record, _no_output(tests, attempt, record.record_dir))
        names = [t.name for t in record.tests]
        record.missing = (
            missing_nodeids(tests.pytest, names)
            if tests.pytest
            else missing_patterns(tests.gtest_filter, names)
        )
        note = missing_note(record.missing)
        if note is not None:
            record.notes.append(note)
    except BaseException as exc:
        _stop(record, exc)
        raise
    return _complete(record, None)


def _no_output(tests: TestSpec, attempt: Attempt, record_dir: Path) -> str:
    if tests.pytest:
        from lnrepro.pytests.argv import exit_meaning

        return (
            f"pytest reported no test (exit {attempt.exit_code}: "
            f"{exit_meaning(attempt.exit_code)}); see {record_dir / attempt.log}"
        )
    return (
        f"the test program printed no googletest output (exit {attempt.exit_code}); "
        f"see {record_dir / attempt.log}"
    )


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
    ran = f" after {len(record.attempts)} of {record.request.tests.repeat} attempt(s)"
    if isinstance(exc, KeyboardInterrupt):
        record.state, record.stop_reason = RunState.INTERRUPTED, f"interrupted (Ctrl-C){ran}"
    elif isinstance(exc, Terminated):
        import signal

        name = signal.Signals(exc.signum).name
        record.state, record.stop_reason = RunState.INTERRUPTED, f"interrupted ({name}){ran}"
    elif isinstance(exc, Stopped):
        record.state, record.stop_reason = RunState.INTERRUPTED, "stopped: no longer needed"
    elif isinstance(exc, LnreproError):
        record.state, record.stop_reason = RunState.ABORTED, exc.one_line()
    else:
        record.state, record.stop_reason = RunState.ABORTED, f"{type(exc).__name__}: {exc}"
    # on a full disk the attempts' own files are all that can be kept
    with contextlib.suppress(LnreproError):
        write_json(record.record_dir / "record.json", record.to_json())


# ---------------------------------------------------------------------------------- hangs
def diagnosis_how(spec: BackendSpec) -> str | None:
    """How a hang on this backend gets a diagnosis (which kernel waits on what, on which cores);
    None where nothing hangs (the emulator). tt-metal writes its watcher log when
    ``TT_METAL_WATCHER=<seconds>`` is set (its docs' watcher page), under ``TT_METAL_LOGS_PATH``
    or ``$TT_METAL_HOME`` (tt_metal/llrt/rtoptions.cpp); what lnrepro does with it and with
    tt-triage is :mod:`lnrepro.run.backends.ttmetal`'s."""
    if isinstance(spec, BinarySpec):
        return (
            "--watcher is --backend tt-metal's: set TT_METAL_WATCHER=1 in the environment (the "
            "binary inherits it) and pass the watcher log it writes (generated/watcher/"
            "watcher.log under $TT_METAL_LOGS_PATH or $TT_METAL_HOME) to `lnrepro explain`; "
            "or run the checkout with --tt-metal DIR --runner local --watcher 1, which keeps "
            "that log and runs tt-triage on each hang"
        )
    if isinstance(spec, TtMetalSpec):
        how = [] if spec.watcher_s else ["rerun with --watcher 1 (its log is kept and read)"]
        if not spec.triage:
            how.append("drop --no-triage (tt-triage then runs on each hang, before the kill)")
        else:
            how.append(
                "tt-triage runs on each hang when the checkout has tools/tt-triage.py; "
                "--dispatch-timeout S (below --timeout) lets tt-metal detect the hang "
                "and run it itself"
            )
        return "; ".join(how)
    return None


def undiagnosed_hang(rec: RunRecord) -> str | None:
    """The attempts that hung and kept nothing that places the hang (no watcher log, no
    tt-triage output), said once: in which test the first hung, and how to get a diagnosis on
    this backend. None when every hang has its diagnosis (or nothing hung)."""
    hung = [
        a
        for a in rec.attempts
        if a.hang is None and (a.timed_out or any(t.status is TestStatus.TIMEOUT for t in a.tests))
    ]
    if not hung:
        return None
    a = hung[0]
    tests = [t.name for t in a.tests if t.status is TestStatus.TIMEOUT]
    where = f"in {', '.join(tests)}" if tests else "before any test started"
    kill = f" (killed after the {rec.request.tests.timeout_s:g} s timeout)" if a.timed_out else ""
    more = f"; {len(hung) - 1} more attempt(s) hung, none diagnosed" if len(hung) > 1 else ""
    how = diagnosis_how(rec.request.backend)
    return (
        f"attempt {a.index} hung {where}{kill} and kept no watcher log or tt-triage output: "
        f"nothing says where it waits{more}" + (f" — for a diagnosis: {how}" if how else "")
    )
