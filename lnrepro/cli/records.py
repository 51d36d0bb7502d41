"""``lnrepro runs``, ``show``, ``compare``, ``report``: saved records, listed, shown, compared,
and written as an issue body, JUnit or JSON."""

from __future__ import annotations

from pathlib import Path

import click

from lnrepro.cli.commands import SUMMARY, cli
from lnrepro.cli.output import echo_json, write_output
from lnrepro.cli.params import (
    PATHS,
    Command,
    exclusive,
    given,
    json_flag,
    option,
    record_dir_option,
)
from lnrepro.errors import ExitCode
from lnrepro.model.kinds import ReportFormat

REF_HELP = (
    "A run or bisect: its id from `lnrepro runs`, a unique prefix of one, `last`, or the path "
    "of its directory or record.json. [default: last]"
)
_RECORD_DIR = record_dir_option(
    "Where run and bisect write their records (bisects also look inside .git)."
)


def given_dir(record_dir: Path) -> Path | None:
    """A request's ``record_dir``: --record-dir when the user gave it, else None (the default
    and the bisects' own place)."""
    return record_dir if given(click.get_current_context(), "record_dir") else None


@cli.command(cls=Command, short_help=SUMMARY["runs"])
@_RECORD_DIR
@json_flag("the list")
def runs(record_dir: Path, as_json: bool) -> int:
    """List the runs and bisects saved under --record-dir, oldest first: id, when, backend or
    repository, commit, state, and a headline ("7 FAIL, 1 PASS"; "first bad commit abc123").

    A record that cannot be read (a run cut off while writing, a damaged file) is listed as
    unreadable with the reason; the others are listed as usual. Piped, one line per record,
    tab-separated.
    """
    from lnrepro import api
    from lnrepro.model.requests import RunsRequest

    entries = api.runs(RunsRequest(record_dir=given_dir(record_dir)))
    if as_json:
        from lnrepro.model.codec import encode
        from lnrepro.model.listing import RunsDoc

        echo_json(encode(RunsDoc(records=tuple(e.document() for e in entries))))
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


@cli.command(cls=Command, short_help=SUMMARY["show"])
@click.argument("ref", metavar="[ID]", default="last", help=REF_HELP)
@_RECORD_DIR
@json_flag("the record")
def show(ref: str, record_dir: Path, as_json: bool) -> int:
    """Show a saved run or bisect (the last one when no ID is given)."""
    from lnrepro import api
    from lnrepro.model.record import RunRecord
    from lnrepro.model.requests import ShowRequest

    rec = api.show(ShowRequest(ref=ref, record_dir=given_dir(record_dir)))
    if as_json:
        echo_json(rec.to_json())
        return ExitCode.OK
    from lnrepro.present.console import make_console, render_bisect, render_run

    if isinstance(rec, RunRecord):
        render_run(rec, make_console())
    else:
        render_bisect(rec, make_console())
    return ExitCode.OK


@cli.command(cls=Command, short_help=SUMMARY["compare"])
@click.argument("a", metavar="A", help="The run before (an ID, unique prefix, `last`, or a path).")
@click.argument("b", metavar="B", help="The run after, named the same ways.")
@_RECORD_DIR
@json_flag("the comparison (lnrepro.compare/3)")
@option(
    "--markdown", is_flag=True, group="Output", help="Print the comparison as a Markdown table."
)
def compare(a: str, b: str, record_dir: Path, as_json: bool, markdown: bool) -> int:
    """Per test, A against B: verdict, pass rate and worst max_diff, and what changed (before
    and after a fix, host against container, two commits, the emulator against hardware, a
    pytest run against a gtest run)."""
    from lnrepro import api
    from lnrepro.model.requests import CompareRequest

    exclusive(as_json=as_json, markdown=markdown)
    comparison = api.compare(CompareRequest(a=a, b=b, record_dir=given_dir(record_dir)))
    ra, rb = comparison.a, comparison.b
    if ra.record_dir.absolute() == rb.record_dir.absolute():
        click.echo(
            f"lnrepro: note: both sides are one record ({ra.record_dir.name}): nothing can "
            "differ (`lnrepro runs` lists the others)",
            err=True,
        )
    if as_json:
        echo_json(comparison.to_json())
    elif markdown:
        from lnrepro.present.markdown import compare_markdown

        click.echo(compare_markdown(ra, rb), nl=False)
    else:
        from lnrepro.present.console import make_console, render_compare

        render_compare(comparison.rows, ra, rb, make_console())
    return ExitCode.OK


@cli.command(cls=Command, short_help=SUMMARY["report"])
@click.argument("ref", metavar="[ID]", default="last", help=REF_HELP)
@_RECORD_DIR
@option(
    "--format",
    "fmt",
    type=click.Choice([f.value for f in ReportFormat]),
    default="md",
    show_default=True,
    group="Output",
    help="md: a GitHub issue body in tt-metal's bug form; junit: JUnit XML for CI; json: the record.",
)
@option(
    "-o",
    "--output",
    type=PATHS,
    group="Output",
    help="Write here (atomically) instead of standard output.",
)
@option(
    "--bisect",
    "bisect_ref",
    metavar="ID",
    group="Output",
    help="md of a run: the bisect for its regression details.",
)
def report(
    ref: str, record_dir: Path, fmt: str, output: Path | None, bisect_ref: str | None
) -> int:
    """A report from a saved run or bisect.

    \b
    lnrepro report last > issue.md          # paste into a GitHub issue
    lnrepro report run-20261122-101500 --format junit -o results.xml
    lnrepro report bisect-20261122-110000  # first bad commit, evidence, posterior
    """
    from lnrepro import api
    from lnrepro.model.requests import ReportRequest

    request = ReportRequest(
        ref=ref, record_dir=given_dir(record_dir), format=ReportFormat(fmt), bisect=bisect_ref
    )
    text = api.report(request).text
    if output is None:
        click.echo(text, nl=False)
    else:
        write_output(output, text)
    return ExitCode.OK
