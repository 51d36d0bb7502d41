"""``lnrepro explain`` and ``lnrepro tolerance``: studies on the kernel emulator."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lnrepro.cli.commands import SUMMARY, cli
from lnrepro.cli.output import echo_json
from lnrepro.cli.params import PATHS, Command, json_flag, option, record_dir_option
from lnrepro.cli.records import given_dir
from lnrepro.emulator.defects import DEFECT_NAMES
from lnrepro.errors import ExitCode
from lnrepro.model.kinds import StudyEra

if TYPE_CHECKING:
    from lnrepro.api import Progress
    from lnrepro.present.console import Working


def _spinner() -> Progress:
    """A study's progress on standard error: a spinner on a terminal, plain lines in a log
    (:class:`lnrepro.present.console.Working`). Made when a study runs: ``--help`` loads no
    :mod:`lnrepro.api`."""
    from lnrepro.api import Progress

    class Spinner(Progress):
        working: Working | None = None

        def started(self, what: str) -> None:
            from lnrepro.present.console import Working, make_console

            self.working = Working(make_console(stderr=True), what).__enter__()

        def update(self, what: str, subject: str = "") -> None:
            if self.working is not None:
                self.working.update(what, subject)

        def finished(self) -> None:
            if self.working is not None:
                self.working.__exit__(None, None, None)

    return Spinner()


@cli.command(cls=Command, short_help=SUMMARY["explain"])
@click.argument(
    "ref",
    metavar="RUN|LOG",
    help="A saved run (id, unique prefix, `last`, a path), a gtest console log, or a watcher.log.",
)
@record_dir_option("Where run and bisect write their records.")
@option(
    "--top",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    group="Output",
    help="Models to show.",
)
@json_flag("every model's fit (a hang text: its diagnosis, lnrepro.hang/2)")
def explain(ref: str, record_dir: Path, top: int, as_json: bool) -> int:
    """Which mechanism explains what a card showed? Every candidate model (defect set x kernel
    era x arch) runs the observed tests on the emulator with the tests' own data and is scored
    per test: a different verdict costs 1, each printed metric its relative residual (capped at
    1). RUN is a saved record (id, `last`, path); LOG a gtest console log from anywhere.

    A hang is explained from what a user has about it: which kernel, on which cores and RISC,
    waits on which circular-buffer or NOC operation. LOG may be a watcher log of any era (whole,
    or an excerpt), tt-triage output of any era, or a summary of one (`Device 1, core 1-5
    (brisc):` and frames); a HANG run's attempts carry theirs (run with --watcher N).

    \b
    lnrepro explain seed-run.log        # a log copied from a bug report or a card
    lnrepro explain generated/watcher/watcher.log
    lnrepro explain triage.txt          # tt-triage's output, pasted
    lnrepro explain last --json
    """
    from lnrepro import api
    from lnrepro.model.requests import ExplainRequest
    from lnrepro.present.console import make_console, render_explain, render_hang, say

    stdin = sys.stdin.buffer if ref == "-" else None  # a paste piped in, as `parse -`
    found = api.explain(
        ExplainRequest(ref=ref, record_dir=given_dir(record_dir)), _spinner(), stdin
    )
    if as_json:
        echo_json(found.to_json())
        return ExitCode.OK
    if isinstance(found, api.HangText):
        render_hang(str(found.path), found.reading.diagnosis, make_console())
        return ExitCode.OK
    console = make_console()
    for where, diagnosis in found.hangs:
        render_hang(where, diagnosis, console)
    if found.undiagnosed:  # the hang first: it is what the run found
        say(console, f"{found.source} hung: {found.undiagnosed}", hang=0)
    scope = found.scope()
    if found.fits and scope:
        say(console, f"note: {scope}", hang=0)
    if found.fits:
        render_explain(found.source, found.fits[:top], found.meta, console)
        note = found.tie()
        if note:  # wrapped at spaces on a terminal; one line in a pipe or a log
            say(console, note, hang=0)
    return ExitCode.OK


@cli.command(cls=Command, short_help=SUMMARY["tolerance"])
@option(
    "--test",
    "tests",
    multiple=True,
    metavar="NAME",
    help="A test (gtest pattern). Repeatable. [default: the BugRepro and NIGHTLY tests]",
)
@option(
    "--shape",
    metavar="B,S,H,F",
    help="Study a shape instead: bands per tensor and rtol, every data kind.",
)
@option(
    "--defect",
    "defects",
    multiple=True,
    metavar="MODEL",
    help=f"With --shape: a defect model to compare, named as run's --defect names them: {DEFECT_NAMES}. "
    "Repeatable. [default: double-subtract, drop-xhat-blocks, shipped, overwrite-dy-gamma-sum]",
)
@option(
    "--trials",
    type=click.IntRange(min=2, max=100_000),
    default=200,
    show_default=True,
    help="Data draws per kind.",
)
@option(
    "--alpha",
    type=float,
    default=1e-6,
    show_default=True,
    help="The correct kernel may fail a band with this probability (1e-12 to 0.5).",
)
@option(
    "--kernel-era",
    type=click.Choice([e.value for e in StudyEra]),
    default="2025-12",
    show_default=True,
    help="Which factory's paths and blocks.",
)
@option(
    "--plot",
    type=PATHS,
    group="Output",
    help="With --shape: write a plot of the error distributions against the tolerances (.svg or .png; needs matplotlib).",
)
@option(
    "--reference-variants",
    is_flag=True,
    help="With --shape: also how far the statistics' algorithms (Welford, two-pass, pairwise, sequential, one-pass, bf16-stored) move the reference.",
)
@json_flag("the results")
def tolerance(
    tests: tuple[str, ...],
    shape: str | None,
    defects: tuple[str, ...],
    trials: int,
    alpha: float,
    kernel_era: str,
    plot: Path | None,
    reference_variants: bool,
    as_json: bool,
) -> int:
    """Measure what a tolerance does: the correct kernel's error distribution (quantiles and a
    Gumbel tail out to 1 - alpha), each defect's, the band (rtol, atol) the correct kernel passes
    with probability 1 - alpha, each defect's power against it, and which data kind separates
    them best. Without --shape: the verdict of each test's own tolerance, and the band that does
    both jobs.

    \b
    lnrepro tolerance                  # the seeds' tests, 200 draws per data kind
    lnrepro tolerance --trials 1000    # 1000 draws (docs/commands.md's table)
    lnrepro tolerance --shape 3,273,1,8462 --plot nightly.svg
    """
    from lnrepro import api
    from lnrepro.model.requests import ToleranceRequest
    from lnrepro.present.console import make_console, render_tolerance_bands, render_tolerance_tests

    request = ToleranceRequest(
        tests=tests,
        shape=shape,
        defects=defects,
        trials=trials,
        alpha=alpha,
        kernel_era=StudyEra(kernel_era),
        plot=plot,
        reference_variants=reference_variants,
    )
    done = api.tolerance(request, _spinner())
    if isinstance(done, api.ShapeTolerance) and done.plot is not None:
        click.echo(f"lnrepro: wrote {done.plot}", err=True)
    if as_json:
        echo_json(done.to_json())
    elif isinstance(done, api.ShapeTolerance):
        render_tolerance_bands(done.shape, done.study, make_console())
    else:
        render_tolerance_tests(done.tests, done.alpha, make_console())
    return ExitCode.OK
