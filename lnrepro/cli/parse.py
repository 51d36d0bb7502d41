"""``lnrepro parse``: a gtest log (and its report) into typed results."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lnrepro.cli.commands import SUMMARY, cli
from lnrepro.cli.output import echo_json
from lnrepro.cli.params import PATHS, Command, exclusive, json_flag, option
from lnrepro.errors import ExitCode


@cli.command(cls=Command, short_help=SUMMARY["parse"])
@click.argument(
    "log", metavar="LOG|-", help="The console log of a gtest binary, or - for standard input."
)
@option("--report", type=PATHS, help="The --gtest_output JSON or XML report of the same run.")
@option(
    "--exit-code",
    type=int,
    help="The binary's exit status, to say why an unfinished test ended (139 SIGSEGV, 134 SIGABRT, 124/137 timeout).",
)
@option(
    "--metric-pattern",
    "metric_patterns",
    multiple=True,
    metavar="REGEX",
    help="Extra metric regex with named groups: (?P<tensor>...) and one per metric. Repeatable.",
)
@json_flag("the lnrepro.gtest-run/2 document instead of a table")
@option(
    "--all",
    "all_tests",
    is_flag=True,
    group="Output",
    help="List every test, not only the ones that failed, crashed or timed out.",
)
@option(
    "--markdown",
    is_flag=True,
    group="Output",
    help="Print a Markdown table to paste into an issue.",
)
def parse(
    log: str,
    report: Path | None,
    exit_code: int | None,
    metric_patterns: tuple[str, ...],
    as_json: bool,
    all_tests: bool,
    markdown: bool,
) -> int:
    """Parse what a gtest binary printed (and its report) into typed results.

    LOG is the console output (ANSI colour, logger noise and --gtest_repeat are fine), or
    - for standard input (`ttml_tests 2>&1 | lnrepro parse -`). Prints the tests that failed,
    crashed or timed out and the counts (--all: every test). Exits 0 when every test passed,
    1 when any failed, crashed or timed out.
    """
    from lnrepro import api
    from lnrepro.model.requests import ParseRequest

    exclusive(json=as_json, markdown=markdown)
    request = ParseRequest(
        log=None if log == "-" else Path(log),
        report=report,
        exit_code=exit_code,
        metric_patterns=metric_patterns,
    )
    run = api.parse(request, sys.stdin.buffer if log == "-" else None)
    if as_json:
        echo_json(run.to_json())
    elif markdown:
        from lnrepro.present.markdown import gtest_run_markdown

        click.echo(gtest_run_markdown(run), nl=False)
    else:
        from lnrepro.present.console import make_console, render_gtest_run

        render_gtest_run(run, make_console(), all_tests=all_tests)
    return ExitCode.OK if run.ok else ExitCode.FAILED
