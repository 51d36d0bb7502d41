"""What a run shows: ``parse``'s googletest results, ``run --list``, a run's record,
``runs`` (the records) and ``compare``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from lnrepro.model.bisect import BisectRecord
from lnrepro.model.compare import CompareRow, environment_changes
from lnrepro.model.gtest import GtestRun, TestResult
from lnrepro.model.metrics import share
from lnrepro.model.record import RunRecord, RunState, TestAggregate
from lnrepro.present.console.layout import (
    Col,
    Row,
    plain_line,
    say,
    say_command,
    show_rows,
    show_table,
)
from lnrepro.present.console.studies import render_hang
from lnrepro.present.console.style import STATUS_STYLE, styled, verdict_cell
from lnrepro.present.escape import terminal as esc
from lnrepro.present.escape import visible
from lnrepro.present.text import (
    attempts_text,
    describe_bisect,
    describe_run,
    first_line,
    fmt_metrics,
    fmt_num,
    fmt_pct,
    listed_tests,
    why,
    worst_text,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from lnrepro.doors.store import Entry


# ------------------------------------------------------------------------ parse
BIG = 1000  # tests beyond which `parse --all` lists them one by one (no table to measure)


def full_name(r: TestResult) -> str:
    return (
        r.name
        + (f" [{r.param}]" if r.param else "")
        + (f" <{r.type_param}>" if r.type_param else "")
    )


def render_gtest_run(run: GtestRun, console: Console, *, all_tests: bool = False) -> None:
    """``lnrepro parse``: the tests that failed, crashed or timed out (every test with
    ``all_tests``), then what failed outside tests, and the counts."""
    multi = len(run.iterations) > 1
    cols = [
        *([Col("iter")] if multi else []),
        Col("test"),
        Col("status"),
        Col("time"),
        Col("metrics", text=True),
        Col("why", text=True),
    ]
    shown = run.tests if all_tests else [t for t in run.tests if t.status.is_problem]

    def row(r: TestResult) -> list[Text | str]:
        return [
            *([str(r.iteration)] if multi else []),
            esc(full_name(r)),
            styled((r.status.value, STATUS_STYLE[r.status])),
            "" if r.duration_ms is None else f"{r.duration_ms:.0f} ms",
            esc(fmt_metrics(r.metrics)),
            esc(why(r)),
        ]

    lead = (2, 0, 1) if multi else (1, 0)  # a block starts "FAILED  Suite.Test", as pytest's
    title = "googletest results" if all_tests else "tests that failed, crashed or timed out"
    if shown and len(shown) > BIG:  # one row at a time: no table of every row in memory
        say(console, styled((title, "bold")))
        if not console.is_terminal:
            plain_line(console, [c.name for c in cols])
        show_rows(console, cols, (row(r) for r in shown), head=2 + multi, lead=lead)
    elif shown:
        show_table(console, title, cols, [row(r) for r in shown], head=2 + multi, lead=lead)
    for it in run.iterations:
        for f in it.global_failures:
            say(
                console,
                styled(
                    ("failure outside any test", "red"),
                    f" (iteration {it.index}): "
                    f"{f.file or 'unknown file'}:{f.line or '?'}: {first_line(f.message)}",
                ),
            )
        for suite, fs in it.suite_failures.items():
            say(
                console,
                styled(
                    ("suite set-up/tear-down failed", "red"), f": {suite} ({len(fs)} failure(s))"
                ),
            )
    summary = ", ".join(f"{v} {k.lower()}" for k, v in run.totals().items() if v) or "no tests"
    say(
        console,
        styled(
            ("summary:", "bold"),
            f" {len(run.tests)} test result(s) in {len(run.iterations)} iteration(s): {summary}",
        ),
    )
    hidden = len(run.tests) - len(shown)
    if hidden:
        say(console, esc(f"({hidden} passed or skipped not listed: --all lists every test)"))
    for w in run.warnings:
        say(console, styled(("warning:", "yellow"), " ", w))


# ------------------------------------------------------------------------ run
def render_test_list(listing: str, console: Console) -> None:
    """``lnrepro run --list``: each test's whole name (what ``--filter`` takes), one per line;
    a parameter's comment after it on a terminal, after a tab piped. A listing with no test in
    it (not googletest's) is shown as it came."""
    names = listed_tests(listing)
    if not names and listing.strip():
        console.file.write(visible(listing) + ("" if listing.endswith("\n") else "\n"))
    for name, comment in names:
        if console.is_terminal:
            say(console, esc(f"{name}  {comment}" if comment else name))
        else:
            plain_line(console, [name, comment] if comment else [name])
    console.file.flush()


def _rate(t: TestAggregate) -> str:
    if t.runs == 0:
        return "-"
    lo, hi = t.pass_rate_ci95
    return f"{t.passed}/{t.runs} = {100 * t.passed / t.runs:.0f}% [{100 * lo:.0f}–{100 * hi:.0f}%]"


# the line a googletest test adds to record a tensor's margin on a pass too (issue 47)
RECORD_LINE = (
    'RecordProperty("dx.used", xt::amax(xt::abs(metal_dx - dx_ref) / '
    "(atol + rtol * xt::abs(dx_ref)))());"
)


def margin_text(used: float) -> str:
    """``passes, using 23% of its tolerance`` (or fails, using 340%, or 100,000× its
    tolerance)."""
    verb = "passes" if used <= 1 else "fails"
    of = "" if abs(used) >= 10 or used != used else " of"
    return f"{verb}, using {share(used)}{of} its tolerance"


def render_margins(rec: RunRecord, console: Console) -> None:
    """Each test's margin: the share of its tolerance its worst quantity used over the runs
    (``<tensor>.used``, from googletest's RecordProperty or lnrepro's pytest plugin), with a
    table per quantity; for a test that passed with no number at all, that the verdict is all
    there is, and the one line that adds the number."""
    silent = []
    for a in rec.tests:
        used = {t: v["used"] for t, v in a.worst.items() if "used" in v}
        if not used:
            if a.runs and a.passed == a.runs and not a.worst:
                silent.append(a.name)
            continue
        worst = max(used, key=lambda t: (used[t] != used[t], used[t]))
        say(
            console, esc(f"{a.name} {margin_text(used[worst])} ({worst}, worst of {a.runs} run(s))")
        )
        rows: list[Row] = []
        for t, v in a.worst.items():
            if "used" in v:
                diff = v.get("max_diff")
                rows.append(
                    [esc(t), share(v["used"], 1), "-" if diff is None else f"{diff:.4g}",
                     *(f"{v[k]:g}" if k in v else "-" for k in ("atol", "rtol"))]
                )  # fmt: skip
        show_table(
            console,
            "",
            [Col("quantity"), Col("tolerance used"), Col("max_diff"), Col("atol"), Col("rtol")],
            rows,
        )
    for name in silent[:3]:
        if "::" in name:  # a pytest node id: lnrepro's plugin saw no comparison it reads
            text = (
                f"{name} passed and made no comparison lnrepro reads (numpy's assert_allclose "
                "or allclose, torch.testing.assert_close, pytest.approx, tt-metal's PCC "
                "helpers): the verdict is all there is"
            )
        else:
            text = (
                f"{name} passed and printed no number: the verdict is all there is. "
                f"One line in the test adds its margin: {RECORD_LINE}"
            )
        say(console, esc(text))


def render_run(rec: RunRecord, console: Console) -> None:
    b = rec.backend
    title = f"{b.get('backend')}" + (f" (defect: {b['defect']})" if b.get("defect") else "")
    cols = [Col("test"), Col("verdict"), Col("passed [95% CI]"), Col("worst error", text=True)]
    rows: list[Row] = [
        [esc(a.name), verdict_cell(a.verdict.value), _rate(a), esc(worst_text(a.worst))]
        for a in rec.tests
    ]
    if rec.tests:
        show_table(
            console,
            f"lnrepro run {rec.id} — {title}, {attempts_text(rec)}",
            cols,
            rows,
            head=2,
            lead=(1, 0),
        )
    render_margins(rec, console)
    build = rec.build
    if build is not None:
        say(
            console,
            styled(
                ("build:", "bold"),
                f" {build.profile or ''} "
                + (
                    f"ok in {build.seconds:.0f} s"
                    if build.ok
                    else f"FAILED: {build.reason or build.first_error}"
                )
                + (f" (log: {rec.record_dir / build.log})" if build.log else ""),
            ),
        )
        for line in build.tail:
            say(console, esc(line), indent=2)
    hung = [(att, att.hang) for att in rec.attempts if att.hang is not None]
    for att, diagnosis in hung[:1]:  # one (each attempt's is in the record, and in explain)
        files = [att.extra_files[k] for k in ("watcher", "triage") if k in att.extra_files]
        render_hang(", ".join([f"attempt {att.index}", *files]), diagnosis, console)
    if len(hung) > 1:
        say(console, esc(f"  ({len(hung) - 1} more hung attempt(s): lnrepro explain {rec.id})"))
    first = hung[0][1] if hung else None
    if first is not None and first.hung and first.primary is not None and first.primary.kernel_name:
        place = "" if any("triage" in a.extra_files for a in rec.attempts) else "--watcher 1 "
        say(
            console,
            esc(
                f"  to bisect this hang: lnrepro bisect … --on-hang bad {place}"
                f"--hang-in {first.primary.kernel_name}"
            ),
        )
    v = rec.verdict.value
    if rec.incomplete and rec.verdict.about_the_kernel:
        say(
            console,
            styled(
                ("verdict:", "bold"),
                " ",
                ("INCOMPLETE", "bold yellow"),
                f" ({v} on the tests that ran; missing: {', '.join(rec.missing)})",
            ),
        )
    else:
        say(console, styled(("verdict:", "bold"), " ", verdict_cell(v)))
    if rec.why:
        say(console, styled(("why:", "bold"), f" {rec.why}"))
    for note in rec.notes:
        if note != rec.why:
            say(
                console,
                styled(("incomplete:" if rec.incomplete else "note:", "bold yellow"), f" {note}"),
            )
    if rec.state is not RunState.COMPLETE:
        say(
            console,
            styled(("state:", "bold yellow"), f" {rec.state.value}: {rec.stop_reason or ''}"),
        )
    for at in rec.attempts:
        for w in at.warnings:
            say(console, styled((f"attempt {at.index}:", "yellow"), " ", w))
    say(console, esc(f"record: {rec.record_dir / 'record.json'}"))
    say_command(console, "rerun:  ", rec.rerun)


def render_records(entries: list[Entry], console: Console) -> None:
    """``lnrepro runs``: one row per record, oldest first: when, its state and headline, and
    what it was (:func:`describe_run`: backend, defect or commit, seed, attempts). Piped, one
    tab-separated line per record under a header line; every field says something."""

    rows: list[Row] = []
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.mtime)) if e.mtime else "?"
        style = "green" if e.state == "complete" else "red" if e.state == "unreadable" else "yellow"
        rec = e.record
        what = (
            describe_run(rec)
            if isinstance(rec, RunRecord)
            else f"bisect {describe_bisect(rec)}"
            if isinstance(rec, BisectRecord)
            else " ".join(
                x for x in (e.kind.value, e.where, e.commit and f"commit {e.commit[:12]}") if x
            )
        )
        rows.append(
            [
                esc(e.id),
                when,
                styled((e.state.value, style)),
                esc(e.headline or e.problem or "-"),
                esc(what),
            ]
        )
    cols = [
        Col("id"),
        Col("when"),
        Col("state"),
        Col("headline", text=True),
        Col("what", text=True),
    ]
    # a row per line, or one block per record (what it was under it): never a row of many lines
    show_table(
        console,
        "lnrepro records" if console.is_terminal else None,
        cols,
        rows,
        head=4,
        one_line=True,
    )


def render_compare(rows: list[CompareRow], a: RunRecord, b: RunRecord, console: Console) -> None:
    """``lnrepro compare``: what each run was, then per test A against B."""
    say(console, styled(("A", "bold"), " = ", (a.id, "bold"), f": {describe_run(a)}"))
    say(console, styled(("B", "bold"), " = ", (b.id, "bold"), f": {describe_run(b)}"))
    pcc = any(r.pcc_a is not None or r.pcc_b is not None for r in rows)  # a pytest run's metric
    margin = any(r.margins_a or r.margins_b for r in rows)
    cols = [
        Col("test"),
        Col("A"),
        Col("B"),
        Col("pass A"),
        Col("pass B"),
        Col("max_diff A"),
        Col("max_diff B"),
        *((Col("pcc A"), Col("pcc B")) if pcc else ()),
        *(
            (Col("tolerance used A", text=True), Col("tolerance used B", text=True))
            if margin
            else ()
        ),
        Col("change", text=True),
    ]

    def used(m: dict[str, float]) -> str:
        return " ".join(f"{q} {share(v)}" for q, v in m.items())

    out: list[Row] = [
        [
            esc(r.test),
            verdict_cell(r.verdict_a.value if r.verdict_a else ""),
            verdict_cell(r.verdict_b.value if r.verdict_b else ""),
            fmt_pct(r.pass_rate_a),
            fmt_pct(r.pass_rate_b),
            fmt_num(r.max_diff_a),
            fmt_num(r.max_diff_b),
            *((fmt_num(r.pcc_a), fmt_num(r.pcc_b)) if pcc else ()),
            *((esc(used(r.margins_a)), esc(used(r.margins_b))) if margin else ()),
            esc(r.change),
        ]
        for r in rows
    ]
    show_table(console, None, cols, out, head=1)
    changes = environment_changes(a, b)
    if changes:
        say(console, styled(("environment A → B", "bold"), ": ", esc("; ".join(changes))))
