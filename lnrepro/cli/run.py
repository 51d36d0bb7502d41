"""``lnrepro run``: build (when there is code to build), run the tests N times, report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lnrepro.cli.commands import SUMMARY, cli
from lnrepro.cli.exits import on_stop
from lnrepro.cli.output import echo_json
from lnrepro.cli.params import (
    Command,
    Params,
    backend_spec,
    exclusive,
    json_flag,
    option,
    table_options,
    test_spec,
    values_of,
)
from lnrepro.errors import ExitCode
from lnrepro.options.table import RUN_OPTS

if TYPE_CHECKING:
    from lnrepro.model.record import RunRecord
    from lnrepro.model.requests import RunRequest

BISECT_SKIP = 125  # git bisect run: this commit cannot be tested


def exit_code(rec: RunRecord, bisect_protocol: bool = False) -> int:
    """The documented exit code of a run (git bisect run's protocol with ``--bisect-exit-code``).

    ======================================  ========  ===========================
    verdict                                 normally  --bisect-exit-code
    ======================================  ========  ===========================
    PASS (every requested test ran)         0         0 good
    FAIL, FLAKY, CRASH, HANG                1         1 bad
    BUILD_FAILED, NOT_RUN, tests missing    5         125 skip (this commit)
    ENV_ERROR                               5         128 abort (nothing here can)
    ======================================  ========  ===========================
    """
    from lnrepro.model.record import Verdict

    v = rec.verdict
    if v.failing:
        return ExitCode.FAILED
    if v is Verdict.ENV_ERROR:
        return 128 if bisect_protocol else ExitCode.ENVIRONMENT
    if v in (Verdict.BUILD_FAILED, Verdict.NOT_RUN) or rec.incomplete or v is Verdict.SKIP:
        return BISECT_SKIP if bisect_protocol else ExitCode.ENVIRONMENT
    return ExitCode.OK


def _partial_record(record_dir: Path) -> Callable[[], str | None]:
    """After Ctrl-C or SIGTERM: where this run's finished attempts are (its record is written
    after every attempt), found as the run directory that was not there before it started."""
    try:
        before = {p.name for p in record_dir.iterdir()}
    except OSError:
        before = set()

    def hint() -> str | None:
        from lnrepro.doors.store import load_path

        new = sorted(p for p in record_dir.glob("run-*/record.json") if p.parent.name not in before)
        if not new:
            return None
        rec = load_path(new[-1])
        n = len(getattr(rec, "attempts", []))
        return (
            f"the {n} finished attempt(s) are kept in {new[-1]} (`lnrepro show "
            f"{new[-1].parent.name}`)"
        )

    return hint


def request_from(params: Params) -> RunRequest:
    """The run the command line asks for (its options are the table's RUN_OPTS)."""
    from lnrepro.model.requests import RunRequest

    return RunRequest(
        backend=backend_spec(params),
        tests=test_spec(params),
        **values_of(RunRequest, RUN_OPTS, params),
    )


@cli.command(cls=Command, short_help=SUMMARY["run"])
@table_options(RUN_OPTS)
@option(
    "--list",
    "list_tests",
    is_flag=True,
    group="Output",
    help="List the tests the backend has (--gtest_list_tests), then exit.",
)
@option(
    "--dry-run",
    is_flag=True,
    group="Output",
    help="Print the plan (the docker run line, build and test commands) and run nothing.",
)
@option(
    "--bisect-exit-code",
    is_flag=True,
    group="Output",
    help="Exit as `git bisect run` expects: 0 good, 1 bad, 125 skip (build failed, no test ran, "
    "requested tests missing), 128 abort (environment error, usage error, no Docker or image).",
)
@json_flag("the lnrepro.run/5 record (with its id), whatever the outcome")
@option(
    "--markdown",
    is_flag=True,
    group="Output",
    help="Print the run as a GitHub issue body (as `lnrepro report ID` does).",
)
def run(
    record_dir: Path,
    list_tests: bool,
    dry_run: bool,
    bisect_exit_code: bool,
    as_json: bool,
    markdown: bool,
    **kwargs: Any,
) -> int:
    """Run the BugRepro and NIGHTLY gtests, repeatedly with timeouts, and report.

    Builds the code under test first when there is any (--tt-metal: in lnrepro's container by
    default). Each attempt runs in its own process (or container); its console log, gtest JSON
    report and the parsed results go into a new record directory. Exits 0 when every requested
    test passed every time, 1 when any failed, crashed or hung, 5 when nothing about the kernel
    could be learned (build failed, environment error, no test matched, requested tests missing).

    \b
    lnrepro run                       # the emulator, as shipped: 7 tests fail
    lnrepro run --defect none         # no defect: 3 tests still fail (bf16)
    lnrepro run --kernel-era fixed    # after the fix (PR #53215): all pass
    lnrepro run -n 20 --filter '*NIGHTLY*:*TightTolerance*'  # pass rates
    lnrepro run --tt-metal ~/tt-metal    # build in the container, test there
    lnrepro run --tt-metal ~/tt-metal --runner local --dry-run
    """
    from lnrepro import api
    from lnrepro.model.requests import BinarySpec

    exclusive(as_json=as_json, markdown=markdown)
    exclusive(list_tests=list_tests, dry_run=dry_run)
    request = request_from({**kwargs, "record_dir": record_dir})
    if isinstance(request.backend, BinarySpec) and not bisect_exit_code:
        from lnrepro.run.validate import check_binary

        check_binary(request.backend)  # a typo, not a failed build: no record (git bisect run: 125)
    if dry_run:
        plan = api.plan(request)
        for w in plan.warnings:
            click.echo(f"lnrepro: warning: {w}", err=True)
        if as_json:
            echo_json(plan.to_json())
        else:
            lines = [f"# backend: {plan.backend.get('backend')}", "# build:"]
            lines += [f"  {c}" for c in plan.build] or ["  (nothing to build)"]
            click.echo("\n".join([*lines, "# each attempt:", f"  {plan.test}"]))
        return ExitCode.OK
    if list_tests:
        from lnrepro.present.console import make_console, render_test_list

        render_test_list(api.list_tests(request), make_console())
        return ExitCode.OK
    from lnrepro.present.console import RichRunEvents, make_console, render_run

    request = api.check(request)  # a wrong request: its one line, before any progress display
    on_stop(_partial_record(request.record_dir))
    progress = make_console(stderr=True)
    if progress.is_terminal:  # the terminal echoes Ctrl-C as "^C" where the cursor is: at the end
        progress.width = max(progress.width - 2, 20)  # of a full-width bar it wraps, and the bar,
    with RichRunEvents(progress) as events:  # erased one line too high, stayed on the screen
        rec = api.run(request, events)
    from lnrepro.model.jsonio import strings

    for w in strings(rec.backend, "warnings"):
        click.echo(f"lnrepro: warning: {w}", err=True)
    if as_json:
        echo_json(rec.to_json())
    elif markdown:
        from lnrepro.doors import store
        from lnrepro.present.markdown import run_markdown

        bases = store.bases_for(record_dir, True)
        click.echo(
            run_markdown(rec, store.logs_of(rec), store.related_bisect(bases, rec)), nl=False
        )
    else:
        console = make_console()
        render_run(rec, console)
        from lnrepro.run.pipeline import undiagnosed_hang

        hang = undiagnosed_hang(rec)
        if hang is not None:  # which test hung, and what would say where it waits
            from lnrepro.present.console import say

            say(console, f"hang: {hang}")
    code = exit_code(rec, bisect_exit_code)
    if not rec.verdict.about_the_kernel or rec.incomplete:
        said = {BISECT_SKIP: "skip: ", 128: "abort: "}.get(code, "") if bisect_exit_code else ""
        click.echo(
            f"lnrepro: {said}{rec.verdict_line}: {rec.why or '; '.join(rec.notes)}", err=True
        )
    return code
