"""``lnrepro runs``, ``show``, ``compare``, ``report``: saved records, listed, shown, compared,
and written as an issue body, JUnit or JSON."""

from __future__ import annotations

from pathlib import Path

import click

from lnrepro.cli import SUMMARY, cli, echo_json, write_output
from lnrepro.cli.options import (
    PATHS,
    Command,
    exclusive,
    given,
    json_flag,
    option,
    record_dir_option,
)
from lnrepro.errors import ExitCode, UsageError
from lnrepro.model.requests import DEFAULT_RECORD_DIR

RUNS_SCHEMA = "lnrepro.runs/1"
REF_HELP = (
    "A run or bisect: its id from `lnrepro runs`, a unique prefix of one, `last`, or the path "
    "of its directory or record.json. [default: last]"
)
_RECORD_DIR = record_dir_option(
    "Where run and bisect write their records (bisects also look inside .git)."
)


def bases(record_dir: Path) -> list[Path]:
    """Where to look: --record-dir when given; else the default and the bisects' own place."""
    from lnrepro.doors.store import bases_for

    explicit = given(click.get_current_context(), "record_dir")
    what = _what_is(record_dir) if explicit else None
    if what is not None:
        raise UsageError(f"--record-dir {record_dir} {what}",
                         "pass the directory lnrepro run and bisect write their records to "
                         f"(default {DEFAULT_RECORD_DIR})")  # fmt: skip
    return bases_for(record_dir, explicit)


def _what_is(path: Path) -> str | None:
    """What is wrong with a --record-dir the user typed: missing, or not a directory. A path
    nobody may look at is left to the store, which says so (exit 5)."""
    try:
        if not path.exists():
            return None if path.is_symlink() else "does not exist"
        return None if path.is_dir() else "is a file, not a directory"
    except OSError:
        return None


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
    from lnrepro.doors.store import scan

    entries = scan(bases(record_dir))
    if as_json:
        echo_json({"schema": RUNS_SCHEMA, "records": [e.to_json() for e in entries]})
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
    from lnrepro.doors.store import load
    from lnrepro.model.record import RunRecord

    rec = load(bases(record_dir), ref)
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
@json_flag("the comparison (lnrepro.compare/2)")
@option(
    "--markdown", is_flag=True, group="Output", help="Print the comparison as a Markdown table."
)
def compare(a: str, b: str, record_dir: Path, as_json: bool, markdown: bool) -> int:
    """Per test, A against B: verdict, pass rate and worst max_diff, and what changed (before
    and after a fix, host against container, two commits, the emulator against hardware, a
    pytest run against a gtest run)."""
    from lnrepro.doors.store import load_run
    from lnrepro.model.compare import compare as compare_rows
    from lnrepro.model.compare import compare_json

    exclusive(as_json=as_json, markdown=markdown)
    where = bases(record_dir)
    ra = load_run(where, a, "compare takes two runs")
    rb = load_run(where, b, "compare takes two runs")
    if as_json:
        echo_json(compare_json(ra, rb))
    elif markdown:
        from lnrepro.present.markdown import compare_markdown

        click.echo(compare_markdown(ra, rb), nl=False)
    else:
        from lnrepro.present.console import make_console, render_compare

        render_compare(compare_rows(ra, rb), ra, rb, make_console())
    return ExitCode.OK


@cli.command(cls=Command, short_help=SUMMARY["report"])
@click.argument("ref", metavar="[ID]", default="last", help=REF_HELP)
@_RECORD_DIR
@option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "junit"]),
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
    lnrepro report bisect-20261122-110000   # first bad commit, evidence, posterior
    """
    from lnrepro.doors import store
    from lnrepro.model.bisect import BisectRecord

    where = bases(record_dir)
    rec = store.load(where, ref)
    related = store.load(where, bisect_ref) if bisect_ref else None
    if related is not None and not isinstance(related, BisectRecord):
        raise UsageError(f"--bisect {bisect_ref} is a run record", "pass a bisect-* id")
    text = report_text(where, rec, fmt, related)
    if output is None:
        click.echo(text, nl=False)
    else:
        write_output(output, text)
    return ExitCode.OK


def report_text(where: list[Path], rec: object, fmt: str, related: object = None) -> str:
    from lnrepro.doors import store
    from lnrepro.model.bisect import BisectRecord
    from lnrepro.model.jsonio import dumps
    from lnrepro.model.record import RunRecord
    from lnrepro.present import junit, markdown

    assert isinstance(rec, (RunRecord, BisectRecord))
    if fmt == "json":
        return dumps(rec.to_json()) + "\n"
    if isinstance(rec, BisectRecord):
        if fmt == "junit":
            return junit.bisect_junit(rec)
        return markdown.bisect_markdown(rec, next(iter(store.runs_of_bisect(rec)), None))
    logs = store.logs_of(rec)
    if fmt == "junit":
        return junit.run_junit(rec, logs)
    bis = related if isinstance(related, BisectRecord) else store.related_bisect(where, rec)
    return markdown.run_markdown(rec, logs, bis)


__all__ = ["DEFAULT_RECORD_DIR", "bases", "report_text"]
