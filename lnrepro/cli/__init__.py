"""The ``lnrepro`` command line: parse arguments, call the core, render, return an exit code.

Only click and lnrepro.errors are imported at start-up; each command imports what it
needs when it runs, so ``lnrepro --help`` never loads numpy, docker or git.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from lnrepro import __version__
from lnrepro.cli.options import backend_options, run_options
from lnrepro.errors import (
    DiskFull,
    EnvironmentProblem,
    ExitCode,
    LnreproError,
    Terminated,
    UsageError,
)

EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 tests or checks failed; 2 usage error; 3 internal error; "
    "4 bad input file; 5 environment problem (Docker, device, tool, disk) or nothing ran; "
    "6 git problem; 7 timeout; 130 interrupted (Ctrl-C); 143/129 terminated (SIGTERM/SIGHUP)."
)
# a docker image reference: [host[:port]/]path[:tag][@digest], lower-case path components
_IMAGE_REF = re.compile(
    r"^(?:[a-zA-Z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-][a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$"
)
_VERSION = re.compile(r"^\d+(?:\.\d+){0,3}$")


def _exclusive(**flags: object) -> None:
    given = [f"--{k.replace('_', '-')}" for k, v in flags.items() if v]
    if len(given) > 1:
        raise UsageError(f"{' and '.join(given)} do not go together", "pick one")


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, "--version", "-V", prog_name="lnrepro")
def cli() -> None:
    """Reproduce, measure and bisect numerical bugs in accelerator kernels.

    First target: tt-train's fused LayerNorm backward kernel in tt-metal, whose
    block-based path gets gradients wrong by ~1000 for constant inputs while the
    random-data NIGHTLY test passes. Runs on a Tenstorrent card, or anywhere on the
    built-in numpy emulator of the kernel.
    """


def metric_pattern_option(f: Any) -> Any:
    """--metric-pattern, shared by every command that parses gtest output."""
    return click.option(
        "--metric-pattern",
        "metric_patterns",
        multiple=True,
        metavar="REGEX",
        help="Extra metric regex with named groups: (?P<tensor>...) and one per metric. Repeatable.",
    )(f)


def metric_rules(patterns: tuple[str, ...]) -> Any:
    """MetricRules with the user's extra patterns, or a usage error naming the bad one."""
    from lnrepro.model.metrics import MetricRules, validate_pattern

    for p in patterns:
        problem = validate_pattern(p)
        if problem:
            raise UsageError(f"--metric-pattern {p!r}: {problem}", "see the command's --help")
    return MetricRules(extra_patterns=patterns)


# ---------------------------------------------------------------------- parse
@cli.command(short_help="Parse a gtest log (and its report) into typed results.")
@click.argument("log", metavar="LOG|-")
@click.option(
    "--report",
    type=click.Path(path_type=Path),
    help="The --gtest_output JSON or XML report of the same run.",
)
@click.option(
    "--exit-code",
    type=int,
    help="The binary's exit status, to say why an unfinished test ended (139 SIGSEGV, 134 SIGABRT, 124/137 timeout).",
)
@metric_pattern_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the lnrepro.gtest-run/1 JSON document instead of a table.",
)
@click.option("--markdown", is_flag=True, help="Print a Markdown table to paste into an issue.")
def parse(
    log: str,
    report: Path | None,
    exit_code: int | None,
    metric_patterns: tuple[str, ...],
    as_json: bool,
    markdown: bool,
) -> int:
    """Parse what a gtest binary printed (and its report) into typed results.

    LOG is the console output (ANSI colour, logger noise and --gtest_repeat are fine), or
    - for standard input (`ttml_tests 2>&1 | lnrepro parse -`). Exits 0 when every test
    passed, 1 when any failed, crashed or timed out.
    """
    import json

    from lnrepro.gtest.files import parse_log_file, parse_log_stream

    _exclusive(json=as_json, markdown=markdown)
    rules = metric_rules(metric_patterns)
    if log == "-":
        run = parse_log_stream(
            sys.stdin.buffer, "standard input", report=report, exit_code=exit_code, rules=rules
        )
    else:
        run = parse_log_file(Path(log), report=report, exit_code=exit_code, rules=rules)
    if as_json:
        click.echo(json.dumps(run.to_json(), indent=2))
    elif markdown:
        from lnrepro.present.console import gtest_run_markdown

        click.echo(gtest_run_markdown(run), nl=False)
    else:
        from lnrepro.present.console import make_console, render_gtest_run

        render_gtest_run(run, make_console())
    return ExitCode.OK if run.ok else ExitCode.FAILED


# ------------------------------------------------------------------ env-check
@cli.command("env-check", short_help="Check this host (or container) can run tt-metal's tests.")
@click.option(
    "--sysroot",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Judge DIR as if it were / (its proc/, sys/, dev/).",
)
@click.option(
    "--container",
    "in_container",
    is_flag=True,
    help="Also start lnrepro's container (same mounts, devices, user, env as run) and judge it "
    "from inside. Needs the image on this machine: tt-metal's dev image is several GB "
    "(docker pull it once), or pass --image with any local image that has /bin/sh.",
)
@click.option(
    "--image",
    default=None,
    metavar="IMAGE",
    help="Image for --container. [default: "
    "ghcr.io/tenstorrent/tt-metal/tt-metalium/ubuntu-22.04-dev-amd64:latest]",
)
@click.option(
    "--mount-dev",
    is_flag=True,
    help="With --container: also mount the host's /dev (-v /dev:/dev), as seed 001 did.",
)
@click.option(
    "--tt-metal",
    "tt_metal",
    type=click.Path(path_type=Path),
    envvar="TT_METAL_HOME",
    help="The tt-metal checkout. [default: $TT_METAL_HOME]",
)
@click.option(
    "--min-driver", default=None, help="Oldest acceptable tt-kmd version. [default: 1.33]"
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print {checks: [{id, status, detail, remedy}], summary} as JSON.",
)
def env_check(
    sysroot: Path | None,
    in_container: bool,
    image: str | None,
    mount_dev: bool,
    tt_metal: Path | None,
    min_driver: str | None,
    as_json: bool,
) -> int:
    """Check that this host (or container) can run tt-metal's tests; say how to fix what cannot.

    Checks (stable ids): docker, device, driver, hugepages-count, hugepages-mount, iommu,
    sysfs, arch, tt-metal-home, submodules, lfs, disk, tt-smi. Exits 0 when nothing failed,
    1 when something did, 2 on usage errors.
    """
    import json

    from lnrepro import envcheck

    _exclusive(sysroot=sysroot is not None, container=in_container)
    if not in_container and (image is not None or mount_dev):
        raise UsageError(
            ("--image" if image is not None else "--mount-dev") + " only applies with --container",
            "add --container, or drop the option",
        )
    if image is not None and not _IMAGE_REF.match(image):
        raise UsageError(
            f"--image {image!r} is not a valid image name", "use a name like repo/name:tag"
        )
    if min_driver is not None and not _VERSION.match(min_driver):
        raise UsageError(
            f"--min-driver {min_driver!r} is not a version", "give a version like 1.33 or 2.0.0"
        )
    home = tt_metal.resolve() if tt_metal is not None else None
    if sysroot is not None:
        report = envcheck.check_sysroot(sysroot, home, min_driver)
    elif in_container:
        from lnrepro.doors.container import DEFAULT_IMAGE

        report = envcheck.check_container(image or DEFAULT_IMAGE, home, min_driver, mount_dev)
    else:
        report = envcheck.check_host(home, min_driver)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        from lnrepro.present.console import make_console, render_env

        render_env(report, make_console())
    return ExitCode.FAILED if report.failed else ExitCode.OK


# ------------------------------------------------------------------------ run
@cli.command(short_help="Run the BugRepro and NIGHTLY gtests N times, with timeouts; report.")
@backend_options
@run_options
@metric_pattern_option
@click.option(
    "--list", "list_tests", is_flag=True, help="List the tests the backend has, then exit."
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (the docker run line, build and test commands) and run nothing.",
)
@click.option(
    "--bisect-exit-code",
    is_flag=True,
    help="Exit as `git bisect run` expects: 0 good (PASS), 1 bad, 125 skip (build failed, "
    "environment error, no test ran).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the lnrepro.run/2 record (with its id) as JSON."
)
@click.option(
    "--markdown",
    is_flag=True,
    help="Print the run as a GitHub issue body (as `lnrepro report ID` does).",
)
def run(
    backend_opts: Any,
    gtest_filter: str | None,
    repeat: int,
    timeout_s: float,
    record_dir: Path,
    metric_patterns: tuple[str, ...],
    list_tests: bool,
    dry_run: bool,
    bisect_exit_code: bool,
    as_json: bool,
    markdown: bool,
) -> int:
    """Run the BugRepro and NIGHTLY gtests, repeatedly with timeouts, and report.

    Builds the code under test first when there is any (--tt-metal: in lnrepro's container by
    default). Each attempt runs in its own process (or container); its console log, gtest JSON
    report and the parsed results go into a new record directory. Exits 0 when every test
    passed every time, 1 when any failed, crashed or hung, 5 when nothing about the kernel
    could be learned (build failed, environment error, no test matched).

    \b
    lnrepro run                          # emulator, the kernel as shipped: 7 BugRepro tests fail
    lnrepro run --defect none            # the fixed kernel: all pass
    lnrepro run -n 20 --filter '*NIGHTLY*:*TightTolerance*'   # pass rates with 95% intervals
    lnrepro run --tt-metal ~/tt-metal    # build in the container, run the tests there
    lnrepro run --tt-metal ~/tt-metal --runner local --dry-run
    """
    import json

    from lnrepro.errors import OutcomeError
    from lnrepro.model.record import Verdict
    from lnrepro.run.backends.factory import make_backend
    from lnrepro.run.pipeline import DEFAULT_FILTER, run_tests
    from lnrepro.run.pipeline import list_tests as list_backend_tests

    _exclusive(json=as_json, markdown=markdown)
    _exclusive(list=list_tests, dry_run=dry_run)
    rules = metric_rules(metric_patterns)  # a bad pattern is a usage error before anything runs
    if gtest_filter is not None and not gtest_filter.strip():
        raise UsageError("--filter is empty", "give a gtest pattern, or leave --filter out")
    chosen = make_backend(backend_opts)
    for w in chosen.describe().get("warnings") or []:
        click.echo(f"lnrepro: warning: {w}", err=True)
    flt = gtest_filter or DEFAULT_FILTER
    if dry_run:
        plan = _plan(chosen, flt, record_dir)
        click.echo(json.dumps(plan, indent=2) if as_json else _plan_text(plan), nl=not as_json)
        return ExitCode.OK
    if list_tests:
        click.echo(list_backend_tests(chosen, record_dir, gtest_filter or "*"), nl=False)
        return ExitCode.OK
    from lnrepro.present.console import RichRunEvents, make_console, render_run

    err = make_console(stderr=True)
    try:
        with RichRunEvents(err) as events:
            record = run_tests(
                chosen,
                gtest_filter=flt,
                repeat=repeat,
                timeout_s=timeout_s,
                record_base=record_dir,
                rules=rules,
                events=events,
            )
    except OutcomeError as exc:
        if bisect_exit_code:  # git bisect run: 125 = cannot test this commit
            click.echo(f"lnrepro: skip: {exc.one_line()}", err=True)
            return 125
        raise
    doc = record.to_json()
    if as_json:
        click.echo(json.dumps(doc, indent=2))
    elif markdown:
        click.echo(_report_text(_bases(record_dir), {**doc, "kind": "run"}, "md"), nl=False)
    else:
        render_run(doc, make_console())
    if bisect_exit_code:
        v = record.verdict
        return 0 if v is Verdict.PASS else 125 if not v.about_the_kernel else 1
    if record.verdict is Verdict.ENV_ERROR:
        return ExitCode.ENVIRONMENT
    return ExitCode.OK if record.ok else ExitCode.FAILED


def _plan(backend: Any, gtest_filter: str, record_dir: Path) -> dict[str, Any]:
    """What ``run`` would do, as data: nothing is started, nothing written."""
    where = (record_dir / "run-<id>").absolute()
    return {
        "backend": backend.describe(),
        "filter": gtest_filter,
        **backend.plan(gtest_filter, where),
    }


def _plan_text(plan: dict[str, Any]) -> str:
    lines = [f"# backend: {plan['backend'].get('backend')}", "# build:"]
    lines += [f"  {c}" for c in plan["build"]] or ["  (nothing to build)"]
    lines += ["# each attempt:", f"  {plan['test']}"]
    return "\n".join(lines)


@cli.command(short_help="Find the commit that introduced (or fixed) the bug.")
@click.option(
    "--good",
    "goods",
    multiple=True,
    metavar="REV",
    help="A commit where the tests pass. Repeatable.",
)
@click.option("--bad", metavar="REV", help="A commit where the tests fail.")
@click.option(
    "--repo",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path(),
    show_default=True,
    help="The repository (its checkout is never touched: lnrepro works in its own worktree).",
)
@click.option(
    "--command",
    "command",
    metavar="CMD",
    help="Decide each commit by running CMD at the worktree's root, as `git bisect run` does: "
    "exit 0 good, 125 skip, 1-127 bad. Without it: build and run the gtests (the run options).",
)
@backend_options
@run_options
@click.option(
    "--metric", metavar="NAME", help="Judge by a metric instead of pass/fail, e.g. max_diff."
)
@click.option("--threshold", type=float, help="With --metric: bad when the worst value exceeds it.")
@click.option(
    "--on-crash",
    type=click.Choice(["match", "bad", "skip"]),
    default="match",
    show_default=True,
    help="A crashed test (or a command killed by a signal): bad only when the buggy endpoint "
    "crashed too (match), always bad, or never (skip, as noise).",
)
@click.option(
    "--on-hang",
    type=click.Choice(["bad", "skip"]),
    default="skip",
    show_default=True,
    help="A hung test (or a command past --timeout) counts as this.",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 0.9999),
    help="Bisect a flaky bug: a Bayesian search that re-runs and learns the fail rates, stopping "
    "when one commit is the culprit with this probability (e.g. 0.95).",
)
@click.option(
    "--fail-rates",
    metavar="BAD,GOOD",
    help="With --confidence: the fail rates of buggy and clean commits when known (e.g. 0.7,0.05); "
    "default: learned from the runs.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Test this many commits at once, each in its own worktree and container.",
)
@click.option(
    "--docker-context",
    "contexts",
    multiple=True,
    metavar="NAME",
    help="With --jobs: run job i on Docker context i (round robin), e.g. one per card host.",
)
@click.option(
    "--device",
    "devices",
    multiple=True,
    metavar="N",
    help="With --jobs: bind job i to /dev/tenstorrent/N (one --device per job). "
    "[default: one host device per job when there are enough]",
)
@click.option(
    "--pick",
    "picks",
    multiple=True,
    metavar="COMMIT",
    help="Cherry-pick onto every tested commit (e.g. the BugRepro tests' 16165972af). Repeatable.",
)
@click.option(
    "--patch",
    "patches",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Apply onto every tested commit. Repeatable.",
)
@click.option(
    "--find-fix",
    is_flag=True,
    help="Find the commit that fixed the bug: --bad is older, --good newer.",
)
@click.option(
    "--first-parent", is_flag=True, help="Follow only first parents (merges as units), as git does."
)
@click.option(
    "--no-confirm",
    is_flag=True,
    help="Do not test the endpoints first or re-test the culprit after.",
)
@click.option(
    "--resume", is_flag=True, help="Continue the bisect whose state is in the repository."
)
@click.option("--log", "show_log", is_flag=True, help="Show the steps of the last bisect and exit.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result (first_bad, last_good, steps) as JSON.",
)
@click.argument("paths", nargs=-1, metavar="[-- PATHS]")
def bisect(
    goods: tuple[str, ...],
    bad: str | None,
    repo: Path,
    command: str | None,
    backend_opts: Any,
    gtest_filter: str | None,
    repeat: int,
    timeout_s: float,
    metric: str | None,
    threshold: float | None,
    on_crash: str,
    on_hang: str,
    confidence: float | None,
    fail_rates: str | None,
    jobs: int,
    contexts: tuple[str, ...],
    devices: tuple[str, ...],
    picks: tuple[str, ...],
    patches: tuple[Path, ...],
    find_fix: bool,
    first_parent: bool,
    no_confirm: bool,
    resume: bool,
    show_log: bool,
    record_dir: Path,
    as_json: bool,
    paths: tuple[str, ...],
) -> int:
    """Find the commit that introduced (or, with --find-fix, fixed) the bug.

    Works in a worktree of its own (your checkout, branch and uncommitted work are never
    touched), picks the BugRepro tests onto old commits, skips commits that do not build or
    cannot be tested, writes its state after every step (--resume continues after a crash or
    Ctrl-C), and names the first bad commit with the evidence.

    \b
    lnrepro bisect --good v0.60.0 --bad main --pick 16165972af --tt-metal . --runner local
    lnrepro bisect --good GOOD --bad BAD --command 'sh check.sh'      # like git bisect run
    lnrepro bisect --resume        # after Ctrl-C, kill -9, a reboot
    lnrepro bisect --log           # the steps so far
    """
    import json
    import shlex

    from lnrepro.bisect import session
    from lnrepro.bisect.evidence import Policy
    from lnrepro.bisect.oracle import CommandOracle, Oracle, RunOracle
    from lnrepro.run.pipeline import DEFAULT_FILTER

    repo = repo.resolve()
    if show_log:
        doc = session.load_state(repo)
        if as_json:
            click.echo(json.dumps(doc, indent=2))
        else:
            from lnrepro.present.console import make_console, render_bisect

            render_bisect(doc.get("result"), doc["steps"], make_console())
        return ExitCode.OK
    if metric is not None and threshold is None:
        raise UsageError("--metric needs --threshold", "e.g. --metric max_diff --threshold 1.0")
    rates = _fail_rates(fail_rates, confidence)
    if confidence is not None and click.get_current_context().get_parameter_source(
        "repeat"
    ) not in (None, click.core.ParameterSource.DEFAULT):
        raise UsageError(
            "--repeat and --confidence are two ways to handle flakiness",
            "use one: --confidence decides how often to re-run each commit",
        )

    def make_oracles(desc: dict[str, Any] | None, plan: session.Plan) -> list[Oracle]:
        cmd = desc.get("command") if desc else command
        if cmd:
            if not shlex.split(cmd):
                raise UsageError("--command is empty", "give the command to run at each commit")
            return [CommandOracle(tuple(shlex.split(cmd)), timeout_s, repeat)] * plan.jobs
        return [
            RunOracle(
                opts,
                gtest_filter or DEFAULT_FILTER,
                repeat,
                timeout_s,
                record_dir.resolve(),
                plan.policy.metric,
            )
            for opts in _job_backends(backend_opts, plan.jobs, contexts, devices)
        ]

    if click.get_current_context().get_parameter_source("record_dir") in (
        None,
        click.core.ParameterSource.DEFAULT,
    ):  # keep the checkout clean: the bisect's records go beside its state, inside .git
        record_dir = session.state_dir(repo) / "runs"
    with session.lock(repo):
        if resume:
            b = session.resume(repo, make_oracles)
        else:
            if not goods or not bad:
                raise UsageError("bisect needs --good and --bad", "pass both (or --resume)")
            policy = Policy(on_crash, on_hang, metric, threshold)
            plan = session.Plan(repo, list(goods), bad, find_fix, first_parent, tuple(paths),
                                list(picks), [str(p.resolve()) for p in patches], not no_confirm,
                                confidence, rates, jobs, policy, str(record_dir.resolve()))  # fmt: skip
            b = session.build(plan, make_oracles(None, plan))
            b.start_record()
            b.save()
        from lnrepro.present.console import RichBisectEvents, make_console, render_bisect

        with RichBisectEvents(make_console(stderr=True)) as events:
            result = b.run(events)
    if as_json:
        rid = b.record_path.parent.name if b.record_path else None
        click.echo(json.dumps({"id": rid, **result, "steps_taken": b.steps}, indent=2))
    else:
        render_bisect(result, b.steps, make_console())
    return ExitCode.OK if result.get("first_bad") else ExitCode.FAILED


# ---------------------------------------------------------------------------------- records
_RECORD_DIR = click.option(
    "--record-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path(".lnrepro/runs"),
    show_default=True,
    help="Where run and bisect write their records.",
)


def _bases(record_dir: Path) -> list[Path]:
    from lnrepro.doors.store import bases_for

    ctx = click.get_current_context()
    given = ctx.get_parameter_source("record_dir") not in (None, click.core.ParameterSource.DEFAULT)
    return bases_for(record_dir, given)


@cli.command(short_help="List saved runs and bisects.")
@_RECORD_DIR
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def runs(record_dir: Path, as_json: bool) -> int:
    """List the runs and bisects saved under --record-dir, oldest first: id, when, backend or
    repository, commit, state, and a headline ("7 FAIL, 1 PASS"; "first bad commit abc123").

    A record that cannot be read (a run cut off while writing) is listed as unreadable with the
    reason; an interrupted one with its state.
    """
    import json

    from lnrepro.doors.store import scan

    entries = scan(_bases(record_dir))
    if as_json:
        click.echo(json.dumps([e.to_json() for e in entries], indent=2))
        return ExitCode.OK
    from lnrepro.present.console import make_console, render_records

    for e in entries:
        if e.state == "unreadable":
            click.echo(f"lnrepro: warning: {e.id}: {e.problem}", err=True)
    if not entries:
        click.echo(f"no records under {record_dir}", err=True)
        return ExitCode.OK
    render_records(entries, make_console())
    return ExitCode.OK


@cli.command(short_help="Show one saved run or bisect.")
@click.argument("ref", metavar="ID", default="last")
@_RECORD_DIR
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
def show(ref: str, record_dir: Path, as_json: bool) -> int:
    """Show a saved record: ID from `lnrepro runs`, a unique prefix of one, `last`, or a path."""
    import json

    from lnrepro.doors.store import load

    doc = load(_bases(record_dir), ref)
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return ExitCode.OK
    from lnrepro.present.console import make_console, render_bisect, render_run

    if doc["kind"] == "bisect":
        render_bisect(doc.get("result"), doc.get("steps") or [], make_console())
    else:
        render_run(doc, make_console())
    return ExitCode.OK


@cli.command(short_help="Compare two runs test by test.")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@_RECORD_DIR
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--markdown", is_flag=True, help="Print the comparison as a Markdown table.")
def compare(a: str, b: str, record_dir: Path, as_json: bool, markdown: bool) -> int:
    """Per test, A against B: verdict, pass rate and worst max_diff, and what changed (before
    and after a fix, host against container, two commits, the emulator against hardware)."""
    import json

    from lnrepro.doors.store import load
    from lnrepro.present.report import compare as compare_rows
    from lnrepro.present.report import compare_markdown

    _exclusive(json=as_json, markdown=markdown)
    bases = _bases(record_dir)
    da, db = load(bases, a), load(bases, b)
    for ref, d in ((a, da), (b, db)):
        if d["kind"] != "run":
            raise UsageError(f"{ref} is a {d['kind']} record", "compare takes two runs")
    rows = compare_rows(da, db)
    if as_json:
        click.echo(json.dumps({"a": da["id"], "b": db["id"], "tests": rows}, indent=2))
    elif markdown:
        click.echo(compare_markdown(da, db), nl=False)
    else:
        from lnrepro.present.console import make_console, render_compare

        render_compare(rows, da, db, make_console())
    return ExitCode.OK


@cli.command(short_help="Write a bug report (Markdown), JUnit XML or JSON from a record.")
@click.argument("ref", metavar="ID", default="last")
@_RECORD_DIR
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "junit"]),
    default="md",
    show_default=True,
    help="md: a GitHub issue body in tt-metal's bug template; junit: JUnit XML for CI; json: the record.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write here (atomically) instead of standard output.",
)
@click.option(
    "--bisect",
    "bisect_ref",
    metavar="ID",
    help="md of a run: the bisect for its regression details.",
)
def report(
    ref: str, record_dir: Path, fmt: str, output: Path | None, bisect_ref: str | None
) -> int:
    """A report from a saved run or bisect.

    \b
    lnrepro report last > issue.md          # paste into a GitHub issue
    lnrepro report run-20261122-101500 --format junit -o results.xml
    lnrepro report bisect-20261122-110000   # first bad commit, evidence, posterior
    """
    from lnrepro.doors.store import load

    bases = _bases(record_dir)
    doc = load(bases, ref)
    extra = load(bases, bisect_ref) if bisect_ref else None
    if extra is not None and extra["kind"] != "bisect":
        raise UsageError(f"--bisect {bisect_ref} is a run record", "pass a bisect-* id")
    text = _report_text(bases, doc, fmt, extra)
    if output is None:
        click.echo(text, nl=False)
    else:
        _write(output, text)
    return ExitCode.OK


def _report_text(
    bases: list[Path], doc: dict[str, Any], fmt: str, bisect_doc: dict[str, Any] | None = None
) -> str:
    import json

    from lnrepro.doors import store
    from lnrepro.present import report

    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    if fmt == "junit":
        return report.junit(doc)
    if doc["kind"] == "bisect":
        return report.bisect_markdown(doc, next(iter(store.runs_of_bisect(doc)), None))
    related = bisect_doc if bisect_doc is not None else store.related_bisect(bases, doc)
    return report.run_markdown(doc, store.logs_of(doc), related)


@cli.command(short_help="Rank the kernel models by how well they reproduce a run or a log.")
@click.argument("ref", metavar="RUN|LOG")
@_RECORD_DIR
@click.option(
    "--top", type=click.IntRange(min=1), default=8, show_default=True, help="Models to show."
)
@click.option("--json", "as_json", is_flag=True, help="Print every model's fit as JSON.")
def explain(ref: str, record_dir: Path, top: int, as_json: bool) -> int:
    """Which mechanism explains what a card showed? Every candidate model (defect set x kernel
    era x arch) runs the observed tests on the emulator with the tests' own data and is scored
    per test: a different verdict costs 1, each printed metric its relative residual (capped at
    1). RUN is a saved record (id, `last`, path); LOG a gtest console log from anywhere.

    \b
    lnrepro explain seed-run.log        # a log copied from a bug report or a card
    lnrepro explain last --json
    """
    import json

    from lnrepro.errors import InputError as _InputError
    from lnrepro.studies import explain as ex

    path = Path(ref)
    if (
        path.is_file()
        and path.name not in ("record.json", "bisect.json")
        and not ref.endswith(".json")
    ):
        from lnrepro.gtest.files import parse_log_file

        observed = ex.observed_from_run(parse_log_file(path))
        source = str(path)
    else:
        from lnrepro.doors.store import load

        doc = load(_bases(record_dir), ref)
        if doc["kind"] != "run":
            raise UsageError(f"{ref} is a {doc['kind']} record", "explain takes a run or a log")
        observed = ex.observed_from_record(doc)
        source = str(doc["id"])
    if not observed:
        raise _InputError(
            f"no passed or failed test in {source}", "pass a log or run that ran the tests"
        )
    eras, arches = ("2025-12", "2025-11", "fixed"), ("wormhole_b0", "blackhole")
    from lnrepro.present.console import make_console, render_explain

    err = make_console(stderr=True)
    total = ex.n_models(eras, arches)
    with err.status(f"explain: {total} models on {len(observed)} test(s)") as status:
        fits, meta = ex.explain(
            observed, eras=eras, arches=arches,
            on_model=lambda n: status.update(f"explain: model {n}/{total}"),
        )  # fmt: skip
    if as_json:
        click.echo(
            json.dumps({"source": source, **meta, "models": [f.to_json() for f in fits]}, indent=2)
        )
    else:
        render_explain(source, fits[:top], meta, make_console())
    return ExitCode.OK


@cli.command(short_help="Which tolerance (and which data) tells the correct kernel from the bug.")
@click.option(
    "--test",
    "tests",
    multiple=True,
    metavar="NAME",
    help="A test (gtest pattern). Repeatable. [default: the BugRepro and NIGHTLY tests]",
)
@click.option(
    "--shape",
    metavar="B,S,H,F",
    help="Study a shape instead: bands per tensor and rtol, every data kind.",
)
@click.option(
    "--defect",
    "defects",
    multiple=True,
    metavar="MODEL",
    help="With --shape: defect models to compare (double-subtract, drop-xhat-blocks, shipped, 'overwrite (refuted)'). [default: all]",
)
@click.option(
    "--trials",
    type=click.IntRange(min=2),
    default=200,
    show_default=True,
    help="Data draws per kind.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(1e-12, 0.5),
    default=1e-6,
    show_default=True,
    help="The correct kernel may fail a band with this probability.",
)
@click.option(
    "--kernel-era",
    type=click.Choice(["2025-11", "2025-12"]),
    default="2025-12",
    show_default=True,
    help="Which factory's paths and blocks.",
)
@click.option(
    "--plot",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write an SVG of the error distributions against the tolerances.",
)
@click.option(
    "--reference-variants",
    is_flag=True,
    help="With --shape: also how far the statistics' algorithms (Welford, two-pass, pairwise, sequential, one-pass, bf16-stored) move the reference.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def tolerance(
    tests: tuple[str, ...], shape: str | None, defects: tuple[str, ...], trials: int, alpha: float,
    kernel_era: str, plot: Path | None, reference_variants: bool, as_json: bool,
) -> int:  # fmt: skip
    """Measure what a tolerance does: the correct kernel's error distribution (quantiles and a
    Gumbel tail out to 1 - alpha), each defect's, the band (rtol, atol) the correct kernel passes
    with probability 1 - alpha, each defect's power against it, and which data kind separates
    them best. Without --shape: the verdict of each test's own tolerance, and the band that does
    both jobs.

    \b
    lnrepro tolerance                          # the seeds' tests (1000 draws: --trials 1000)
    lnrepro tolerance --shape 3,273,1,8462 --plot nightly.svg
    """
    import fnmatch
    import json

    from lnrepro.emulator.catalogue import CASES
    from lnrepro.emulator.kernel import Era
    from lnrepro.present.console import make_console, render_tolerance_bands, render_tolerance_tests
    from lnrepro.studies import tolerance as tl

    era = Era(kernel_era)
    err = make_console(stderr=True)
    if shape is not None:
        try:
            b, sq, h, f = (int(v) for v in shape.split(","))
            if min(b, sq, h, f) < 1:
                raise ValueError
        except ValueError:
            raise UsageError(
                f"--shape {shape!r} is not B,S,H,F", "e.g. --shape 3,273,1,8462"
            ) from None
        models = defects or tuple(tl.MODELS)
        for m in models:
            if m not in tl.MODELS:
                raise UsageError(f"unknown model {m!r}", f"choose from {', '.join(tl.MODELS)}")
        with err.status("tolerance: sampling") as status:
            study = tl.shape_study(b * sq * h, f, trials=trials, models=models, era=era, alpha=alpha,
                                   reference_variants=reference_variants,
                                   progress=lambda d, n: status.update(f"tolerance: draw {d}/{n}"))  # fmt: skip
        if plot is not None:
            _write(plot, study.svg(f"dx errors, shape {shape}, {trials} draws"))
        if as_json:
            click.echo(json.dumps({"shape": shape, **study.to_json()}, indent=2))
        else:
            render_tolerance_bands(shape, study, make_console())
        return ExitCode.OK
    names = [c.full_name for c in CASES if not tests and c.full_name in _default_tests()] or [
        c.full_name for c in CASES if any(fnmatch.fnmatchcase(c.full_name, p) or fnmatch.fnmatchcase(c.name, p) for p in tests)
    ]  # fmt: skip
    if not names:
        raise UsageError(f"no modelled test matches {', '.join(tests)}", "see `lnrepro run --list`")
    with err.status("tolerance: sampling") as status:
        rows = tl.seeds_table(names, trials=trials, alpha=alpha, era=era,
                              progress=lambda nm, d, n: status.update(f"tolerance: {nm.split('.')[-1]} draw {d}/{n}"))  # fmt: skip
    if as_json:
        click.echo(
            json.dumps(
                {"trials": trials, "alpha": alpha, "tests": [r.to_json() for r in rows]}, indent=2
            )
        )
    else:
        render_tolerance_tests(rows, alpha, make_console())
    return ExitCode.OK


def _default_tests() -> set[str]:
    import fnmatch

    from lnrepro.emulator.catalogue import CASES
    from lnrepro.run.pipeline import DEFAULT_FILTER

    pats = DEFAULT_FILTER.split(":")
    return {c.full_name for c in CASES if any(fnmatch.fnmatchcase(c.full_name, p) for p in pats)}


def _write(path: Path, text: str) -> None:
    from lnrepro.doors.fsio import atomic_write_text, write_error

    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise write_error(path, exc) from None
    click.echo(f"lnrepro: wrote {path}", err=True)


def _fail_rates(text: str | None, confidence: float | None) -> tuple[float, float] | None:
    if text is None:
        return None
    if confidence is None:
        raise UsageError("--fail-rates only applies with --confidence", "add --confidence 0.95")
    try:
        bad_rate, good_rate = (float(x) for x in text.split(","))
    except ValueError:
        raise UsageError(
            f"--fail-rates {text!r} is not BAD,GOOD", "e.g. --fail-rates 0.7,0.05"
        ) from None
    if not 0 <= good_rate < bad_rate <= 1:
        raise UsageError(
            f"--fail-rates {text}: need 0 <= GOOD < BAD <= 1",
            "the buggy commits' rate first, e.g. 0.7,0.05",
        )
    return bad_rate, good_rate


def _job_backends(
    opts: Any, jobs: int, contexts: tuple[str, ...], devices: tuple[str, ...]
) -> list[Any]:
    """One set of backend options per job: its own Docker engine and its own device."""
    from dataclasses import replace

    from lnrepro.doors.container import context_host

    if (contexts or devices) and opts.runner != "docker":
        raise UsageError("--docker-context and --device need --runner docker", "drop them")
    hosts = [context_host(c) for c in contexts]
    if devices and len(devices) < jobs:
        raise UsageError(f"--jobs {jobs} needs {jobs} --device options, got {len(devices)}",
                         "give one device per job, or fewer --jobs")  # fmt: skip
    if not devices and not contexts and jobs > 1 and opts.runner == "docker":
        from lnrepro.run.backends.docker import host_devices

        found = host_devices()[0]
        if 0 < len(found) < jobs:
            raise UsageError(f"--jobs {jobs} needs {jobs} devices; this host has {len(found)}",
                             f"use --jobs {len(found)}, or add hosts with --docker-context")  # fmt: skip
        devices = found[:jobs] if found else ()
    return [
        replace(
            opts,
            docker_host=hosts[i % len(hosts)] if hosts else None,
            devices=(devices[i],) if devices else None,
        )
        for i in range(jobs)
    ]


def _crash_log(exc: BaseException) -> Path | None:
    try:
        fd, name = tempfile.mkstemp(prefix="lnrepro-crash-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"lnrepro {__version__}\nargv: {sys.argv!r}\n\n")
            fh.write("".join(traceback.format_exception(exc)))
        return Path(name)
    except OSError:
        return None


def _on_signal(signum: int, _frame: object) -> None:
    raise Terminated(signum)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: maps every outcome to a documented exit code, never a traceback."""
    from lnrepro.doors import proc

    proc.become_subreaper()  # nothing a test binary starts may outlive lnrepro
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    try:
        try:
            Path.cwd()
        except FileNotFoundError:
            raise EnvironmentProblem(
                "the current directory no longer exists", "cd to an existing directory"
            ) from None
        rv: Any = cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="lnrepro",
            standalone_mode=False,
        )
    except click.exceptions.Abort:
        click.echo("lnrepro: interrupted", err=True)
        return ExitCode.INTERRUPTED
    except click.UsageError as exc:  # one line, like every other error
        cmd = exc.ctx.command_path if exc.ctx is not None else "lnrepro"
        return _error(UsageError(exc.format_message(), f"see `{cmd} --help`"))
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except LnreproError as exc:
        return _error(exc)
    except KeyboardInterrupt:
        click.echo("lnrepro: interrupted", err=True)
        return ExitCode.INTERRUPTED
    except Terminated as exc:
        click.echo(f"lnrepro: terminated by {signal.Signals(exc.signum).name}", err=True)
        return 128 + exc.signum
    except BrokenPipeError:
        return ExitCode.OK
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            return _error(DiskFull("no space left writing output", "free space where it goes"))
        return _internal(exc)
    except Exception as exc:  # noqa: BLE001 - the last line of defence, with a crash log
        return _internal(exc)
    return int(rv) if isinstance(rv, int) else 0


def _error(exc: LnreproError) -> int:
    with contextlib.suppress(OSError):
        click.echo(f"lnrepro: error: {exc.one_line()}", err=True)
    return int(exc.exit_code)


def _internal(exc: BaseException) -> int:
    where = _crash_log(exc)
    click.echo(
        f"lnrepro: internal error: {type(exc).__name__}: {exc} — fix: please report it"
        + (f" with {where}" if where else ""),
        err=True,
    )
    return ExitCode.INTERNAL
