"""``lnrepro shrink``: from a masked, flaky failure to the smallest, loudest deterministic test."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lnrepro.cli.commands import SUMMARY, cli
from lnrepro.cli.exits import on_stop
from lnrepro.cli.output import echo_json
from lnrepro.cli.params import (
    PATHS,
    Command,
    Params,
    backend_spec,
    exclusive,
    flag_of,
    given,
    given_backend,
    json_flag,
    option,
    table_options,
    values_of,
)
from lnrepro.errors import ExitCode, UsageError
from lnrepro.options import shrink as shrink_table
from lnrepro.options.table import SHRINK_OPTS

if TYPE_CHECKING:
    from lnrepro.model.shrink import ShrinkRequest


@cli.command(cls=Command, short_help=SUMMARY["shrink"])
@table_options((shrink_table.RUN,))
@option(
    "--resume",
    "resume_dir",
    type=PATHS,
    metavar="DIR",
    group="Start",
    help="Go on with a saved shrink (with --tt-metal or --command each candidate's verdict "
    "is saved in its record directory): what was judged is not run again.",
)
@table_options(shrink_table.START_OPTS)
@table_options(SHRINK_OPTS)  # the backend's, with one engine and its devices
@table_options(shrink_table.AFTER_BACKEND)
@json_flag("the lnrepro.shrink/1 record")
@option("--markdown", is_flag=True, group="Output", help="Print the result as a GitHub issue body.")
def shrink(
    resume_dir: Path | None, budget: int, as_json: bool, markdown: bool, **kwargs: Any
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
    lnrepro shrink --tt-metal ~/tt-metal --runner local --pytest \\
    'tests/ttnn/unit_tests/operations/test_layer_norm.py::test_layer_norm[64-1024]'
    lnrepro shrink --resume .lnrepro/runs/shrink-20261127-120000
    """
    from lnrepro import api

    exclusive(json=as_json, markdown=markdown)
    if resume_dir is not None:
        starts = (*shrink_table.START_OPTS, shrink_table.RUN, shrink_table.EVALUATOR_OPTS[0])
        if any(kwargs.get(o.dest) for o in starts):
            *most, last = (o.flag for o in starts)
            raise UsageError(
                f"{flag_of('resume_dir')} goes on with the saved request",
                f"drop {', '.join(most)} and {last} (only {flag_of('budget')} may change)",
            )
    request = shrink_request({**kwargs, "budget": budget})
    from lnrepro.present.console import make_console
    from lnrepro.present.shrink import RichShrinkEvents, render_shrink, shrink_markdown

    events = RichShrinkEvents(make_console(stderr=True))
    on_stop(events.stop_hint)  # Ctrl-C: the best case so far, and the --resume line
    with events:
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


def shrink_request(params: Params) -> ShrinkRequest:
    """The request the command line asks for (its fields from the table of options), or a usage
    error naming the option that does not apply."""
    from lnrepro.model.requests import EmulatorSpec
    from lnrepro.model.shrink import ShrinkRequest

    if params.get("run_ref") is not None:
        extra = given_backend(params, SHRINK_OPTS)
        if extra:
            raise UsageError(
                f"{shrink_table.RUN.flag} takes the run's backend; {', '.join(extra)} "
                f"{'does' if len(extra) == 1 else 'do'} not apply",
                f"drop {', '.join(extra)}",
            )
    backend = backend_spec(params)
    if isinstance(backend, EmulatorSpec) and backend.seed is not None and backend.data == "random":
        import msgspec

        # --seed seeds shrink's random data (the request's seed, from the same option)
        backend = msgspec.structs.replace(backend, data="copy", seed=None)
    from lnrepro.shrink.validate import probe_backend

    backend = probe_backend(backend)
    return ShrinkRequest(backend=backend, **values_of(ShrinkRequest, shrink_table.OPTS, params))
