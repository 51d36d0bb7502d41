"""``lnrepro shrink``: from a masked, flaky failure to the smallest, loudest deterministic test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from lnrepro.cli import SUMMARY, cli, echo_json
from lnrepro.cli.options import (
    PATHS,
    Command,
    backend_options,
    backend_spec,
    given,
    given_backend,
    json_flag,
    option,
    record_dir_option,
    split_command,
)
from lnrepro.errors import ExitCode, UsageError
from lnrepro.model.option_table import SHRINK_OPTS
from lnrepro.model.requests import EmulatorSpec
from lnrepro.model.shrink import (
    DEFAULT_BUDGET,
    DEFAULT_CONFIDENCE,
    DEFAULT_START_RUNS,
    ShrinkRequest,
)


@cli.command(
    cls=Command,
    short_help=SUMMARY["shrink"],
)
@option(
    "--run",
    "run_ref",
    metavar="ID",
    group="Start",
    help="Start from a run record (id, `last`, a path): its first failing modelled test (or "
    "--test), its backend and that test's pass rate.",
)
@option(
    "--resume",
    "resume_dir",
    type=PATHS,
    metavar="DIR",
    group="Start",
    help="Go on with a saved shrink (with --tt-metal or --command each candidate's verdict "
    "is saved in its record directory): what was judged is not run again.",
)
@option(
    "--test",
    "test",
    metavar="NAME",
    group="Start",
    help="The test to start from (full or short name), e.g. NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit.",
)
@option(
    "--pytest",
    "pytest_id",
    metavar="NODEID",
    group="Start",
    help="Start from a ttnn op's pytest test (with --tt-metal; ttnn.layer_norm's tests, e.g. "
    "test_layer_norm.py::test_layer_norm[64-1024] under tests/ttnn/unit_tests/operations): a "
    "probe test file is patched on and each case is one pytest run.",
)
@backend_options
@option(
    "--command",
    "command",
    metavar="CMD",
    group="Evaluator",
    help="Test each case with this command instead of the emulator: the case is JSON in "
    "$LNREPRO_CASE; exit 0 pass, 1-127 fail, 125 skip (as git bisect run); it may print "
    "'lnrepro-probe: margin=M'.",
)
@option(
    "--timeout",
    "timeout_s",
    type=float,
    default=600.0,
    show_default=True,
    group="Evaluator",
    help="Seconds one --command or checkout run may take before its process group is killed (a skip).",
)
@option(
    "--confidence",
    type=float,
    default=DEFAULT_CONFIDENCE,
    show_default=True,
    group="Search",
    help="A case fails only if it fails k runs in a row, k such that a case as likely to pass "
    "as the start would be caught passing with this probability.",
)
@option(
    "--start-runs",
    type=int,
    default=DEFAULT_START_RUNS,
    show_default=True,
    group="Search",
    help="Runs of the start test that measure its pass rate (random data: a fresh draw each).",
)
@option(
    "--budget",
    type=int,
    default=DEFAULT_BUDGET,
    show_default=True,
    group="Search",
    help="Runs of the code under test at most; then the best case so far.",
)
@option(
    "--source",
    type=PATHS,
    metavar="FILE",
    group="Output",
    help="Write the found case as a gtest file for tt-train (in the style of "
    "layernorm_bw_fused_op_test.cpp), or with --pytest as a pytest file for the ttnn op (in the "
    "style of test_layer_norm.py).",
)
@option(
    "--source-for",
    "source_flavour",
    type=click.Choice(["tt-metal", "lookalike"]),
    default="tt-metal",
    show_default=True,
    group="Output",
    help="Whose helpers --source uses: tt-metal's tt-train (read at 16165972af) or the test look-alike's.",
)
@record_dir_option("With --tt-metal: the probe's build and runs go into a new directory here.")
@json_flag("the lnrepro.shrink/1 record")
@option("--markdown", is_flag=True, group="Output", help="Print the result as a GitHub issue body.")
def shrink(
    resume_dir: Path | None,
    run_ref: str | None,
    test: str | None,
    pytest_id: str | None,
    command: str | None,
    timeout_s: float,
    confidence: float,
    start_runs: int,
    budget: int,
    source: Path | None,
    source_flavour: str,
    record_dir: Path,
    as_json: bool,
    markdown: bool,
    **kwargs: Any,
) -> int:
    """Search a test's case space for the case a maintainer wants in a bug report: one that
    fails every time (deterministic), by the largest margin over the tolerance, with the
    loudest data (constant, few-valued, structured, random), on the smallest shape (whole
    tiles; a partial last tile kept only when it matters). Starts from a passing test too: the
    data kinds are searched first. Reports the one-step-smaller neighbours, which pass.

    A case counts only if the correct kernel's model passes it: a test that fails on a fixed
    kernel too is not a reproducer. Exits 1 when a failing case was found (the kernel is bad:
    here is the case), 0 when nothing fails.

    \b
    lnrepro shrink --test NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit
    lnrepro shrink --test '*TightTolerance_8462*' --defect drop-xhat-blocks
    lnrepro shrink --test 'NIGHTLY_*' --kernel-era fixed     # finds nothing
    lnrepro shrink --test '*TightTolerance_8462*' --source shrunk_test.cpp --json
    lnrepro shrink --run last       # the last run's first failing test
    lnrepro shrink --test 'NIGHTLY_*' --tt-metal ~/tt-metal --runner local
    lnrepro shrink --pytest 'tests/ttnn/unit_tests/operations/test_layer_norm.py::test_layer_norm[64-1024]' --tt-metal ~/tt-metal --runner local
    lnrepro shrink --resume .lnrepro/runs/shrink-20261127-120000
    """
    from lnrepro import api
    from lnrepro.cli.options import exclusive

    exclusive(json=as_json, markdown=markdown)
    if resume_dir is not None and (test or run_ref or command or pytest_id):
        raise UsageError(
            "--resume goes on with the saved request",
            "drop --test, --pytest, --run and --command (only --budget may change)",
        )
    if run_ref is not None:
        extra = given_backend(kwargs, SHRINK_OPTS)
        if extra:
            raise UsageError(
                f"--run takes the run's backend; {', '.join(extra)} "
                f"{'does' if len(extra) == 1 else 'do'} not apply",
                f"drop {', '.join(extra)}",
            )
    backend = backend_spec(kwargs)
    seed = backend.seed if isinstance(backend, EmulatorSpec) and backend.seed is not None else 0
    if isinstance(backend, EmulatorSpec) and backend.seed is not None and backend.data == "random":
        import msgspec

        # --seed seeds shrink's random data
        backend = msgspec.structs.replace(backend, data="copy", seed=None)
    request = ShrinkRequest(
        test or "",
        backend,
        split_command(command, "--command") if command is not None else None,
        confidence,
        start_runs,
        budget,
        seed,
        source,
        timeout_s,
        source_flavour,
        record_dir,
        run_ref,
        pytest=pytest_id or "",
    )
    from lnrepro.present.console import make_console
    from lnrepro.present.shrink import RichShrinkEvents, render_shrink, shrink_markdown

    with RichShrinkEvents(make_console(stderr=True)) as events:
        if resume_dir is not None:
            ctx = click.get_current_context()
            rec = api.shrink_resume(resume_dir, events, budget if given(ctx, "budget") else None)
        else:
            rec = api.shrink(request, events)
    if as_json:
        echo_json(rec.to_json())
    elif markdown:
        click.echo(shrink_markdown(rec), nl=False)
    else:
        render_shrink(rec, make_console())
    if rec.source is not None:
        click.echo(f"lnrepro: wrote {rec.source}", err=True)
    return ExitCode.FAILED if rec.found else ExitCode.OK
