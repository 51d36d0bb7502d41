"""Everything that draws for people on a terminal: rich tables and progress. The only module
importing rich. Data reaches rich only through :func:`lnrepro.present.escape.terminal`."""

from __future__ import annotations

import math
import shlex
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lnrepro.model.bisect import BisectRecord, CommitInfo, Step
from lnrepro.model.compare import CompareRow
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.gtest import GtestRun, Metrics, TestResult, TestStatus
from lnrepro.model.record import Attempt, RunRecord, RunState, merge_worst
from lnrepro.present.escape import terminal as esc
from lnrepro.present.escape import visible
from lnrepro.present.text import first_line, fmt_metrics, fmt_num, short, why, worst_text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
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
    "PASS": "green", "FAIL": "bold red", "FLAKY": "bold yellow", "CRASH": "bold magenta",
    "HANG": "bold magenta", "ENV_ERROR": "bold cyan", "NOT_RUN": "dim", "BUILD_FAILED": "bold cyan",
    "SKIP": "dim",
}  # fmt: skip
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


def table(title: str | Text, *columns: str, keep: Sequence[str] = ()) -> Table:
    """A table whose ``keep`` columns (ids, shas, paths) never fold: they are not to be cut."""
    from rich.table import Table

    t = Table(title=esc(title) if isinstance(title, str) else title, title_justify="left")
    for c in columns:
        if c in keep:
            t.add_column(c, no_wrap=True, overflow="ignore", min_width=4)
        else:
            t.add_column(c, overflow="fold")
    return t


# ------------------------------------------------------------------------ parse
def render_gtest_run(run: GtestRun, console: Console) -> None:
    multi = len(run.iterations) > 1
    t = table("googletest results", *(["iter"] if multi else []), "test", "status", "time",
              "metrics", "why", keep=("test",))  # fmt: skip
    for r in run.tests:
        name = (
            r.name
            + (f" [{r.param}]" if r.param else "")
            + (f" <{r.type_param}>" if r.type_param else "")
        )
        row: list[Text | str] = [
            esc(name), styled((r.status.value, STATUS_STYLE[r.status])),
            "" if r.duration_ms is None else f"{r.duration_ms:.0f} ms", esc(fmt_metrics(r.metrics)), esc(why(r)),
        ]  # fmt: skip
        t.add_row(*([str(r.iteration)] if multi else []), *row)
    console.print(t)
    for it in run.iterations:
        for f in it.global_failures:
            console.print(styled(("failure outside any test", "red"), f" (iteration {it.index}): "
                                 f"{f.file or 'unknown file'}:{f.line or '?'}: {first_line(f.message)}"))  # fmt: skip
        for suite, fs in it.suite_failures.items():
            console.print(
                styled(
                    ("suite set-up/tear-down failed", "red"), f": {suite} ({len(fs)} failure(s))"
                )
            )
    totals = {k: v for k, v in run.totals().items() if v}
    summary = ", ".join(f"{v} {k.lower()}" for k, v in totals.items()) or "no tests"
    console.print(esc(f"{len(run.iterations)} iteration(s): {summary}"))
    for w in run.warnings:
        console.print(styled(("warning:", "yellow"), " ", w))


# ------------------------------------------------------------------------ run
def _rate(passed: int, runs: int, lo: float, hi: float) -> str:
    if runs == 0:
        return "-"
    return f"{passed}/{runs} = {100 * passed / runs:.0f}% [{100 * lo:.0f}–{100 * hi:.0f}%]"


def render_run(rec: RunRecord, console: Console) -> None:
    b = rec.backend
    title = f"{b.get('backend')}" + (f" (defect: {b['defect']})" if b.get("defect") else "")
    t = table(f"lnrepro run {rec.id} — {title}, {rec.request.tests.repeat} attempt(s)", "test",
              "verdict", "passed [95% CI]", "worst metrics", keep=("test",))  # fmt: skip
    for a in rec.tests:
        lo, hi = a.interval
        v = a.verdict.value
        t.add_row(esc(a.short), styled((v, VERDICT_STYLE.get(v, ""))), _rate(a.passed, a.runs, lo, hi),
                  esc(worst_text(a.worst)))  # fmt: skip
    if rec.tests:
        console.print(t)
    build = rec.build
    if build is not None:
        console.print(styled(("build:", "bold"), f" {build.profile or ''} "
                             + (f"ok in {build.seconds:.0f} s" if build.ok else f"FAILED: {build.reason or build.first_error}")
                             + (f" (log: {rec.record_dir / build.log})" if build.log else "")))  # fmt: skip
        for line in build.tail:
            console.print(esc(f"  {line}"))
    hung = [(att.index, att.hang) for att in rec.attempts if att.hang is not None]
    for index, diagnosis in hung[:1]:  # one (each attempt's is in the record, and in explain)
        render_hang(f"attempt {index}", diagnosis, console)
    if len(hung) > 1:
        console.print(esc(f"  ({len(hung) - 1} more hung attempt(s): lnrepro explain {rec.id})"))
    first = hung[0][1] if hung else None
    if first is not None and first.hung and first.primary is not None and first.primary.kernel_name:
        console.print(esc(f"  to bisect this hang: lnrepro bisect … --on-hang bad --watcher 1 "
                          f"--hang-in {first.primary.kernel_name}"))  # fmt: skip
    v = rec.verdict.value
    if rec.incomplete and rec.verdict.about_the_kernel:
        console.print(styled(("verdict:", "bold"), " ", ("INCOMPLETE", "bold yellow"),
                             f" ({v} on the tests that ran; missing: {', '.join(rec.missing)})"))  # fmt: skip
    else:
        console.print(styled(("verdict:", "bold"), " ", (v, VERDICT_STYLE.get(v, ""))))
    if rec.why:
        console.print(styled(("why:", "bold"), f" {rec.why}"))
    for note in rec.notes:
        if note != rec.why:
            console.print(
                styled(("incomplete:" if rec.incomplete else "note:", "bold yellow"), f" {note}")
            )
    if rec.state is not RunState.COMPLETE:
        console.print(
            styled(("state:", "bold yellow"), f" {rec.state.value}: {rec.stop_reason or ''}")
        )
    for at in rec.attempts:
        for w in at.warnings:
            console.print(styled((f"attempt {at.index}:", "yellow"), " ", w))
    console.print(esc(f"record: {rec.record_dir / 'record.json'}"))
    console.print(esc(f"rerun:  {shlex.join(rec.rerun)}"))


def render_records(entries: list[Entry], console: Console) -> None:
    """``lnrepro runs``: one row per record, oldest first; piped, one plain line per record."""
    rows = []
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.mtime)) if e.mtime else "?"
        rows.append(
            (
                e.id,
                when,
                e.kind,
                e.where,
                str(e.commit or "")[:12],
                e.state,
                e.headline or e.problem or "",
            )
        )
    if not console.is_terminal:
        for r in rows:  # plain, tab-separated, one record per line (for cut, awk, grep)
            console.file.write("\t".join(visible(x).replace("\t", " ") for x in r) + "\n")
        return
    t = table("lnrepro records", "id", "when", "kind", "where", "commit", "state", "headline",
              keep=("id", "when", "commit"))  # fmt: skip
    for r in rows:
        style = "green" if r[5] == "complete" else "red" if r[5] == "unreadable" else "yellow"
        t.add_row(esc(r[0]), r[1], r[2], esc(r[3]), esc(r[4]), styled((r[5], style)), esc(r[6]))
    console.print(t)


def render_compare(rows: list[CompareRow], a: RunRecord, b: RunRecord, console: Console) -> None:
    def commit(r: RunRecord) -> str:
        return str(r.fingerprint.get("commit") or "?")[:12]

    pcc = any(r.pcc_a is not None or r.pcc_b is not None for r in rows)  # a pytest run's metric
    t = table(f"A = {a.id} ({commit(a)})   B = {b.id} ({commit(b)})", "test", "A", "B", "pass A",
              "pass B", "max_diff A", "max_diff B", *(("pcc A", "pcc B") if pcc else ()), "change",
              keep=("test",))  # fmt: skip

    def pct(v: float | None) -> str:
        return "" if v is None else f"{100 * v:.0f}%"

    def num(v: float | None) -> str:
        return "" if v is None else fmt_num(v)

    for r in rows:
        va, vb = r.verdict_a or "", r.verdict_b or ""
        t.add_row(esc(short(r.test)), styled((va, VERDICT_STYLE.get(va, ""))), styled((vb, VERDICT_STYLE.get(vb, ""))),
                  pct(r.pass_rate_a), pct(r.pass_rate_b), num(r.max_diff_a), num(r.max_diff_b),
                  *((num(r.pcc_a), num(r.pcc_b)) if pcc else ()), esc(r.change))  # fmt: skip
    console.print(t)


class RichRunEvents(Events):
    """Live progress for `lnrepro run` on stderr: one bar over attempts, the running test named."""

    def __init__(self, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=console, transient=True,
        )  # fmt: skip
        self.task: Any = None
        self.build_task: Any = None
        self.attempt = (0, 0)

    def __enter__(self) -> RichRunEvents:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
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
        self.progress.console.print(styled(("  build ", "bold"), ("ok" if ok else "FAILED", "green" if ok else "bold red"),
                                           f" in {seconds:.0f} s"))  # fmt: skip

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None:
        self.attempt = (index, total)
        if self.task is None:
            self.task = self.progress.add_task("starting", total=total)
        self.progress.update(self.task, description=f"attempt {index}/{total}: starting")

    def test_started(self, name: str) -> None:
        i, n = self.attempt
        self.progress.update(self.task, description=esc(f"attempt {i}/{n}: {short(name)}").plain)

    def test_finished(self, result: TestResult) -> None:
        self.progress.console.print(styled("  ", (f"{result.status.value:<8}", STATUS_STYLE[result.status]),
                                           f" {short(result.name)}",
                                           f"  {fmt_metrics(result.metrics)}" if result.metrics else ""))  # fmt: skip

    def attempt_finished(self, attempt: Attempt) -> None:
        self.progress.advance(self.task)


# ------------------------------------------------------------------ env-check
def render_env(report: Any, console: Console) -> None:
    container = report.container is not None
    t = table(f"lnrepro env-check ({report.mode})", "status", "check", *(["container"] if container else []),
              "detail", "fix", keep=("check",))  # fmt: skip
    inside = {r.id: r for r in (report.container or [])}
    for r in report.results:
        s = r.status.value
        row: list[Text | str] = [styled((s.upper(), ENV_STYLE[s])), r.id]
        detail, fix = r.detail, r.fix
        if container:
            c = inside[r.id]
            row.append(styled((c.status.value.upper(), ENV_STYLE[c.status.value])))
            if c.status != r.status and c.status.value != "skip":
                detail = f"host: {r.detail}\ncontainer: {c.detail}"
                fix = c.fix or r.fix
        t.add_row(*row, esc(detail), esc(fix))
    console.print(t)
    if container:
        console.print(esc(f"container: {report.container_command}"))
        for h, c in report.differences():
            if c.status.value == "skip":
                continue
            console.print(styled(("differs", "bold"), f" {h.id}: host {h.status.value}, container {c.status.value} — {c.detail}"
                                 + (f" — fix: {c.fix}" if c.fix else "")))  # fmt: skip
    console.print(
        styled("verdict: ", ("not ready", "bold red") if report.failed else ("ready", "green"))
    )


# ------------------------------------------------------------------ bisect
def render_bisect(rec: BisectRecord, console: Console) -> None:
    t = table(
        "lnrepro bisect — steps",
        "#",
        "kind",
        "commit",
        "subject",
        "mark",
        "why",
        "s",
        keep=("commit",),
    )
    for i, st in enumerate(rec.steps, 1):
        m = st.mark.value
        t.add_row(str(i), st.action.kind.value, esc(st.sha[:12]), esc(st.subject), styled((m, MARK_STYLE.get(m, ""))),
                  esc(_evidence(st)), f"{st.evidence.seconds:.1f}")  # fmt: skip
    console.print(t)
    r = rec.result
    if r is None:
        console.print(esc("no result yet: lnrepro bisect --resume continues"))
        return
    if r.search == "bayesian":
        _render_posterior(rec, console)
    if r.first_bad and r.commit:
        c = r.commit
        console.print(styled((f"{r.kind}: ", "bold"), (c.sha, "bold red"), f"  {c.subject}"))
        console.print(esc(f"  author {c.author}, {c.date}" + (f", PR #{c.pr}" if c.pr else "")))
        if r.last_good:
            console.print(esc(f"  last good: {r.last_good}"))
        if r.search == "bayesian" and r.confidence is not None:
            console.print(esc(f"  confidence {r.confidence:.4f} after {r.runs} run(s) on {r.builds} build(s) "
                              f"({r.noisy_runs} noisy run(s) set aside)"))  # fmt: skip
        else:
            console.print(esc(f"  {r.steps} step(s) after {r.endpoint_checks} endpoint check(s)"
                              + ("; culprit and parent re-tested: consistent" if r.confirmed else "")))  # fmt: skip
    else:
        console.print(
            styled(("no single first bad commit: ", "bold yellow"), r.error or r.reason or "")
        )
        for c in r.candidates:
            console.print(esc(f"  candidate {c.sha}  {c.subject}"))


def _render_posterior(rec: BisectRecord, console: Console) -> None:
    r = rec.result
    assert r is not None
    qb, qg = r.rates or (0.0, 0.0)
    t = table(f"posterior (fail rate learned: buggy {qb:.2f}, clean {qg:.2f})", "commit", "subject",
              "P(first bad)", keep=("commit",))  # fmt: skip
    for p in r.posterior:
        t.add_row(esc(p.sha[:12]), esc(p.subject), f"{p.p:.4f}")
    console.print(t)


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
        self.console.print(esc(f"bisecting: {candidates} candidate(s), about {steps_left} step(s)"))

    def note(self, text: str) -> None:
        self.console.print(esc(text))

    def step_started(self, kind: str, info: CommitInfo, candidates: int, steps_left: int) -> None:
        self.console.print(
            esc(
                f"  {kind} {info.sha[:12]} {info.subject[:60]} ({candidates} left, ~{steps_left} steps)"
            )
        )

    def build_started(self, what: str) -> None:
        self.console.print(esc(f"    building ({what})"))

    def build_finished(self, ok: bool, seconds: float) -> None:
        self.console.print(esc(f"    build {'ok' if ok else 'FAILED'} in {seconds:.0f} s"))

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None:
        self.console.print(esc(f"    testing: attempt {index}/{total}"))

    def step_finished(
        self, kind: str, info: CommitInfo, mark: str, reason: str, seconds: float
    ) -> None:
        self.console.print(
            styled(
                f"    {info.sha[:12]} -> ",
                (mark, MARK_STYLE.get(mark, "")),
                f" ({reason}, {seconds:.1f} s)",
            )
        )

    def job_lost(self, job: int, info: CommitInfo, why: str) -> None:
        self.console.print(
            styled(
                ("    job lost: ", "bold yellow"),
                f"job {job} ({why}); {info.sha[:12]} goes back to the search, the other jobs go on",
            )
        )


def render_hang(source: str, diagnosis: Any, console: Console) -> None:
    """A hang's diagnosis (:class:`lnrepro.model.hang.Diagnosis`): the headline, then its lines."""
    style = "bold red" if diagnosis.hung else "bold yellow"
    console.print(styled((f"hang ({source}):", "bold"), " ", (diagnosis.pattern.value, style)))
    for line in diagnosis.lines(pattern=False):
        console.print(esc(line))


def render_explain(source: str, fits: list[Any], meta: dict[str, Any], console: Console) -> None:
    """``lnrepro explain``: the models, best first; then the best one's residuals per test."""
    from rich.table import Table

    table = Table(
        title=esc(f"models against {source} ({meta['models']} models, {len(meta['tests'])} tests, "
                  f"{meta['seconds']:.1f} s)"),
        title_justify="left",
    )  # fmt: skip
    for col in ("#", "defects", "era", "arch", "verdicts", "cost"):
        table.add_column(col, overflow="fold")
    n = len(meta["tests"])
    for i, f in enumerate(fits, 1):
        table.add_row(
            str(i),
            esc(f.defects),
            esc(f.era),
            esc(f.arch),
            f"{f.verdicts_matched}/{n}",
            f"{f.cost:.4f}",
        )
    console.print(table)
    if not fits:
        return
    best = fits[0]
    detail = Table(title=esc(f"best: {best.label} — per test"), title_justify="left")
    for col in ("test", "observed", "model", "metric", "observed value", "model value", "residual"):
        detail.add_column(col, overflow="fold")
    for t in best.tests:
        rows = list(t.residuals.items()) or [("", (math.nan, math.nan, 0.0))]
        for j, (k, (o, m, r)) in enumerate(rows):
            first = j == 0
            detail.add_row(
                esc(short(t.name)) if first else "", t.observed if first else "", t.modelled if first else "",
                esc(k), fmt_num(o) if k else "", fmt_num(m) if k else "", f"{100 * r:.2f}%" if k else "",
            )  # fmt: skip
    console.print(detail)
    if meta.get("skipped_tests"):
        console.print(esc(f"not modelled (skipped): {', '.join(meta['skipped_tests'])}"))


def render_tolerance_tests(rows: list[Any], alpha: float, console: Console) -> None:
    """``lnrepro tolerance``: each test's own tolerance judged, and the band that does both jobs."""
    from rich.table import Table

    table = Table(
        title=f"tolerances of the tests (band: the correct kernel passes with 1 - {alpha:g})",
        title_justify="left",
    )
    for col in (
        "test",
        "tolerance (rtol, atol)",
        "correct kernel passes",
        "shipped fails",
        "band atol, rtol 0 (dx / dgamma / dbeta)",
        "shipped fails the band",
        "draws",
    ):
        table.add_column(col, overflow="fold")
    for r in rows:
        tol = {f"{v[0]:g}, {v[1]:g}" for v in r.tolerance.values()}
        table.add_row(
            esc(short(r.test) if "." in r.test else r.test), esc(" | ".join(sorted(tol))), _prob(r.correct_pass),
            _prob(r.shipped_fail), esc(" / ".join(fmt_num(r.band[t]) for t in ("dx", "dgamma", "dbeta"))),
            _prob(r.band_power), str(r.draws),
        )  # fmt: skip
    console.print(table)


def _prob(p: float) -> str:
    if p >= 1 - 1e-9:
        return "1"
    if p <= 1e-12:
        return "0"
    return f"{p:.6g}"


def render_tolerance_bands(shape: str, study: Any, console: Console) -> None:
    from rich.table import Table

    from lnrepro.studies.tolerance import quantiles

    s = study.samples
    models = [m for m in s.data if m != "correct"]
    table = Table(
        title=esc(
            f"shape {shape}, {study.trials} draws per data kind: bands on the test's own data"
        ),
        title_justify="left",
    )
    for col in (
        "tensor",
        "rtol",
        "correct: p50 / p99 / max",
        f"band atol (1 - {study.alpha:g})",
        *(f"power: {m}" for m in models),
    ):
        table.add_column(col, overflow="fold")
    for b in study.bands:
        q = quantiles(s.get("correct", "test", b.tensor, b.rtol))
        table.add_row(b.tensor, f"{b.rtol:g}", f"{fmt_num(q['p50'])} / {fmt_num(q['p99'])} / {fmt_num(q['max'])}",
                      fmt_num(b.atol), *(f"{100 * b.power[m]:.0f}%" for m in models))  # fmt: skip
    console.print(table)
    for m, (kind, ratio) in study.best.items():
        console.print(
            esc(f"{m}: separates best on {kind} data (its median dx error {ratio:.3g}x the band)")
        )
    if study.variants is not None:
        render_reference_variants(study.variants, console)


def render_reference_variants(variants: dict[str, dict[str, float]], console: Console) -> None:
    from rich.table import Table

    table = Table(
        title="the reference's own choice: statistics by other algorithms, against Welford",
        title_justify="left",
    )
    for col in (
        "statistics",
        "max |Δmean|",
        "max |Δrstd|/rstd",
        "max |Δx̂|",
        "bf16 roundings of x̂ flipped",
    ):
        table.add_column(col)
    for name, v in variants.items():
        table.add_row(
            esc(name),
            fmt_num(v["mean"]),
            fmt_num(v["rstd_rel"]),
            fmt_num(v["xhat"]),
            f"{100 * v['bf16_flips']:.4f}%",
        )
    console.print(table)
