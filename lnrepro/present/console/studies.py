"""The studies' tables: a hang's diagnosis, ``explain``'s models, ``tolerance``'s bands."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from lnrepro.present.console.layout import Col, Row, say, show_table
from lnrepro.present.console.style import styled
from lnrepro.present.escape import terminal as esc
from lnrepro.present.text import fmt_num

if TYPE_CHECKING:
    from rich.console import Console

    from lnrepro.studies.model_fit import ExplainMeta


def render_hang(source: str, diagnosis: Any, console: Console) -> None:
    """A hang's diagnosis (:class:`lnrepro.hang.model.Diagnosis`): the headline, then its lines."""
    style = "bold red" if diagnosis.hung else "bold yellow"
    say(console, styled((f"hang ({source}):", "bold"), " ", (diagnosis.pattern.value, style)))
    for line in diagnosis.lines(pattern=False):
        stripped = line.lstrip(" ")
        say(console, esc(stripped), indent=len(line) - len(stripped), hang=4)


def render_explain(source: str, fits: list[Any], meta: ExplainMeta, console: Console) -> None:
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
    if study.variants is None:
        return
    rows = [
        [
            esc(name),
            fmt_num(v.mean),
            fmt_num(v.rstd_rel),
            fmt_num(v.xhat),
            f"{100 * v.bf16_flips:.4f}%",
        ]
        for name, v in study.variants.items()
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
