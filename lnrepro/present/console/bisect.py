"""A bisect's record: its steps, then the first bad commit (or the candidates left)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lnrepro.model.bisect import BisectRecord, SearchKind, Step
from lnrepro.model.gtest import Metrics
from lnrepro.model.record import merge_worst
from lnrepro.present.console.layout import Col, Row, say, say_command, show_table
from lnrepro.present.console.style import MARK_STYLE, styled
from lnrepro.present.escape import terminal as esc
from lnrepro.present.text import worst_text

if TYPE_CHECKING:
    from rich.console import Console


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
    rows: list[Row] = [
        [
            str(i),
            esc(st.sha[:12]),
            st.action.kind.value,
            styled((st.mark.value, MARK_STYLE.get(st.mark.value, ""))),
            f"{st.evidence.seconds:.1f}",
            esc(st.subject),
            esc(_evidence(st)),
        ]
        for i, st in enumerate(rec.steps, 1)
    ]
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
    if r.search is SearchKind.BAYESIAN:
        _render_posterior(rec, console)
    if r.first_bad and r.commit:
        c = r.commit
        say(console, styled((f"{r.kind.value}: ", "bold"), (c.sha, "bold red"), f"  {c.subject}"))
        say(console, esc(f"  author {c.author}, {c.date}" + (f", PR #{c.pr}" if c.pr else "")))
        if r.last_good:
            say(console, esc(f"  last good: {r.last_good}"))
        if r.search is SearchKind.BAYESIAN and r.confidence is not None:
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
    qb, qg = (r.rates.bad, r.rates.good) if r.rates else (0.0, 0.0)
    rows: list[Row] = [[esc(p.sha[:12]), f"{p.p:.4f}", esc(p.subject)] for p in r.posterior]
    show_table(
        console,
        f"posterior (fail rate learned: buggy {qb:.2f}, clean {qg:.2f})",
        [Col("commit"), Col("P(first bad)"), Col("subject", text=True)],
        rows,
        head=2,
    )
    from lnrepro.bisect.rates import prior

    said = prior(rec.request)
    if said:
        say(console, esc(f"prior: {said}"))
    if r.margin:
        say(console, esc(f"margins: {r.margin}"))
    if r.drifted:
        say(
            console,
            esc(
                f"drift: {len(r.drifted)} commit(s) whose margins matched neither endpoint, "
                f"judged by their verdicts: {', '.join(s[:12] for s in r.drifted)}"
            ),
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
