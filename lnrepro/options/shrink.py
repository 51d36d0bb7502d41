"""The table of options of ``lnrepro shrink``'s own fields (:class:`ShrinkRequest`'s), in the order
``--help`` lists them, and the command line that repeats a shrink, written from it. Its backend
options are the table's (:data:`lnrepro.options.table.SHRINK_OPTS`); see
:mod:`lnrepro.options.opt` for what is derived from an entry.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lnrepro.options.opt import Opt, argv
from lnrepro.options.table import RECORDS, SEARCH, backend_argv
from lnrepro.options.table import SHRINK_OPTS as BACKEND_OPTS

if TYPE_CHECKING:
    from lnrepro.model.shrink import ShrinkRequest

START = "Start"
EVALUATOR = "Evaluator"
OUTPUT = "Output"

RUN = Opt(
    of="ShrinkRequest",
    field="run",
    flags=("--run",),
    dest="run_ref",
    metavar="ID",
    group=START,
    help="Start from a run record (id, `last`, a path): its first failing modelled test (or "
    "--test), its backend and that test's pass rate.",
)
# then --resume (the command's own: a saved shrink, not a field of the request)
START_OPTS = (
    Opt(
        of="ShrinkRequest",
        field="test",
        flags=("--test",),
        metavar="NAME",
        group=START,
        help="The test to start from (full or short name), e.g. "
        "NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit.",
    ),
    Opt(
        of="ShrinkRequest",
        field="pytest",
        flags=("--pytest",),
        dest="pytest_id",
        metavar="NODEID",
        group=START,
        help="Start from a ttnn op's pytest test (with --tt-metal; ttnn.layer_norm's tests, e.g. "
        "test_layer_norm.py::test_layer_norm[64-1024] under tests/ttnn/unit_tests/operations): a "
        "probe test file is patched on and each case is one pytest run.",
    ),
)
# the emulator's --seed (one option) seeds shrink's random data too
SEED = replace(next(o for o in BACKEND_OPTS if o.dest == "seed"), of="ShrinkRequest")
EVALUATOR_OPTS = (
    Opt(
        of="ShrinkRequest",
        field="command",
        flags=("--command",),
        metavar="CMD",
        form="command",
        group=EVALUATOR,
        help="Test each case with this command instead of the emulator: the case is JSON in "
        "$LNREPRO_CASE; exit 0 pass, 1-127 fail, 125 skip (as git bisect run); it may print "
        "'lnrepro-probe: margin=M'.",
    ),
    Opt(
        of="ShrinkRequest",
        field="timeout_s",
        flags=("--timeout",),
        show_default=True,
        group=EVALUATOR,
        help="Seconds one --command or checkout run may take before its process group is "
        "killed (a skip).",
    ),
)
SEARCH_OPTS = (
    Opt(
        of="ShrinkRequest",
        field="confidence",
        flags=("--confidence",),
        show_default=True,
        group=SEARCH,
        help="A case fails only if it fails k runs in a row, k such that a case as likely to "
        "pass as the start would be caught passing with this probability.",
    ),
    Opt(
        of="ShrinkRequest",
        field="start_runs",
        flags=("--start-runs",),
        show_default=True,
        group=SEARCH,
        help="Runs of the start test that measure its pass rate (random data: a fresh draw each).",
    ),
    Opt(
        of="ShrinkRequest",
        field="budget",
        flags=("--budget",),
        show_default=True,
        group=SEARCH,
        help="Runs of the code under test at most; then the best case so far.",
    ),
)
OUTPUT_OPTS = (
    Opt(
        of="ShrinkRequest",
        field="source",
        flags=("--source",),
        metavar="FILE",
        group=OUTPUT,
        help="Write the found case as a gtest file for tt-train (in the style of "
        "layernorm_bw_fused_op_test.cpp), or with --pytest as a pytest file for the ttnn op (in "
        "the style of test_layer_norm.py).",
    ),
    Opt(
        of="ShrinkRequest",
        field="source_flavour",
        flags=("--source-for",),
        show_default=True,
        group=OUTPUT,
        help="Whose helpers --source uses: tt-metal's tt-train (read at 16165972af) or the test "
        "look-alike's.",
    ),
)
RECORD_DIR = Opt(
    of="ShrinkRequest",
    field="record_dir",
    flags=("--record-dir",),
    show_default=True,
    group=RECORDS,
    help="With --tt-metal: the probe's build and runs go into a new directory here.",
)
# after the backend's (the command's --json and --markdown follow, in Output)
AFTER_BACKEND = (*EVALUATOR_OPTS, *SEARCH_OPTS, *OUTPUT_OPTS, RECORD_DIR)
# every option of ``lnrepro shrink`` that sets a request field, in the order --help lists them
# (SEED shares the emulator's --seed, listed first)
OPTS = (RUN, *START_OPTS, *BACKEND_OPTS, SEED, *AFTER_BACKEND)
# fields no command line sets
NOT_OPTIONS = {
    ("ShrinkRequest", "backend"),  # the backend options
    ("ShrinkRequest", "known_start"),  # read from --run's record
}


def shrink_argv(req: ShrinkRequest) -> list[str]:
    """``lnrepro shrink`` with the options that repeat ``req`` (``--run`` takes the run's
    backend; the emulator's own ``--seed`` says the seed when it has one)."""
    backend = [] if req.run is not None else backend_argv(req.backend)
    seeded = getattr(req.backend, "seed", None) is not None  # the emulator's
    rest = (*EVALUATOR_OPTS, *SEARCH_OPTS, *(() if seeded else (SEED,)), *OUTPUT_OPTS, RECORD_DIR)
    return ["lnrepro", "shrink", *argv(req, (RUN, *START_OPTS)), *backend, *argv(req, rest)]
