"""Everything that draws for people: rich tables and Markdown. The only module importing rich."""

from __future__ import annotations

import math
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lnrepro.gtest.model import GtestRun, Metrics, TestResult, TestStatus, add_metric
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.record import Attempt
from lnrepro.present.report import inline as md_code  # one code-span builder for all Markdown

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

STATUS_STYLE = {
    TestStatus.PASSED: "green",
    TestStatus.FAILED: "bold red",
    TestStatus.SKIPPED: "yellow",
    TestStatus.DISABLED: "dim",
    TestStatus.CRASHED: "bold magenta",
    TestStatus.TIMEOUT: "bold magenta",
}


def fmt_num(value: float) -> str:
    return f"{value:.6g}"


def fmt_metrics(metrics: Metrics) -> str:
    parts = []
    for tensor, values in metrics.items():
        kv = " ".join(f"{k}={fmt_num(v)}" for k, v in values.items())
        parts.append(f"{tensor}: {kv}" if tensor else kv)
    return "; ".join(parts)


def _first_line(text: str, width: int = 80) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def why(t: TestResult) -> str:
    if t.crash is not None:
        return t.crash.reason
    if t.failures:
        f = t.failures[0]
        where = f"{f.file.rsplit('/', 1)[-1]}:{f.line}: " if f.file else ""
        more = f" (+{len(t.failures) - 1} more)" if len(t.failures) > 1 else ""
        return where + _first_line(f.message) + more
    if t.skip_message:
        return _first_line(t.skip_message)
    return ""


def esc(text: object) -> Text:
    """Text from logs, reports, paths and test names is data: a rich Text, never markup.

    (``rich.markup.escape`` is not enough: it leaves ``\\[`` alone, and the markup parser then
    eats the backslash.)
    """
    from rich.text import Text

    return Text(str(text))


def styled(*parts: str | tuple[str, str] | Text) -> Text:
    """A line of our own styled words and data: ``(text, style)`` tuples style, strings are data."""
    from rich.text import Text

    return Text.assemble(*parts)


def make_console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def render_gtest_run(run: GtestRun, console: Console) -> None:
    from rich.table import Table

    multi = len(run.iterations) > 1
    table = Table(title="googletest results", title_justify="left")
    if multi:
        table.add_column("iter", justify="right")
    table.add_column("test", overflow="fold")
    table.add_column("status")
    table.add_column("time", justify="right")
    table.add_column("metrics", overflow="fold")
    table.add_column("why", overflow="fold")
    for t in run.tests:
        name = (
            t.name
            + (f" [{t.param}]" if t.param else "")
            + (f" <{t.type_param}>" if t.type_param else "")
        )
        row: list[Text | str] = [
            esc(name),
            f"[{STATUS_STYLE[t.status]}]{t.status.value}[/]",
            "" if t.duration_ms is None else f"{t.duration_ms:.0f} ms",
            esc(fmt_metrics(t.metrics)),
            esc(why(t)),
        ]
        table.add_row(*([str(t.iteration)] if multi else []), *row)
    console.print(table)
    for it in run.iterations:
        for f in it.global_failures:
            console.print(
                styled(
                    ("failure outside any test", "red"),
                    f" (iteration {it.index}): ",
                    f"{f.file or 'unknown file'}:{f.line or '?'}: {_first_line(f.message)}",
                )
            )
        for suite, fs in it.suite_failures.items():
            console.print(
                styled(
                    ("suite set-up/tear-down failed", "red"), f": {suite} ({len(fs)} failure(s))"
                )
            )
    totals = {k: v for k, v in run.totals().items() if v}
    summary = ", ".join(f"{v} {k.lower()}" for k, v in totals.items()) or "no tests"
    console.print(f"{len(run.iterations)} iteration(s): {summary}")
    for w in run.warnings:
        console.print(styled(("warning:", "yellow"), " ", w))


def md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def gtest_run_markdown(run: GtestRun) -> str:
    lines = ["| iteration | test | status | time | metrics | why |", "|---|---|---|---|---|---|"]
    for t in run.tests:
        ms = "" if t.duration_ms is None else f"{t.duration_ms:.0f} ms"
        lines.append(
            f"| {t.iteration} | {md_escape(md_code(t.name))} | **{t.status.value}** | {ms} | "
            f"{md_escape(fmt_metrics(t.metrics))} | {md_escape(why(t))} |"
        )
    totals = ", ".join(f"{v} {k.lower()}" for k, v in run.totals().items() if v)
    lines.append("")
    lines.append(f"{len(run.iterations)} iteration(s): {totals or 'no tests'}")
    lines.extend(f"> warning: {w}" for w in run.warnings)
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ run

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


def _short(name: str) -> str:
    return name.split(".", 1)[1] if "." in name else name


def _rate(passed: int, runs: int, lo: float, hi: float) -> str:
    if runs == 0:
        return "-"
    return f"{passed}/{runs} = {100 * passed / runs:.0f}% [{100 * lo:.0f}–{100 * hi:.0f}%]"


def _worst(metrics: Metrics) -> str:
    """The diffs; for a tensor that printed none, the tolerance it exceeded."""
    keep = ("max_diff", "max_abs_diff", "mean_diff")
    parts = []
    for tensor, vals in metrics.items():
        slim = {k: v for k, v in vals.items() if k in keep}
        if slim:
            parts.append(fmt_metrics({tensor: slim}))
        elif "atol" in vals:
            parts.append(
                f"{tensor}: not within rtol={fmt_num(vals.get('rtol', 0))} atol={fmt_num(vals['atol'])}"
            )
    return "; ".join(parts)


def render_run(doc: dict[str, Any], console: Console) -> None:
    """A run record (as ``record.to_json()`` or ``lnrepro.doors.store`` gives it) as a table."""
    from rich.table import Table

    b = doc.get("backend") or {}
    title = f"{b.get('backend')}" + (f" (defect: {b['defect']})" if "defect" in b else "")
    table = Table(
        title=esc(f"lnrepro run {doc.get('id', '')} — {title}, {doc.get('repeat')} attempt(s)"),
        title_justify="left",
    )
    table.add_column("test", overflow="fold")
    table.add_column("verdict")
    table.add_column("passed [95% CI]", justify="right")
    table.add_column("worst metrics", overflow="fold")
    for t in doc.get("tests") or []:
        lo, hi = t.get("pass_rate_ci95") or (0.0, 1.0)
        v = str(t.get("verdict"))
        table.add_row(
            esc(_short(str(t.get("name", "")))),
            styled((v, VERDICT_STYLE.get(v, ""))),
            _rate(int(t.get("passed") or 0), int(t.get("runs") or 0), lo, hi),
            esc(_worst(t.get("worst_metrics") or {})),
        )
    console.print(table)
    record_dir = Path(str(doc.get("record_dir", ".")))
    build = doc.get("build")
    if build is not None:
        console.print(
            styled(
                ("build:", "bold"),
                f" {build.get('profile')} "
                + (f"ok in {build.get('seconds', 0):.0f} s" if build.get("ok") else "FAILED")
                + f" (log: {record_dir / str(build.get('log', 'build.log'))})",
            )
        )
        for line in build.get("tail") or []:
            console.print(esc(f"  {line}"))
    v = str(doc.get("verdict"))
    console.print(styled(("verdict:", "bold"), " ", (v, VERDICT_STYLE.get(v, ""))))
    if doc.get("state") not in (None, "complete"):
        console.print(
            styled(
                ("state:", "bold yellow"), f" {doc.get('state')}: {doc.get('stop_reason') or ''}"
            )
        )
    for a in doc.get("attempts") or []:
        for w in a.get("warnings") or []:
            console.print(styled((f"attempt {a.get('index')}:", "yellow"), " ", w))
    console.print(esc(f"record: {record_dir / 'record.json'}"))
    console.print(esc(f"rerun:  {shlex.join(str(x) for x in doc.get('rerun') or [])}"))


def render_records(entries: list[Any], console: Console) -> None:
    """``lnrepro runs``: one row per saved record, oldest first."""
    from rich.table import Table

    table = Table(title="lnrepro records", title_justify="left")
    for col in ("id", "when", "kind", "where", "commit", "state", "headline"):
        table.add_column(col, overflow="fold")
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.mtime)) if e.mtime else "?"
        state_style = (
            "green" if e.state == "complete" else "yellow" if e.state != "unreadable" else "red"
        )
        table.add_row(
            esc(e.id), when, e.kind, esc(e.where), esc(str(e.commit or "")[:12]),
            styled((e.state, state_style)), esc(e.headline or e.problem or ""),
        )  # fmt: skip
    console.print(table)


def render_compare(
    rows: list[dict[str, Any]], a: dict[str, Any], b: dict[str, Any], console: Console
) -> None:
    from rich.table import Table

    def commit(doc: dict[str, Any]) -> str:
        return str((doc.get("fingerprint") or {}).get("commit") or "?")[:12]

    table = Table(
        title=esc(f"A = {a.get('id')} ({commit(a)})   B = {b.get('id')} ({commit(b)})"),
        title_justify="left",
    )
    for col in ("test", "A", "B", "pass A", "pass B", "max_diff A", "max_diff B", "change"):
        table.add_column(col, overflow="fold")

    def pct(v: float | None) -> str:
        return "" if v is None else f"{100 * v:.0f}%"

    def num(v: float | None) -> str:
        return "" if v is None else fmt_num(v)

    for r in rows:
        va, vb = str(r["verdict_a"] or ""), str(r["verdict_b"] or "")
        table.add_row(
            esc(_short(r["test"])), styled((va, VERDICT_STYLE.get(va, ""))), styled((vb, VERDICT_STYLE.get(vb, ""))),
            pct(r["pass_rate_a"]), pct(r["pass_rate_b"]), num(r["max_diff_a"]), num(r["max_diff_b"]),
            esc(r["change"]),
        )  # fmt: skip
    console.print(table)


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
        self.done_tests = 0

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
            self.progress.update(self.build_task, description=f"building: {line}")

    def build_finished(self, ok: bool, seconds: float) -> None:
        if self.build_task is not None:
            self.progress.remove_task(self.build_task)
            self.build_task = None
        self.progress.console.print(
            styled(
                ("  build ", "bold"),
                ("ok" if ok else "FAILED", "green" if ok else "bold red"),
                f" in {seconds:.0f} s",
            )
        )

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None:
        self.attempt = (index, total)
        if self.task is None:
            self.task = self.progress.add_task("starting", total=total)
        self.progress.update(self.task, description=f"attempt {index}/{total}: starting")

    def test_started(self, name: str) -> None:
        i, n = self.attempt
        self.progress.update(self.task, description=f"attempt {i}/{n}: {_short(name)}")

    def test_finished(self, result: TestResult) -> None:
        style = STATUS_STYLE[result.status]
        self.progress.console.print(
            styled(
                "  ",
                (f"{result.status.value:<8}", style),
                f" {_short(result.name)}",
                f"  {fmt_metrics(result.metrics)}" if result.metrics else "",
            ),
            highlight=False,
        )

    def attempt_finished(self, attempt: Attempt) -> None:
        self.progress.advance(self.task)


# ------------------------------------------------------------------ env-check
ENV_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


def render_env(report: Any, console: Console) -> None:
    from rich.table import Table

    table = Table(title=f"lnrepro env-check ({report.mode})", title_justify="left")
    table.add_column("status")
    table.add_column("check")
    if report.container is not None:
        table.add_column("container")
    table.add_column("detail", overflow="fold")
    table.add_column("fix", overflow="fold")
    inside = {r.id: r for r in (report.container or [])}
    for r in report.results:
        s = r.status.value
        row = [f"[{ENV_STYLE[s]}]{s.upper()}[/]", r.id]
        detail, remedy = r.detail, r.remedy
        if report.container is not None:
            c = inside[r.id]
            row.append(f"[{ENV_STYLE[c.status.value]}]{c.status.value.upper()}[/]")
            if c.status != r.status and c.status.value != "skip":
                detail = f"host: {r.detail}\ncontainer: {c.detail}"
                remedy = c.remedy or r.remedy
        table.add_row(*row, esc(detail), esc(remedy))
    console.print(table)
    diffs = report.differences() if report.container is not None else []
    if report.container is not None:
        console.print(esc(f"container: {report.container_command}"))
        for h, c in diffs:
            if c.status.value == "skip":
                continue
            console.print(
                styled(
                    ("differs", "bold"),
                    f" {h.id}: host {h.status.value}, container {c.status.value} — {c.detail}"
                    + (f" — fix: {c.remedy}" if c.remedy else ""),
                )
            )
    verdict = "[bold red]not ready[/]" if report.failed else "[green]ready[/]"
    console.print(f"verdict: {verdict}")


# ------------------------------------------------------------------ bisect
MARK_STYLE = {"good": "green", "bad": "bold red", "skip": "yellow"}


def render_bisect(
    result: dict[str, Any] | None, steps: list[dict[str, Any]], console: Console
) -> None:
    from rich.table import Table

    table = Table(title="lnrepro bisect — steps", title_justify="left")
    for col in ("#", "kind", "commit", "subject", "mark", "why", "s"):
        table.add_column(col, overflow="fold")
    for i, st in enumerate(steps, 1):
        m = str(st.get("mark"))
        table.add_row(
            str(i), str(st.get("kind")), esc(str(st.get("sha", ""))[:12]), esc(st.get("subject", "")),
            styled((m, MARK_STYLE.get(m, ""))), esc(_evidence(st)), f"{st.get('seconds', 0):.1f}",
        )  # fmt: skip
    console.print(table)
    if not result:
        console.print(esc("no result yet: lnrepro bisect --resume continues"))
        return
    if result.get("search") == "bayesian":
        _render_posterior(result, console)
    if result.get("first_bad"):
        c = result["commit"]
        console.print(
            styled((f"{result['kind']}: ", "bold"), (c["sha"], "bold red"), f"  {c['subject']}")
        )
        console.print(
            esc(
                f"  author {c['author']}, {c['date']}" + (f", PR #{c['pr']}" if c.get("pr") else "")
            )
        )
        if result.get("last_good"):
            console.print(esc(f"  last good: {result['last_good']}"))
        if result.get("search") == "bayesian":
            console.print(esc(f"  confidence {result['confidence']:.4f} after {result['runs']} run(s) on "
                              f"{result['builds']} build(s) ({result['noisy_runs']} noisy run(s) set aside)"))  # fmt: skip
        else:
            console.print(esc(f"  {result['steps']} step(s) after {result['endpoint_checks']} endpoint check(s)"
                              + ("; culprit and parent re-tested: consistent" if result.get("confirmed") else "")))  # fmt: skip
    else:
        console.print(
            styled(("no single first bad commit: ", "bold yellow"), result.get("reason", ""))
        )
        for c in result.get("candidates", []):
            console.print(esc(f"  candidate {c['sha']}  {c['subject']}"))


def _render_posterior(result: dict[str, Any], console: Console) -> None:
    from rich.table import Table

    rates = result.get("rates") or {}
    table = Table(
        title=f"posterior (fail rate learned: buggy {rates.get('bad', 0):.2f}, clean {rates.get('good', 0):.2f})",
        title_justify="left",
    )
    for col in ("commit", "subject", "P(first bad)"):
        table.add_column(col, overflow="fold")
    for p in result.get("posterior", []):
        table.add_row(esc(p["sha"][:12]), esc(p.get("subject", "")), f"{p['p']:.4f}")
    console.print(table)


def _evidence(step: dict[str, Any]) -> str:
    """Why a step got its mark: the reason, and for a test run its passes and worst metrics."""
    tests = step.get("tests")
    outs = [o for o, _ in step.get("outcomes", [])]
    counts = ", ".join(f"{outs.count(k)} {k}" for k in ("fail", "pass", "noise") if outs.count(k))
    if not tests:
        return str(step.get("reason", "")) + (f" [{counts}]" if len(outs) > 1 else "")
    runs = sum(t["runs"] for t in tests.values())
    passed = sum(t["passed"] for t in tests.values())
    worst: Metrics = {}
    for t in tests.values():
        for tensor, vals in t["worst"].items():
            for k, v in vals.items():
                add_metric(worst, tensor, k, v)
    return f"{step.get('reason', '')}: {passed}/{runs} passed" + (
        f"; {_worst(worst)}" if worst else ""
    )


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

    def step_started(
        self, kind: str, info: dict[str, Any], candidates: int, steps_left: int
    ) -> None:
        self.console.print(
            esc(
                f"  {kind} {info['sha'][:12]} {info['subject'][:60]} ({candidates} left, ~{steps_left} steps)"
            )
        )

    def build_started(self, what: str) -> None:
        self.console.print(esc(f"    building ({what})"))

    def build_finished(self, ok: bool, seconds: float) -> None:
        self.console.print(esc(f"    build {'ok' if ok else 'FAILED'} in {seconds:.0f} s"))

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None:
        self.console.print(esc(f"    testing: attempt {index}/{total}"))

    def step_finished(
        self, kind: str, info: dict[str, Any], mark: str, reason: str, seconds: float
    ) -> None:
        self.console.print(
            styled(
                f"    {info['sha'][:12]} -> ",
                (mark, MARK_STYLE.get(mark, "")),
                f" ({reason}, {seconds:.1f} s)",
            )
        )


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
                esc(_short(t.name)) if first else "", t.observed if first else "", t.modelled if first else "",
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
            esc(_short(r.test) if "." in r.test else r.test), esc(" | ".join(sorted(tol))), _prob(r.correct_pass),
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
