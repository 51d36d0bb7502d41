"""Everything that draws for people on a terminal: rich tables and progress. The only module
importing rich. Data reaches rich only through :func:`lnrepro.present.escape.terminal`."""

from __future__ import annotations

import math
import re
import shlex
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lnrepro.model.bisect import BisectRecord, CommitInfo, Step
from lnrepro.model.compare import CompareRow
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.gtest import GtestRun, Metrics, TestResult, TestStatus
from lnrepro.model.record import Attempt, RunRecord, RunState, merge_worst
from lnrepro.present.escape import terminal as esc
from lnrepro.present.escape import visible
from lnrepro.present.text import (
    describe_bisect,
    describe_run,
    first_line,
    fmt_metrics,
    fmt_num,
    listed_tests,
    why,
    worst_text,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from lnrepro.doors.store import Entry

STATUS_STYLE = {
    TestStatus.PASSED: "green",
    TestStatus.FAILED: "bold red",
    TestStatus.SKIPPED: "yellow",
    TestStatus.DISABLED: "dim",
    TestStatus.CRASHED: "bold magenta",
    TestStatus.TIMEOUT: "bold magenta",
}
VERDICT_STYLE = {
    "PASS": "green",
    "FAIL": "bold red",
    "FLAKY": "bold yellow",
    "CRASH": "bold magenta",
    "HANG": "bold magenta",
    "ENV_ERROR": "bold cyan",
    "NOT_RUN": "dim",
    "BUILD_FAILED": "bold cyan",
    "SKIP": "dim",
}
MARK_STYLE = {"good": "green", "bad": "bold red", "skip": "yellow"}
ENV_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


def styled(*parts: str | tuple[str, str] | Text) -> Text:
    """A line of our own styled words and data: ``(text, style)`` tuples style, strings are data."""
    from rich.text import Text

    out = Text()
    for p in parts:
        if isinstance(p, tuple):
            out.append(visible(p[0]), style=p[1])
        elif isinstance(p, str):
            out.append(visible(p))
        else:
            out.append_text(p)
    return out


def make_console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


class Working:
    """What a long step is doing, on stderr while it works: a spinner line on a terminal
    (rich's status, gone when done); in a log (stderr piped), a plain line whenever the step's
    subject changes and at most every ``every`` seconds otherwise, so a CI log shows it alive."""

    def __init__(self, console: Console, text: str, every: float = 10.0) -> None:
        self.console, self.text, self.every = console, text, every
        self.status: Any = None
        self.said, self.subject = -math.inf, ""

    def __enter__(self) -> Working:
        if self.console.is_terminal:
            self.status = self.console.status(esc(self.text))
            self.status.__enter__()
        else:
            self._line(self.text)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(*exc)

    def update(self, text: str, subject: str = "") -> None:
        """``text`` now; ``subject`` (a test's name): a new one is always logged."""
        if self.status is not None:
            self.status.update(esc(text))
        elif subject != self.subject or time.monotonic() - self.said >= self.every:
            self._line(text)
        self.subject = subject

    def _line(self, text: str) -> None:
        self.said = time.monotonic()
        _plain_line(self.console, [text])


def working(console: Console, text: str) -> Working:
    return Working(console, text)


# ------------------------------------------------------------------ layout
# The rule (issue 37): no id, sha, path, test name, number or flag is ever cut, at any width, in
# a terminal or piped. So nothing here lets rich fold a word: lines are wrapped at spaces by
# :func:`_wrap` (a word longer than the terminal stays whole and the terminal shows it on two
# rows), table columns get widths chosen by :func:`_fit` so that every token cell fits, and a
# table that cannot fit becomes one block per row. Piped, a table is tab-separated plain text,
# one row per line, with no width limit (GitHub CLI's table printer does the same).


Row = list["str | Text"]  # a table row: our own words (str, escaped here) or styled data


@dataclass(frozen=True)
class Col:
    """A table column. ``text`` columns hold free text and wrap at spaces; the others hold
    tokens (ids, names, numbers) that are never wrapped at all."""

    name: str
    text: bool = False
    label: bool = False  # in the narrow layout, a lead cell named (``host OK``): no header there


def _as_text(value: str | Text) -> Text:
    return esc(value) if isinstance(value, str) else value


_WORD = re.compile(r"\S+\s*")


def _wrap(text: Text, first: int, rest: int, keep: int = 0) -> list[Text]:
    """``text`` wrapped at spaces: the first line ``first`` cells wide, the others ``rest``; a
    word longer than any line stays whole (never folded by us) where it stands; no break in
    the first ``keep`` characters (a status and its test's name)."""
    from rich.cells import cell_len

    plain = text.plain
    if "\n" not in plain and cell_len(plain) <= first:  # most lines: nothing to wrap
        return [text]
    out: list[Text] = []
    for para in text.split("\n", allow_blank=True):
        plain = para.plain
        indent = cell_len(plain) - cell_len(plain.lstrip(" "))  # counts toward the first line
        line_start, line_len, width = 0, indent, first if not out else rest
        words = 0  # on the current line
        for m in _WORD.finditer(plain):
            word = m.group().rstrip()
            # a word no line can hold stays where it is: the terminal folds that line anyway
            if (
                words
                and m.start() >= keep
                and line_len + cell_len(word) > width
                and cell_len(word) <= rest
            ):
                out.append(para[line_start : m.start()])
                line_start, line_len, width, words = m.start(), 0, rest, 0
            line_len += cell_len(m.group())
            words += 1
        out.append(para[line_start:])
    for line in out:
        line.rstrip()
    return out


def say(console: Console, text: str | Text, *, indent: int = 0, hang: int = 2) -> None:
    """One line of text: wrapped at spaces on a terminal (continuation lines ``hang`` further
    in), never cut inside a word; piped, one line however long."""
    for line in _said(console, text, indent, hang):
        console.print(line, soft_wrap=True)


def _said(
    console: Console,
    text: str | Text,
    indent: int = 0,
    hang: int = 2,
    width: int | None = None,
    keep: int = 0,
) -> list[Text]:
    """The lines :func:`say` prints (``width``: the terminal's, when the caller knows it)."""
    from rich.text import Text

    t = _as_text(text)
    pad = " " * indent
    if width is None and not console.is_terminal:
        return [Text(pad) + line for line in t.split("\n", allow_blank=True)]
    w = max((width or console.width) - indent, 10)
    return [
        Text(pad + (" " * hang if i else "")) + line
        for i, line in enumerate(_wrap(t, w, max(w - hang, 10), keep))
    ]


def say_command(console: Console, label: str, argv: Sequence[str] | str) -> None:
    """A command line: one line of valid shell (``shlex.join`` of ``argv``; a string is one
    already) however long. rich never wraps it (soft wrap): a terminal folds it only on screen,
    and copying it gives back the one line."""
    from rich.text import Text

    line = argv if isinstance(argv, str) else shlex.join(argv)
    console.print(Text(label) + esc(line), soft_wrap=True, crop=False)


def _words_len(cell: Text) -> int:
    from rich.cells import cell_len

    return max((cell_len(w) for w in cell.plain.split()), default=0)


def _lines_len(cell: Text) -> int:
    from rich.cells import cell_len

    return max((cell_len(ln) for ln in cell.plain.split("\n")), default=0)


def _fit(cols: Sequence[Col], cells: list[list[Text]], width: int) -> list[int] | None:
    """Column widths for a boxed table ``width`` cells wide in which no token is cut: a token
    column as wide as its widest cell, a text column at least as wide as its longest word; the
    room left goes to the widest columns first. None: no such widths (too narrow)."""
    from rich.text import Text

    lo, hi = [], []
    for j, c in enumerate(cols):
        col = [row[j] for row in cells]
        head = _words_len(Text(c.name))
        if c.text:
            lo.append(max([head, *(_words_len(x) for x in col)]))
        else:
            lo.append(max([head, *(_lines_len(x) for x in col)]))
        hi.append(max([lo[-1], len(c.name), *(_lines_len(x) for x in col)]))
    room = width - (3 * len(cols) + 1)  # a border and a space each side per column, one edge
    if sum(lo) > room:
        return None
    if sum(hi) <= room:
        return hi
    top, bottom = max(hi), 0  # the largest cap every column is cut down to, by bisection
    while top - bottom > 1:
        mid = (top + bottom) // 2
        if sum(min(h, max(lo_, mid)) for lo_, h in zip(lo, hi, strict=True)) <= room:
            bottom = mid
        else:
            top = mid
    return [min(h, max(lo_, bottom)) for lo_, h in zip(lo, hi, strict=True)]


def show_table(
    console: Console,
    title: str | Text | None,
    cols: Sequence[Col],
    rows: Sequence[Sequence[str | Text]],
    *,
    head: int = 1,
    lead: Sequence[int] = (),
    header_piped: bool = True,
    one_line: bool = False,
) -> None:
    """A table that never cuts a token: boxed when it fits the terminal, one block per row when
    it does not (the first ``head`` cells on the block's first line, in the order ``lead`` gives
    if any, then ``name: value``), tab-separated plain lines when piped (with a header line
    unless ``header_piped`` is off). ``one_line``: boxed only if every row fits on one line."""
    cells = [[_as_text(v) for v in row] for row in rows]
    if title is not None:
        say(console, styled((title, "bold")) if isinstance(title, str) else title)
    if not console.is_terminal:
        if header_piped:
            _plain_line(console, [c.name for c in cols])
        for row in cells:
            _plain_line(console, row)
        return
    keep = [j for j in range(len(cols)) if j < head or any(row[j].plain for row in cells)]
    if len(keep) < len(cols):  # a column with nothing in it takes no room on a terminal
        cols = [cols[j] for j in keep]
        cells = [[row[j] for j in keep] for row in cells]
        lead = [keep.index(i) for i in lead if i in keep]
        head = sum(1 for j in keep if j < head)
    widths = _fit(cols, cells, console.width)
    if one_line and widths is not None and widths != _fit(cols, cells, 1 << 30):
        widths = None
    if widths is None:
        _blocks(console, cols, cells, head, lead)
        return
    from rich.table import Table

    t = Table(title=None, show_edge=True)
    for c, w in zip(cols, widths, strict=True):
        t.add_column(c.name, width=w, overflow="fold")  # every word fits: fold never fires
    for row in cells:
        t.add_row(*row)
    console.print(t, crop=False)


def _plain_line(console: Console, cells: Sequence[str | Text]) -> None:
    """One tab-separated line for logs, ``cut`` and ``awk``: no style, no width limit."""
    parts = (x if isinstance(x, str) else x.plain for x in cells)
    console.file.write("\t".join(visible(p).replace("\t", " ").replace("\n", "; ") for p in parts))
    console.file.write("\n")
    console.file.flush()


def show_rows(
    console: Console,
    cols: Sequence[Col],
    rows: Iterable[Sequence[str | Text]],
    head: int,
    lead: Sequence[int] = (),
) -> None:
    """The rows of a list too long to measure or to draw (``parse --all`` of 200,000 tests),
    one line each, written as they come: tab-separated piped; on a terminal the ``head`` cells
    (in ``lead``'s order) then ``name: value``, unstyled and unwrapped (the terminal folds a
    long line, as pytest's ``-rA`` list does)."""
    order = list(lead or range(head))
    for row in rows:
        if not console.is_terminal:
            _plain_line(console, row)
            continue
        cells = [x if isinstance(x, str) else x.plain for x in row]
        parts = [cells[i] for i in order if cells[i]]
        parts += [f"{c.name}: {x}" for c, x in zip(cols[head:], cells[head:], strict=True) if x]
        console.file.write(visible("  ".join(parts).replace("\n", " / ")) + "\n")
    console.file.flush()


def _blocks(
    console: Console,
    cols: Sequence[Col],
    cells: list[list[Text]],
    head: int,
    lead: Sequence[int] = (),
) -> None:
    """The narrow layout: per row, its first ``head`` cells on one line (in ``lead``'s order if
    given), then each other cell as ``name: value``, packed onto lines, each wrapped at spaces."""
    for row in cells:
        for line in _block_lines(console, cols, row, head, lead):
            console.print(line, soft_wrap=True)


def _block_lines(
    console: Console, cols: Sequence[Col], row: list[Text], head: int, lead: Sequence[int]
) -> list[Text]:
    from rich.cells import cell_len
    from rich.text import Text

    out: list[Text] = []
    width = console.width  # asked once: rich asks the terminal each time
    room = max(width - 2, 10)
    shown = [
        (Text(f"{cols[i].name} ", style="dim") + row[i]) if cols[i].label else row[i]
        for i in (lead or range(head))
        if row[i].plain
    ]
    heads: list[Text] = []  # its first two cells (a status and its name) on one line, for grep;
    for cell in shown:  # the others after them while they fit, else on a line of their own
        if (
            len(heads) < 1
            or (len(shown) > 1 and cell is shown[1])
            or cell_len(heads[-1].plain) + 2 + cell_len(cell.plain) <= width
        ):
            heads[-1:] = [Text("  ").join([*heads[-1:], cell])]
        else:
            heads.append(cell)
    for k, h in enumerate(heads):  # the first never split; a cell no line holds wraps at spaces
        out += (
            _said(console, h, hang=4, width=width, keep=len(h.plain))
            if k == 0
            else _said(console, h, indent=4, hang=0, width=width)
        )
    line = Text()
    for c, x in zip(cols[head:], row[head:], strict=True):
        if not x.plain:
            continue
        item = Text(f"{c.name}: ", style="dim") + Text(" / ").join(x.split("\n"))
        if line.plain and cell_len(line.plain) + 3 + cell_len(item.plain) <= room:
            line += Text("   ") + item
            continue
        if line.plain:
            out += _said(console, line, indent=2, hang=4, width=width)
        line = item
    if line.plain:
        out += _said(console, line, indent=2, hang=4, width=width)
    return out


# ------------------------------------------------------------------------ parse
BIG = 1000  # tests beyond which `parse --all` lists them one by one (no table to measure)


def _full_name(r: TestResult) -> str:
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
            esc(_full_name(r)),
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
            _plain_line(console, [c.name for c in cols])
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
    totals = {k: v for k, v in run.totals().items() if v}
    summary = ", ".join(f"{v} {k.lower()}" for k, v in totals.items()) or "no tests"
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
            _plain_line(console, [name, comment] if comment else [name])
    console.file.flush()


def _rate(passed: int, runs: int, lo: float, hi: float) -> str:
    if runs == 0:
        return "-"
    return f"{passed}/{runs} = {100 * passed / runs:.0f}% [{100 * lo:.0f}–{100 * hi:.0f}%]"


def render_run(rec: RunRecord, console: Console) -> None:
    b = rec.backend
    title = f"{b.get('backend')}" + (f" (defect: {b['defect']})" if b.get("defect") else "")
    cols = [Col("test"), Col("verdict"), Col("passed [95% CI]"), Col("worst error", text=True)]
    rows: list[Row] = []
    for a in rec.tests:
        lo, hi = a.interval
        v = a.verdict.value
        rows.append(
            [
                esc(a.name),
                styled((v, VERDICT_STYLE.get(v, ""))),
                _rate(a.passed, a.runs, lo, hi),
                esc(worst_text(a.worst)),
            ]
        )
    if rec.tests:
        show_table(
            console,
            f"lnrepro run {rec.id} — {title}, {rec.request.tests.repeat} attempt(s)",
            cols,
            rows,
            head=2,
            lead=(1, 0),
        )
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
        say(console, styled(("verdict:", "bold"), " ", (v, VERDICT_STYLE.get(v, ""))))
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
    from lnrepro.model.bisect import BisectRecord

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
            else " ".join(x for x in (e.kind, e.where, e.commit and f"commit {e.commit[:12]}") if x)
        )
        rows.append(
            [
                esc(e.id),
                when,
                styled((e.state, style)),
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
    cols = [
        Col("test"),
        Col("A"),
        Col("B"),
        Col("pass A"),
        Col("pass B"),
        Col("max_diff A"),
        Col("max_diff B"),
        *((Col("pcc A"), Col("pcc B")) if pcc else ()),
        Col("change", text=True),
    ]

    def pct(v: float | None) -> str:
        return "" if v is None else f"{100 * v:.0f}%"

    def num(v: float | None) -> str:
        return "" if v is None else fmt_num(v)

    out: list[Row] = []
    for r in rows:
        va = r.verdict_a.value if r.verdict_a else ""
        vb = r.verdict_b.value if r.verdict_b else ""
        out.append(
            [
                esc(r.test),
                styled((va, VERDICT_STYLE.get(va, ""))),
                styled((vb, VERDICT_STYLE.get(vb, ""))),
                pct(r.pass_rate_a),
                pct(r.pass_rate_b),
                num(r.max_diff_a),
                num(r.max_diff_b),
                *((num(r.pcc_a), num(r.pcc_b)) if pcc else ()),
                esc(r.change),
            ]
        )
    show_table(console, None, cols, out, head=1)


class RichRunEvents(Events):
    """Live progress for `lnrepro run` on stderr, written for a CI log as much as for a person.

    A bar over the attempts (on a terminal only, transient) with the running test named whole on
    its own line under it. Lines that stay: per attempt one line with its counts; a test's line
    only when its status changes (attempt 1: the tests that did not pass; later attempts: a test
    that flips), each with its attempt as a prefix. ``run -n 50`` of a steady bug: one line per
    failing test, then one line per attempt."""

    def __init__(self, console: Console) -> None:
        from rich.console import Group
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        class _Progress(Progress):
            def get_renderables(self) -> Iterable[Any]:  # the bar, then the test on its own line
                table = self.make_tasks_table(self.tasks)
                names = [str(t.fields.get("test") or "") for t in self.tasks]
                lines = [Text("  " + visible(n), style="dim", overflow="fold") for n in names if n]
                yield Group(table, *lines) if lines else table

        # fixed-width columns first and a short description: at 60 columns nothing is cut
        self.progress = _Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self.task: Any = None
        self.build_task: Any = None
        self.attempt = (0, 0)
        self.last: dict[str, TestStatus] = {}  # each test's status in the attempt before
        self.now: dict[str, TestStatus] = {}  # in this attempt

    def __enter__(self) -> RichRunEvents:
        if self.progress.console.is_terminal:  # in a log, a bar is noise (and a blank line)
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress.console.is_terminal:
            self.progress.stop()

    def build_started(self, what: str) -> None:
        self.build_task = self.progress.add_task(f"building: {what}", total=None)

    def build_output(self, data: bytes) -> None:
        line = data.rstrip().rsplit(b"\n", 1)[-1].decode("utf-8", "replace")[:100]
        if line and self.build_task is not None:
            self.progress.update(self.build_task, description=esc(f"building: {line}").plain)

    def build_finished(self, ok: bool, seconds: float) -> None:
        if self.build_task is not None:
            self.progress.remove_task(self.build_task)
            self.build_task = None
        say(
            self.progress.console,
            styled(
                ("  build ", "bold"),
                ("ok" if ok else "FAILED", "green" if ok else "bold red"),
                f" in {seconds:.0f} s",
            ),
        )

    def _prefix(self) -> str:
        i, n = self.attempt
        return f"attempt {i}/{n}:" if n > 1 else ""

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None:
        self.attempt = (index, total)
        if self.task is None:
            self.task = self.progress.add_task("starting", total=total)
        self.progress.update(self.task, description=f"attempt {index}/{total}", test="")
        self.now = {}

    def test_started(self, name: str) -> None:
        self.progress.update(self.task, test=name)

    def test_finished(self, result: TestResult) -> None:
        name = _full_name(result)
        before = self.last.get(name)
        self.now[name] = result.status
        if result.status is before or (before is None and result.status is TestStatus.PASSED):
            return  # no change: the attempt's count line says it
        was = f"  (was {before.value})" if before is not None else ""
        metrics = f"  {fmt_metrics(result.metrics)}" if result.metrics else ""
        _status_line(
            self.progress.console,
            styled(
                *([self._prefix() + " "] if self._prefix() else []),
                (f"{result.status.value:<7}", STATUS_STYLE[result.status]),
                f" {name}{was}",
            ),
            metrics,
        )

    def attempt_finished(self, attempt: Attempt) -> None:
        self.progress.advance(self.task)
        self.progress.update(self.task, test="")
        self.last.update(self.now)
        if self.attempt[1] > 1:
            say(self.progress.console, esc(f"{self._prefix()} {attempt_counts(attempt)}"))


def _status_line(console: Console, head: Text, more: str) -> None:
    """A status and its test's name on one line whatever the width (``grep FAILED`` finds every
    name; the terminal folds a name wider than itself), then ``more`` wrapped at spaces."""
    from rich.cells import cell_len

    if not console.is_terminal or cell_len(head.plain) <= console.width:
        say(console, head + esc(more), hang=8)  # head fits: a wrap comes after it
        return
    console.print(head, soft_wrap=True)
    if more.strip():
        say(console, esc(more.strip()), indent=8)


def attempt_counts(attempt: Attempt) -> str:
    """An attempt in a few words: its tests counted by status, its time, how it ended."""
    counts: dict[str, int] = {}
    for t in attempt.tests:
        counts[t.status.value.lower()] = counts.get(t.status.value.lower(), 0) + 1
    order = ("failed", "crashed", "timeout", "passed", "skipped", "disabled")
    text = ", ".join(f"{counts[k]} {k}" for k in order if counts.get(k)) or "no test finished"
    end = " (timed out)" if attempt.timed_out else ""
    return f"{text} in {attempt.seconds:.1f} s{end}"


# ------------------------------------------------------------------ env-check
def render_env(report: Any, console: Console) -> None:
    """``lnrepro env-check``: a row per check (with ``--container``, the host's and the
    container's verdicts, each labelled, and both reasons when they differ), then each fix's
    command on a line of its own (one line of valid shell, to paste), apart from the advice."""
    container = report.container is not None
    cols = [
        Col("check"),
        Col("host", label=True) if container else Col("status"),
        *([Col("container", label=True)] if container else []),
        Col("detail", text=True),
        Col("fix", text=True),
    ]
    inside = {r.id: r for r in (report.container or [])}
    rows: list[Row] = []
    commands: list[tuple[str, str]] = []  # (where, command)
    for r in report.results:
        s = r.status.value
        row: list[Text | str] = [esc(r.id), styled((s.upper(), ENV_STYLE[s]))]
        detail, fix = r.detail, r.fix
        if r.command and r.status.value in ("fail", "warn"):
            commands.append((r.id, r.command))
        if container:
            c = inside[r.id]
            row.append(styled((c.status.value.upper(), ENV_STYLE[c.status.value])))
            if c.detail != r.detail:
                detail = f"host: {r.detail}\ncontainer: {c.detail}"
            if c.status != r.status and c.status.value != "skip":
                fix = c.fix or r.fix
                if c.command and c.command != r.command:
                    commands.append((f"{r.id} (container)", c.command))
        rows.append([*row, esc(detail), esc(fix)])
    show_table(
        console,
        f"lnrepro env-check ({report.mode})",
        cols,
        rows,
        head=2 + container,
        lead=(1, 2, 0) if container else (1, 0),
    )
    for where, command in commands:
        say_command(console, f"fix {where}: ", command)
    if container:
        say_command(console, "container: ", report.container_command)
        for h, c in report.differences():
            if c.status.value == "skip":
                continue
            say(
                console,
                styled(
                    ("differs", "bold"),
                    f" {h.id}: host {h.status.value}, container {c.status.value} — {c.detail}"
                    + (f" — fix: {c.fix}" if c.fix else ""),
                ),
            )
    say(
        console,
        styled("verdict: ", ("not ready", "bold red") if report.failed else ("ready", "green")),
    )


# ------------------------------------------------------------------ bisect
def render_bisect(rec: BisectRecord, console: Console) -> None:
    cols = [
        Col("#"),
        Col("commit"),
        Col("kind"),
        Col("mark"),
        Col("s"),
        Col("subject", text=True),
        Col("why", text=True),
    ]
    rows: list[Row] = []
    for i, st in enumerate(rec.steps, 1):
        m = st.mark.value
        rows.append(
            [
                str(i),
                esc(st.sha[:12]),
                st.action.kind.value,
                styled((m, MARK_STYLE.get(m, ""))),
                f"{st.evidence.seconds:.1f}",
                esc(st.subject),
                esc(_evidence(st)),
            ]
        )
    show_table(console, "lnrepro bisect — steps", cols, rows, head=4, lead=(0, 3, 1, 2))
    r = rec.result
    if r is None:
        say(console, esc("no result yet: lnrepro bisect --resume continues"))
    else:
        _render_result(rec, console)
    if rec.rerun:
        say_command(console, "rerun:  ", rec.rerun)


def _render_result(rec: BisectRecord, console: Console) -> None:
    r = rec.result
    assert r is not None
    if r.search == "bayesian":
        _render_posterior(rec, console)
    if r.first_bad and r.commit:
        c = r.commit
        say(console, styled((f"{r.kind}: ", "bold"), (c.sha, "bold red"), f"  {c.subject}"))
        say(console, esc(f"  author {c.author}, {c.date}" + (f", PR #{c.pr}" if c.pr else "")))
        if r.last_good:
            say(console, esc(f"  last good: {r.last_good}"))
        if r.search == "bayesian" and r.confidence is not None:
            say(
                console,
                esc(
                    f"  confidence {r.confidence:.4f} after {r.runs} run(s) on {r.builds} build(s) "
                    f"({r.noisy_runs} noisy run(s) set aside)"
                ),
            )
        else:
            say(
                console,
                esc(
                    f"  {r.steps} step(s) after {r.endpoint_checks} endpoint check(s)"
                    + ("; culprit and parent re-tested: consistent" if r.confirmed else "")
                ),
            )
    else:
        say(
            console,
            styled(("no single first bad commit: ", "bold yellow"), r.error or r.reason or ""),
        )
        for c in r.candidates:
            say(console, esc(f"  candidate {c.sha}  {c.subject}"))


def _render_posterior(rec: BisectRecord, console: Console) -> None:
    r = rec.result
    assert r is not None
    qb, qg = r.rates or (0.0, 0.0)
    rows: list[Row] = [[esc(p.sha[:12]), f"{p.p:.4f}", esc(p.subject)] for p in r.posterior]
    show_table(
        console,
        f"posterior (fail rate learned: buggy {qb:.2f}, clean {qg:.2f})",
        [Col("commit"), Col("P(first bad)"), Col("subject", text=True)],
        rows,
        head=2,
    )


def _evidence(step: Step) -> str:
    """Why a step got its mark: the reason, and for a test run its passes and worst metrics."""
    tests = step.evidence.tests
    outs = [o.value for o, _ in step.outcomes]
    counts = ", ".join(f"{outs.count(k)} {k}" for k in ("fail", "pass", "noise") if outs.count(k))
    if not tests:
        return step.reason + (f" [{counts}]" if len(outs) > 1 else "")
    runs = sum(t.runs for t in tests.values())
    passed = sum(t.passed for t in tests.values())
    worst: Metrics = {}
    for t in tests.values():
        merge_worst(worst, t.worst)
    return f"{step.reason}: {passed}/{runs} passed" + (f"; {worst_text(worst)}" if worst else "")


class RichBisectEvents(BisectEvents):
    """One line per step on stderr, with the candidates left and the steps to go."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __enter__(self) -> RichBisectEvents:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def started(self, candidates: int, steps_left: int) -> None:
        say(self.console, esc(f"bisecting: {candidates} candidate(s), about {steps_left} step(s)"))

    def note(self, text: str) -> None:
        self.console.print(esc(text))

    def step_started(self, kind: str, info: CommitInfo, candidates: int, steps_left: int) -> None:
        say(
            self.console,
            esc(
                f"  {kind} {info.sha[:12]} {info.subject} ({candidates} left, ~{steps_left} steps)"
            ),
            hang=4,
        )

    def build_started(self, what: str) -> None:
        say(self.console, esc(f"    building ({what})"), hang=4)

    def build_finished(self, ok: bool, seconds: float) -> None:
        say(self.console, esc(f"    build {'ok' if ok else 'FAILED'} in {seconds:.0f} s"))

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None:
        say(self.console, esc(f"    testing: attempt {index}/{total}"))

    def step_finished(
        self, kind: str, info: CommitInfo, mark: str, reason: str, seconds: float
    ) -> None:
        say(
            self.console,
            styled(
                f"    {info.sha[:12]} -> ",
                (mark, MARK_STYLE.get(mark, "")),
                f" ({reason}, {seconds:.1f} s)",
            ),
            hang=6,
        )

    def job_lost(self, job: int, info: CommitInfo, why: str) -> None:
        say(
            self.console,
            styled(
                ("    job lost: ", "bold yellow"),
                f"job {job} ({why}); {info.sha[:12]} goes back to the search, the other jobs go on",
            ),
            hang=6,
        )


def render_hang(source: str, diagnosis: Any, console: Console) -> None:
    """A hang's diagnosis (:class:`lnrepro.model.hang.Diagnosis`): the headline, then its lines."""
    style = "bold red" if diagnosis.hung else "bold yellow"
    say(console, styled((f"hang ({source}):", "bold"), " ", (diagnosis.pattern.value, style)))
    for line in diagnosis.lines(pattern=False):
        stripped = line.lstrip(" ")
        say(console, esc(stripped), indent=len(line) - len(stripped), hang=4)


def render_explain(source: str, fits: list[Any], meta: Any, console: Console) -> None:
    """``lnrepro explain``: the models, best first; then the best one's residuals per test."""
    n = len(meta.tests)
    rows: list[Row] = [
        [
            str(i),
            f"{f.cost:.6f}",
            f"{f.verdicts_matched}/{n}",
            esc(f.era),
            esc(f.arch),
            esc(f.defects),
        ]
        for i, f in enumerate(fits, 1)
    ]
    show_table(
        console,
        f"models against {source} ({meta.models} models, {n} tests, {meta.seconds:.1f} s)",
        [
            Col("#"),
            Col("cost"),
            Col("verdicts"),
            Col("era"),
            Col("arch"),
            Col("defects", text=True),
        ],
        rows,
        head=2,
    )
    if not fits:
        return
    best = fits[0]
    detail: list[Row] = []
    for t in best.tests:
        residuals = [(k, (r.observed, r.model, r.relative)) for k, r in t.residuals.items()]
        for k, (o, m, r) in residuals or [("", (math.nan, math.nan, 0.0))]:  # a row per metric
            detail.append(
                [
                    esc(t.test),
                    t.observed,
                    t.model,
                    esc(k),
                    fmt_num(o) if k else "",
                    fmt_num(m) if k else "",
                    f"{100 * r:.2f}%" if k else "",
                ]
            )
    show_table(
        console,
        f"best: {best.label} — per test",
        [
            Col("test"),
            Col("observed"),
            Col("model"),
            Col("metric"),
            Col("observed value"),
            Col("model value"),
            Col("residual"),
        ],
        detail,
        head=1,
    )
    if meta.skipped_tests:
        say(console, esc(f"not modelled (skipped): {', '.join(meta.skipped_tests)}"))


def render_tolerance_tests(rows: list[Any], alpha: float, console: Console) -> None:
    """``lnrepro tolerance``: each test's own tolerance judged, and the band that does both jobs."""
    out: list[Row] = []
    for r in rows:
        tol = {f"{v[0]:g}, {v[1]:g}" for v in r.tolerance.values()}
        out.append(
            [
                esc(r.test),
                esc(" | ".join(sorted(tol))),
                _prob(r.correct_pass),
                _prob(r.shipped_fail),
                esc(" / ".join(fmt_num(r.band_atol_rtol0[t]) for t in ("dx", "dgamma", "dbeta"))),
                _prob(r.band_power),
                str(r.draws),
            ]
        )
    cols = [
        Col("test"),
        Col("tolerance (rtol, atol)"),
        Col("correct kernel passes"),
        Col("shipped fails"),
        Col("band atol, rtol 0 (dx / dgamma / dbeta)"),
        Col("shipped fails the band"),
        Col("draws"),
    ]
    show_table(
        console,
        f"tolerances of the tests (band: the correct kernel passes with 1 - {alpha:g})",
        cols,
        out,
        head=1,
    )


def _prob(p: float) -> str:
    if p >= 1 - 1e-9:
        return "1"
    if p <= 1e-12:
        return "0"
    return f"{p:.6g}"


def render_tolerance_bands(shape: str, study: Any, console: Console) -> None:
    from lnrepro.studies.tolerance import quantiles

    s = study.samples
    models = [m for m in s.data if m != "correct"]
    cols = [
        Col("tensor"),
        Col("rtol"),
        Col("correct: p50 / p99 / max"),
        Col(f"band atol (1 - {study.alpha:g})"),
        *(Col(f"power: {m}") for m in models),
    ]
    rows: list[Row] = []
    for b in study.bands:
        q = quantiles(s.get("correct", "test", b.tensor, b.rtol))
        rows.append(
            [
                b.tensor,
                f"{b.rtol:g}",
                f"{fmt_num(q['p50'])} / {fmt_num(q['p99'])} / {fmt_num(q['max'])}",
                fmt_num(b.atol),
                *(f"{100 * b.power[m]:.0f}%" for m in models),
            ]
        )
    show_table(
        console,
        f"shape {shape}, {study.trials} draws per data kind: bands on the test's own data",
        cols,
        rows,
        head=2,
    )
    for m, (kind, ratio) in study.best.items():
        say(
            console,
            esc(f"{m}: separates best on {kind} data (its median dx error {ratio:.3g}x the band)"),
        )
    if study.variants is not None:
        render_reference_variants(study.variants, console)


def render_reference_variants(variants: dict[str, Any], console: Console) -> None:
    rows: list[Row] = [
        [
            esc(name),
            fmt_num(v.mean),
            fmt_num(v.rstd_rel),
            fmt_num(v.xhat),
            f"{100 * v.bf16_flips:.4f}%",
        ]
        for name, v in variants.items()
    ]
    show_table(
        console,
        "the reference's own choice: statistics by other algorithms, against Welford",
        [
            Col("statistics"),
            Col("max |Δmean|"),
            Col("max |Δrstd|/rstd"),
            Col("max |Δx̂|"),
            Col("bf16 roundings of x̂ flipped"),
        ],
        rows,
        head=1,
    )
