"""Everything that draws for people: rich tables and Markdown. The only module importing rich."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lnrepro.gtest.model import GtestRun, Metrics, TestResult, TestStatus

if TYPE_CHECKING:
    from rich.console import Console

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
        row = [
            name,
            f"[{STATUS_STYLE[t.status]}]{t.status.value}[/]",
            "" if t.duration_ms is None else f"{t.duration_ms:.0f} ms",
            fmt_metrics(t.metrics),
            why(t),
        ]
        table.add_row(*([str(t.iteration)] if multi else []), *row)
    console.print(table)
    for it in run.iterations:
        for f in it.global_failures:
            console.print(
                f"[red]failure outside any test[/] (iteration {it.index}): "
                f"{f.file or 'unknown file'}:{f.line or '?'}: {_first_line(f.message)}"
            )
        for suite, fs in it.suite_failures.items():
            console.print(f"[red]suite set-up/tear-down failed[/]: {suite} ({len(fs)} failure(s))")
    totals = {k: v for k, v in run.totals().items() if v}
    summary = ", ".join(f"{v} {k.lower()}" for k, v in totals.items()) or "no tests"
    console.print(f"{len(run.iterations)} iteration(s): {summary}")
    for w in run.warnings:
        console.print(f"[yellow]warning:[/] {w}")


def md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def gtest_run_markdown(run: GtestRun) -> str:
    lines = ["| iteration | test | status | time | metrics | why |", "|---|---|---|---|---|---|"]
    for t in run.tests:
        ms = "" if t.duration_ms is None else f"{t.duration_ms:.0f} ms"
        lines.append(
            f"| {t.iteration} | `{md_escape(t.name)}` | **{t.status.value}** | {ms} | "
            f"{md_escape(fmt_metrics(t.metrics))} | {md_escape(why(t))} |"
        )
    totals = ", ".join(f"{v} {k.lower()}" for k, v in run.totals().items() if v)
    lines.append("")
    lines.append(f"{len(run.iterations)} iteration(s): {totals or 'no tests'}")
    lines.extend(f"> warning: {w}" for w in run.warnings)
    return "\n".join(lines) + "\n"
