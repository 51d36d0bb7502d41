"""``lnrepro explain`` and ``lnrepro tolerance``: studies on the kernel emulator."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from lnrepro.cli import SUMMARY, cli, echo_json
from lnrepro.cli.options import PATHS, Command, json_flag, option, record_dir_option
from lnrepro.cli.records import bases
from lnrepro.emulator.defects import DEFECT_NAMES
from lnrepro.errors import ExitCode, InputError, UsageError

EXPLAIN_SCHEMA = "lnrepro.explain/2"  # /2: a run's hang diagnoses ("hangs")
# every kind of input explain reads, for the fix of an error about one
EXPLAIN_READS = (
    "pass a run id (`lnrepro runs` lists them) or `last`, a gtest console log, a watcher log "
    "(generated/watcher/watcher.log) or tt-triage output"
)


@cli.command(
    cls=Command,
    short_help=SUMMARY["explain"],
)
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
    from lnrepro.present.console import make_console, render_explain, render_hang, say
    from lnrepro.studies import explain as ex

    path = Path(ref)
    hangs: list[tuple[str, Any]] = []
    left_out: list[tuple[str, str]] = []  # tests that hung, crashed or were cut off
    undiagnosed: str | None = None  # a run's hang that kept nothing to place it
    if ("/" in ref or path.suffix) and not path.exists() and not path.is_symlink():
        from lnrepro.errors import MalformedLog

        # a path, not a record id (run-*, bisect-*, `last` have neither a slash nor a suffix)
        raise MalformedLog(f"{ref}: no such file", EXPLAIN_READS)
    if (
        path.is_file()
        and path.name not in ("record.json", "bisect.json")
        and not ref.endswith(".json")
    ):
        from lnrepro.hangs import read_file as read_hang  # a watcher log, tt-triage, a summary

        reading = read_hang(path)
        if reading is not None and not reading.in_gtest_log:
            if as_json:
                echo_json(reading.to_json())
            else:
                render_hang(str(path), reading.diagnosis, make_console())
            return ExitCode.OK
        from lnrepro.errors import MalformedLog
        from lnrepro.gtest.files import parse_log_file

        try:
            parsed = parse_log_file(path)
        except MalformedLog as exc:  # the fix names every kind explain reads, not gtest's alone
            raise MalformedLog(f"{path} holds no googletest output, watcher dump or tt-triage "
                               f"table ({exc.message})", EXPLAIN_READS) from None  # fmt: skip
        observed = ex.observed_from_run(parsed)
        seen = {o.name for o in observed}
        left_out = [(t.name, t.status.value) for t in parsed.tests
                    if t.name not in seen and t.status.value in ("CRASHED", "TIMEOUT")]  # fmt: skip
        source = str(path)
        hangs = [(f"{path} ({reading.what()})", reading.diagnosis)] if reading else []
    else:
        from lnrepro.doors.store import load_run
        from lnrepro.model.record import Verdict
        from lnrepro.run.pipeline import undiagnosed_hang

        rec = load_run(bases(record_dir), ref, "explain takes a run or a log")
        observed = ex.observed_from_record(rec)
        source = rec.id
        hangs = [(f"{rec.id} attempt {a.index}", a.hang) for a in rec.attempts if a.hang]
        left_out = [(t.name, t.verdict.value) for t in rec.tests
                    if t.verdict in (Verdict.HANG, Verdict.CRASH)]  # fmt: skip
        undiagnosed = undiagnosed_hang(rec)
    if not observed and not hangs and not (undiagnosed and not as_json):
        if undiagnosed:  # --json: the document has no place for an undiagnosed hang
            how = undiagnosed.partition(" — for a diagnosis: ")[2]
            raise InputError(f"{source}: {undiagnosed.partition(' — ')[0]}",
                             how or "pass a run that kept a watcher log or tt-triage output")  # fmt: skip
        raise InputError(
            f"no passed or failed test and no hang diagnosis in {source}",
            "pass a log or run that ran the tests (for a hang: a run with --watcher N)",
        )
    fits: list[Any] = []
    meta: dict[str, Any] = {
        "seconds": 0.0,
        "models": 0,
        "computed": 0,
        "tests": [],
        "skipped_tests": [],
    }
    if observed:
        err = make_console(stderr=True)
        total = ex.n_models(ex.ERAS, ex.ARCHES)
        with err.status(f"explain: {total} models on {len(observed)} test(s)") as status:
            fits, meta = ex.explain(observed, eras=ex.ERAS, arches=ex.ARCHES,
                                    on_progress=lambda n, of: status.update(
                                        f"explain: {total} models, emulator run {n}/{of}"))  # fmt: skip
    if as_json:
        echo_json(
            {
                "schema": EXPLAIN_SCHEMA,
                "source": source,
                **meta,
                "models": [f.to_json() for f in fits],
                "hangs": [{"where": w, "diagnosis": d.to_json()} for w, d in hangs],
            }
        )
        return ExitCode.OK
    console = make_console()
    for where, diagnosis in hangs:
        render_hang(where, diagnosis, console)
    if undiagnosed:  # the hang first: it is what the run found
        say(console, f"{source} hung: {undiagnosed}", hang=0)
    scope = ex.ranking_scope(observed, left_out)
    if fits and scope:
        say(console, f"note: {scope}", hang=0)
    if fits:
        render_explain(source, fits[:top], meta, console)
        note = ex.tie_note(fits)
        if note:  # wrapped at spaces on a terminal; one line in a pipe or a log
            say(console, note, hang=0)
    return ExitCode.OK


def _model(text: str) -> str:
    """A ``--defect`` of tolerance, read as run reads its own: the study's name for that set."""
    from lnrepro.emulator.defects import defects_label, parse_defects
    from lnrepro.studies.tolerance import MODELS

    try:
        chosen = parse_defects(text)
    except ValueError as exc:
        raise UsageError(f"--defect: {exc}", "see `lnrepro tolerance --help`") from None
    return next((name for name, d in MODELS.items() if d == chosen), defects_label(chosen))


def _shape(text: str) -> tuple[int, int]:
    """B,S,H,F as (rows, features), within what this machine can study."""
    from lnrepro.studies.tolerance import check_shape

    try:
        b, sq, h, f = (int(v) for v in text.split(","))
        if min(b, sq, h, f) < 1:
            raise ValueError
    except ValueError:
        raise UsageError(f"--shape {text!r} is not B,S,H,F", "e.g. --shape 3,273,1,8462") from None
    problem = check_shape(b * sq * h, f)
    if problem:
        raise UsageError(
            f"--shape {text}: {problem}", "study a smaller shape (the bug shows from 64 tiles on)"
        )
    return b * sq * h, f


@cli.command(
    cls=Command,
    short_help=SUMMARY["tolerance"],
)
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
    type=click.Choice(["2025-11", "2025-12"]),
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
def tolerance(tests: tuple[str, ...], shape: str | None, defects: tuple[str, ...], trials: int, alpha: float,
              kernel_era: str, plot: Path | None, reference_variants: bool, as_json: bool) -> int:  # fmt: skip
    """Measure what a tolerance does: the correct kernel's error distribution (quantiles and a
    Gumbel tail out to 1 - alpha), each defect's, the band (rtol, atol) the correct kernel passes
    with probability 1 - alpha, each defect's power against it, and which data kind separates
    them best. Without --shape: the verdict of each test's own tolerance, and the band that does
    both jobs.

    \b
    lnrepro tolerance                          # the seeds' tests, 200 draws per data kind
    lnrepro tolerance --trials 1000            # 1000 draws (the table in docs/commands.md)
    lnrepro tolerance --shape 3,273,1,8462 --plot nightly.svg
    """
    if not (math.isfinite(alpha) and 1e-12 <= alpha <= 0.5):
        raise UsageError(f"--alpha {alpha:g} is not from 1e-12 to 0.5", "e.g. --alpha 1e-6")
    if shape is None:
        for flag, v in (
            ("--defect", defects),
            ("--reference-variants", reference_variants),
            ("--plot", plot),
        ):
            if v:
                raise UsageError(
                    f"{flag} only applies with --shape", f"add --shape B,S,H,F, or drop {flag}"
                )
    elif tests:
        raise UsageError("--test and --shape do not go together", "pick one")
    from lnrepro.emulator.defects import Era
    from lnrepro.present.console import (
        make_console,
        render_tolerance_bands,
        render_tolerance_tests,
        working,
    )
    from lnrepro.studies import tolerance as tl

    era = Era(kernel_era)
    err = make_console(stderr=True)
    if shape is not None:
        rows, features = _shape(shape)
        models = tuple(_model(d) for d in defects) or tuple(tl.MODELS)
        if plot is not None:
            from lnrepro.present.plot import check_path

            check_path(plot)
        with working(err, "tolerance: sampling") as status:
            study = tl.shape_study(rows, features, trials=trials, models=models, era=era, alpha=alpha,
                                   reference_variants=reference_variants,
                                   progress=lambda d, n: status.update(f"tolerance: draw {d}/{n}"))  # fmt: skip
        if plot is not None:
            from lnrepro.present.plot import tolerance_plot

            s = study.samples
            tolerance_plot({m: s.get(m, "test", "dx", 0.0) for m in s.data}, study.plot_lines(),
                           f"dx errors, shape {shape}, {trials} draws",
                           "atol needed to pass (dx, rtol 0)", plot)  # fmt: skip
            click.echo(f"lnrepro: wrote {plot}", err=True)
        if as_json:
            echo_json({"shape": shape, **study.to_json()})
        else:
            render_tolerance_bands(shape, study, make_console())
        return ExitCode.OK
    names = tl.select_tests(tests)
    if not names:
        raise UsageError(f"no modelled test matches {', '.join(tests)}", "see `lnrepro run --list`")
    with working(err, "tolerance: sampling") as status:
        rows_out = tl.seeds_table(names, trials=trials, alpha=alpha, era=era,
                                  progress=lambda nm, d, n: status.update(f"tolerance: draw {d}/{n} of {nm}", nm))  # fmt: skip
    if as_json:
        echo_json(
            {
                "schema": tl.SCHEMA,
                "trials": trials,
                "alpha": alpha,
                "tests": [r.to_json() for r in rows_out],
            }
        )
    else:
        render_tolerance_tests(rows_out, alpha, make_console())
    return ExitCode.OK
