"""What a bisect's actions cost, in seconds: the Bayesian search weighs information per minute
(:mod:`lnrepro.bisect.bayes`, which re-exports :class:`Costs`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Costs:
    """Seconds an action takes. Defaults are tt-metal's; a session learns its own as it goes."""

    build_s: float = 1800.0
    rebuild_s: float = 90.0  # back to a commit built before: ccache is warm (bench_run: ~4%)
    run_s: float = 60.0
    fetch_s: float = 180.0  # a prebuilt artifact: fetched, not built
