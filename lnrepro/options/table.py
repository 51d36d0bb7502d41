"""The table of options: one :class:`~lnrepro.options.opt.Opt` per request field a command line
sets, per command in the order ``--help`` lists them, and the command line that repeats a
request, written from it (see :mod:`lnrepro.options.opt` for what is derived from the table).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from lnrepro.model.kinds import CASE_ENV, DEFAULT_FILTER, DEFAULT_TIMEOUT_S
from lnrepro.options.opt import Opt, argv, written
from lnrepro.options.python import PYTHON_OPTS as PYTHON_OPTS

if TYPE_CHECKING:
    from lnrepro.model.requests import BackendSpec, BisectRequest, RunRequest, TestSpec

# ---------------------------------------------------------------------------------- the table
BACKEND = "Backend"
EMULATOR = "Emulator"
LOCAL = "Local binary"
TT_METAL = "tt-metal"
TESTS = "Tests"
RECORDS = "Records"
SEARCH = "Search"
ORACLE = "How each commit is judged"
JOBS = "Jobs"

BACKEND_KIND = Opt(
    of="RunRequest",
    field="backend",
    flags=("--backend",),
    form="tag",
    group=BACKEND,
    help="emulator: the built-in numpy model (no card); local: a gtest binary already built "
    "here; tt-metal: build a checkout and run its tests; python: any Python project's --pytest "
    "tests. [default: tt-metal with --tt-metal; for run, python with --pytest; else emulator]",
)
EMULATOR_OPTS = (
    Opt(
        of="EmulatorSpec",
        field="kernel_era",
        flags=("--kernel-era",),
        always=True,
        group=EMULATOR,
        help="Which kernel, program factory and tests to model: 2025-11 (older factory), 2025-12 "
        "(newer factory; the reports' main), fixed (after PR #53215). [default: 2025-12]",
    ),
    Opt(
        of="EmulatorSpec",
        field="arch",
        flags=("--arch",),
        always=True,
        group=EMULATOR,
        help="The card whose free L1 decides the path. [default: wormhole_b0]",
    ),
    Opt(
        of="EmulatorSpec",
        field="defect",
        flags=("--defect",),
        group=EMULATOR,
        help="The era's defects (default), {DEFECT_NAMES}.",  # the emulator's list, by the cli
    ),
    Opt(
        of="EmulatorSpec",
        field="block_size",
        flags=("--block-size",),
        group=EMULATOR,
        help="Tiles per block on the block path (1 to 1024). [default: the factory's: 2/1 or 3]",
    ),
    Opt(
        of="EmulatorSpec",
        field="l1_max_tiles",
        flags=("--l1-max-tiles",),
        group=EMULATOR,
        help="Widest row (in tiles) on the fits-in-L1 path. [default: the factory's byte budget]",
    ),
    Opt(
        of="EmulatorSpec",
        field="fp32_stats",
        flags=("--fp32-stats",),
        group=EMULATOR,
        help="Keep mean, rstd and x_hat in fp32 (not the factory's bf16 buffers).",
    ),
    Opt(
        of="EmulatorSpec",
        field="data",
        flags=("--data",),
        group=EMULATOR,
        help="The test's std::mt19937(5489) copied (the same data every run), advancing (later "
        "test versions), or random numpy data from --seed. [default: copy]",
    ),
    Opt(
        of="EmulatorSpec",
        field="seed",
        flags=("--seed",),
        group=EMULATOR,
        help="Random data from this seed, 0 to 2^32-1 (implies --data random; attempt k uses "
        "seed+k-1). With --data random and no seed: a random one, recorded.",
    ),
)
LOCAL_OPTS = (
    Opt(
        of="BinarySpec",
        field="binary",
        flags=("--binary",),
        always=True,
        group=LOCAL,
        help="The gtest binary, e.g. build/tt-train/tests/ttml_tests.",
    ),
)
TT_METAL_OPTS = (
    Opt(
        of="TtMetalSpec",
        field="checkout",
        flags=("--tt-metal",),
        dest="tt_metal",
        metavar="DIR",
        always=True,
        group=TT_METAL,
        help="A tt-metal checkout to build and test (selects --backend tt-metal). "
        "[default with --backend tt-metal: $TT_METAL_HOME]",
    ),
    Opt(
        of="TtMetalSpec",
        field="runner",
        flags=("--runner",),
        always=True,
        group=TT_METAL,
        help="Build and test in lnrepro's container, or on this host (or inside a container "
        "already). [default: docker]",
    ),
    Opt(
        of="TtMetalSpec",
        field="profile",
        flags=("--profile",),
        metavar="NAME",
        toml="profile",
        group=TT_METAL,
        help="Build profile: in-tree (./build_metal.sh) or standalone (tt-train's CMake), or one "
        "from lnrepro.toml. [default: in-tree]",
    ),
    Opt(
        of="TtMetalSpec",
        field="image",
        flags=("--image",),
        metavar="IMAGE",
        toml="image",
        group=TT_METAL,
        help="With --runner docker: the image to build and test in; for a Python project "
        "(--pytest, no --tt-metal), a local image with python3 and pytest, the project mounted "
        "in. [default: lnrepro's image on ghcr.io/tenstorrent/tt-metal/tt-metalium/ubuntu-22.04-dev-amd64:latest]",
    ),
    Opt(
        of="TtMetalSpec",
        field="mount_set",
        flags=("--mount-set",),
        group=TT_METAL,
        help="With --runner docker: full is seed 001's working set (devices, /dev, /sys, "
        "hugepages); tt-metal is tt-metal's scripts' set; seed-broken is --device only. "
        "[default: full]",
    ),
    Opt(
        of="TtMetalSpec",
        field="env",
        flags=("--env",),
        metavar="KEY=VALUE",
        form="pairs",
        toml="env",
        group=TT_METAL,
        help="Extra environment for the build and the tests. Repeatable.",
    ),
    Opt(
        of="TtMetalSpec",
        field="require_device",
        flags=("--require-device",),
        group=TT_METAL,
        help="Fail at once when this host has no /dev/tenstorrent device.",
    ),
    Opt(
        of="TtMetalSpec",
        field="reset_cmd",
        flags=("--reset-cmd",),
        metavar="CMD",
        form="command",
        group=TT_METAL,
        help="Run on the host before every attempt, e.g. 'tt-smi -r 0'. An attempt whose reset "
        "fails is not run: it is an environment error.",
    ),
    Opt(
        of="TtMetalSpec",
        field="watcher_s",
        flags=("--watcher",),
        dest="watcher",
        metavar="SECONDS",
        group=TT_METAL,
        help="Set TT_METAL_WATCHER and keep the watcher log of a failed or hung attempt; a hung "
        "attempt's log is read into a diagnosis (which kernel waits on what, on which cores).",
    ),
    Opt(
        of="TtMetalSpec",
        field="triage",
        flags=("--no-triage",),
        dest="no_triage",
        negate=True,
        group=TT_METAL,
        help="Do not run the checkout's tools/tt-triage.py against the still-hung device when an "
        "attempt times out (by default it runs, with its own time limit, before the kill; its "
        "output is kept beside the attempt's log and read into the hang's diagnosis). With "
        "--dispatch-timeout it also leaves TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE unset: "
        "tt-metal detects the hang and raises without running triage.",
    ),
    Opt(
        of="TtMetalSpec",
        field="dispatch_timeout_s",
        flags=("--dispatch-timeout",),
        dest="dispatch_timeout",
        metavar="SECONDS",
        group=TT_METAL,
        help="Set TT_METAL_OPERATION_TIMEOUT_SECONDS to SECONDS, and "
        "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE to the checkout's tt-triage command (when "
        "it has tools/tt-triage.py and --no-triage is not given): tt-metal detects the hang "
        "itself, runs triage and raises; the attempt is a HANG with triage's diagnosis. Must be "
        "below --timeout; 0 turns tt-metal's own detection off (as tt-metal reads 0).",
    ),
    Opt(
        of="TtMetalSpec",
        field="python",
        flags=("--python",),
        metavar="PATH",
        group=TT_METAL,
        help="The Python that runs --pytest tests. [default: a tt-metal checkout's "
        "python_env/bin/python with --runner local if it exists; a Python project's .venv or "
        "venv; else python3]",
    ),
)
# one engine and its devices for a run; a bisect has its own, one per job
ENGINE_OPTS = (
    Opt(
        of="TtMetalSpec",
        field="docker_context",
        flags=("--docker-context",),
        metavar="NAME",
        group=TT_METAL,
        help="With --runner docker: the Docker context (engine) to build and test on, e.g. a card "
        "host's (tcp:// or ssh://); sources, image and records go through its API.",
    ),
    Opt(
        of="TtMetalSpec",
        field="devices",
        flags=("--device",),
        dest="device_nodes",
        metavar="N",
        group=TT_METAL,
        help="With --runner docker: only these /dev/tenstorrent/N. Repeatable. [default: every "
        "device]",
    ),
)
TEST_OPTS = (
    Opt(
        of="TestSpec",
        field="gtest_filter",
        flags=("--filter",),
        metavar="PATTERN",
        always=True,  # unless --pytest names the tests
        group=TESTS,
        help="gtest filter. [default: the BugRepro and NIGHTLY LayerNorm backward tests, "
        f"{DEFAULT_FILTER}]",
    ),
    Opt(
        of="TestSpec",
        field="pytest",
        flags=("--pytest",),
        dest="pytest_nodeids",
        metavar="NODEID",
        group=TESTS,
        help="Run these pytest tests of the checkout (node ids relative to it, e.g. "
        "tests/ttnn/unit_tests/operations/test_layer_norm.py::test_layer_norm) instead of the "
        "gtest binary; results come from pytest's JUnit XML, PCC lines become the metric pcc. "
        "Repeatable.",
    ),
    Opt(
        of="TestSpec",
        field="repeat",
        flags=("--repeat", "-n"),
        group=TESTS,
        help="Run the tests N times (per commit, when bisecting), each in a fresh process; pass "
        "rates come with 95% intervals. [default: 1]",
    ),
    Opt(
        of="TestSpec",
        field="timeout_s",
        flags=("--timeout",),
        group=TESTS,
        help="Seconds one attempt (or a bisect's --command) may run before its process group is "
        f"killed. [default: {DEFAULT_TIMEOUT_S:g}]",
    ),
    Opt(
        of="TestSpec",
        field="metric_patterns",
        flags=("--metric-pattern",),
        metavar="REGEX",
        group=TESTS,
        help="Extra metric regex with named groups: (?P<tensor>...) and one per metric. "
        "Repeatable.",
    ),
)
RUN_RECORD_DIR = Opt(
    of="RunRequest",
    field="record_dir",
    flags=("--record-dir",),
    show_default=True,
    group=RECORDS,
    help="Each run writes a new directory here (logs, reports, record.json); nothing is "
    "overwritten.",
)
SEARCH_OPTS = (
    Opt(
        of="BisectRequest",
        field="good",
        flags=("--good",),
        dest="goods",
        metavar="REV",
        always=True,
        group=SEARCH,
        help="A commit where the tests pass (need not be an ancestor of --bad: its merge base is "
        "tested first, as git does). Repeatable.",
    ),
    Opt(
        of="BisectRequest",
        field="bad",
        flags=("--bad",),
        metavar="REV",
        always=True,
        group=SEARCH,
        help="A commit where the tests fail.",
    ),
    Opt(
        of="BisectRequest",
        field="repo",
        flags=("--repo",),
        always=True,
        resume=True,  # which repository's bisect to resume
        show_default=True,
        fallback=Path(),
        group=SEARCH,
        help="The repository (its checkout is never touched: lnrepro works in its own worktree).",
    ),
    Opt(
        of="BisectRequest",
        field="find_fix",
        flags=("--find-fix",),
        group=SEARCH,
        help="Find the commit that fixed the bug: --bad is older, --good newer.",
    ),
    Opt(
        of="BisectRequest",
        field="first_parent",
        flags=("--first-parent",),
        group=SEARCH,
        help="Follow only first parents (merges as units), as git does.",
    ),
    Opt(
        of="BisectRequest",
        field="confidence",
        flags=("--confidence",),
        group=SEARCH,
        help="Bisect a flaky bug: a Bayesian search that re-runs and learns the fail rates, "
        "stopping when one commit is the culprit with this probability (0.5 to 0.9999, e.g. "
        "0.95).",
    ),
    Opt(
        of="BisectRequest",
        field="margin",
        flags=("--margin",),
        group=SEARCH,
        help="With --confidence: weigh each run's margin too, how much of its tolerance each "
        "compared quantity used (googletest RecordProperty in the JSON report, which lnrepro "
        "asks for; `--command` gets GTEST_OUTPUT), passing runs included, so a bug whose test "
        "never fails can still be bisected. The endpoints are run first (10 runs, 5 each) to learn "
        "each quantity's margins on both sides; the quantity that separates them best is used. "
        "auto: only when a rank test says they separate, and fewer runs once they cannot (the "
        "first lines say which quantity and why, or why not); on: always (implies --confidence "
        "0.95); off: verdicts only. A commit whose margins match neither endpoint is flagged as "
        "drift, not forced to a side. [default: auto]",
    ),
    Opt(
        of="BisectRequest",
        field="fail_rates",
        flags=("--fail-rates",),
        metavar="BAD,GOOD",
        form="rates",
        group=SEARCH,
        help="With --confidence: the fail rates of buggy and clean commits when known (e.g. "
        "0.7,0.05); default: learned from the runs.",
    ),
    Opt(
        of="BisectRequest",
        field="rates_from",
        flags=("--rates-from",),
        metavar="RUN",
        group=SEARCH,
        help="With --confidence: lnrepro's own run records (`lnrepro run` of the same tests at "
        "--bad, and --good) whose pass/fail counts start the fail rates (a prior the search keeps "
        "learning from). Repeatable; ids, `last` or paths. Without it, records of the endpoints "
        "with the same tests are found by themselves. A --command bisect has no such records: "
        "give what you measured with --fail-rates.",
    ),
    Opt(
        of="BisectRequest",
        field="confirm",
        flags=("--no-confirm",),
        dest="no_confirm",
        negate=True,
        group=SEARCH,
        help="Do not test the endpoints first or re-test the culprit after.",
    ),
    Opt(
        of="BisectRequest",
        field="picks",
        flags=("--pick",),
        metavar="COMMIT",
        group=SEARCH,
        help="Cherry-pick onto every tested commit (e.g. the BugRepro tests' 16165972af). "
        "Repeatable.",
    ),
    Opt(
        of="BisectRequest",
        field="prebuilt",
        flags=("--prebuilt",),
        metavar="dir:TEMPLATE",
        toml="prebuilt",
        group=SEARCH,
        help="Ready build trees (what build_metal.sh leaves in build_<type>), one directory per "
        "commit: {sha}, {short} (10 characters) or {describe} in the path. Commits that have one "
        "are tested first, with no build; builds happen only inside the last interval. A tree "
        "that is missing or does not run decides nothing: that commit is built. Repeatable; "
        "without it, `prebuilt` in lnrepro.toml is used.",
    ),
    Opt(
        of="BisectRequest",
        field="patches",
        flags=("--patch",),
        group=SEARCH,
        help="Apply onto every tested commit. Repeatable.",
    ),
)
ORACLE_OPTS = (
    Opt(
        of="CommandOracleSpec",
        field="argv",
        flags=("--command",),
        dest="command",
        metavar="CMD",
        form="command",
        always=True,
        group=ORACLE,
        help="Decide each commit by running CMD at the worktree's root, as `git bisect run` "
        "does: exit 0 good, 125 skip (at once), 1-127 bad. Without it: build and run the gtests.",
    ),
    Opt(
        of="Policy",
        field="metric",
        flags=("--metric",),
        metavar="NAME",
        group=ORACLE,
        help="Judge by a metric instead of pass/fail, e.g. max_diff, or pcc for --pytest tests.",
    ),
    Opt(
        of="Policy",
        field="threshold",
        flags=("--threshold",),
        group=ORACLE,
        help="With --metric: bad when the worst value is on the wrong side of it: above it for a "
        "difference (max_diff), below it for a correlation (pcc: --threshold 0.999 means bad "
        "when the lowest PCC is under 0.999).",
    ),
    Opt(
        of="Policy",
        field="on_crash",
        flags=("--on-crash",),
        group=ORACLE,
        help="A crashed test (or a command killed by a signal): bad only when the buggy endpoint "
        "crashed too (match), always bad, or never (skip, as noise). [default: match]",
    ),
    Opt(
        of="Policy",
        field="on_hang",
        flags=("--on-hang",),
        group=ORACLE,
        help="A hung test (or a command past --timeout) counts as this; with bad, only the hang "
        "of the tests that hung at --bad does, and where the watcher log (--watcher) or "
        "tt-triage, run on each hang, places it, only a hang at the same place: seen there "
        "twice, or named with --hang-in. [default: skip]",
    ),
    Opt(
        of="Policy",
        field="hang_in",
        flags=("--hang-in",),
        metavar="TEXT",
        group=ORACLE,
        help="With --on-hang bad: the bug's hang is the one whose hang diagnosis (the watcher's "
        "or tt-triage's) names TEXT (a kernel file such as layernorm_fused_rm.cpp, a RISC, a "
        "waypoint, or a pattern such as CONSUMER_STARVED, as `lnrepro run` printed it); other "
        "hangs are noise.",
    ),
)
# --repeat and --timeout of a --command: the tests' options, set on the command's oracle
COMMAND_ORACLE_ALIASES = tuple(
    replace(o, of="CommandOracleSpec") for o in TEST_OPTS if o.field in ("repeat", "timeout_s")
)
JOB_OPTS = (
    Opt(
        of="BisectRequest",
        field="jobs",
        flags=("--jobs",),
        group=JOBS,
        help="Test this many commits at once (1 to 64), each in its own worktree and container. "
        "[default: 1]",
    ),
    Opt(
        of="BisectRequest",
        field="contexts",
        flags=("--docker-context",),
        metavar="NAME",
        group=JOBS,
        help="With --jobs: run job i on Docker context i (round robin), e.g. one per card host; "
        "'default' is this machine's engine, any other sees none of this machine's paths.",
    ),
    Opt(
        of="BisectRequest",
        field="devices",
        flags=("--device",),
        metavar="N",
        group=JOBS,
        help="With --jobs: bind job i to /dev/tenstorrent/N (one --device per job). "
        "[default: one host device per job when there are enough]",
    ),
)
BISECT_RECORD_DIR = Opt(
    of="BisectRequest",
    field="record_dir",
    flags=("--record-dir",),
    group=RECORDS,
    help="Where the bisect and its runs keep their records. [default: inside the repository's "
    ".git]",
)

BACKEND_OPTS = (BACKEND_KIND, *EMULATOR_OPTS, *LOCAL_OPTS, *TT_METAL_OPTS)
# per command, in the order ``--help`` lists them
RUN_OPTS = (*BACKEND_OPTS, *PYTHON_OPTS, *ENGINE_OPTS, *TEST_OPTS, RUN_RECORD_DIR)
BISECT_SEARCH = (*SEARCH_OPTS, *ORACLE_OPTS)
BISECT_OPTS = (
    *BISECT_SEARCH,
    *BACKEND_OPTS,
    *PYTHON_OPTS,
    *TEST_OPTS,
    *JOB_OPTS,
    BISECT_RECORD_DIR,
)
SHRINK_OPTS = (*BACKEND_OPTS, *ENGINE_OPTS)
COMMANDS: dict[str, tuple[Opt, ...]] = {"run": RUN_OPTS, "bisect": BISECT_OPTS}
# every field a command line sets: the entries, and the aliases that share their options
ALL = (*RUN_OPTS, *BISECT_OPTS, *COMMAND_ORACLE_ALIASES)
BY_FIELD = {(o.of, o.field): o for o in reversed(ALL)}  # a field's first entry wins
# fields no command line sets: derived, chosen per commit, filled in by validation, or the
# containers of other options
NOT_OPTIONS = {
    ("TtMetalSpec", "prebuilt"),  # a bisect's --prebuilt tree for one commit
    ("EmulatorSpec", "case"),  # $LNREPRO_CASE (shrink's rerun line), kept by validation
    ("CommandOracleSpec", "command"),  # argv as one line
    ("Policy", "higher_is_better"),  # follows from --metric
    ("RunRequest", "tests"),  # the Tests options
    ("RunOracleSpec", "backend"),  # the tt-metal options, on --repo
    ("RunOracleSpec", "tests"),  # the Tests options
    ("BisectRequest", "oracle"),  # --command, or the tt-metal and Tests options
    ("BisectRequest", "policy"),  # the "How each commit is judged" options
    ("BisectRequest", "paths"),  # the -- PATHS argument
    ("BisectRequest", "endpoint_runs"),  # counted from --rates-from by validation
}


def flag(owner: type, field: str) -> str:
    """The flag that sets ``owner.field``, as ``--help`` lists it."""
    return BY_FIELD[(owner.__name__, field)].flag


def tests_argv(t: TestSpec) -> list[str]:
    args = argv(t, TEST_OPTS)
    if t.pytest:  # the node ids name the tests: the filter does not apply
        i = args.index("--filter")
        del args[i : i + 2]
    return args


def backend_argv(b: BackendSpec) -> list[str]:
    """The options of ``lnrepro run`` that choose backend ``b``."""
    kind = [] if b.kind.value == "tt-metal" else [BACKEND_KIND.flag, b.kind.value]
    return [*kind, *argv(b, RUN_OPTS)]


def run_argv(req: RunRequest) -> list[str]:
    """``lnrepro run`` with the options that repeat ``req`` exactly (the record's ``rerun``)."""
    rest = written(RUN_RECORD_DIR, req.record_dir)
    run = ["lnrepro", "run", *backend_argv(req.backend), *tests_argv(req.tests), *rest]
    case = getattr(req.backend, "case", None)  # the emulator's
    return ["env", f"{CASE_ENV}={case}", *run] if isinstance(case, str) else run


def bisect_argv(req: BisectRequest) -> list[str]:
    """``lnrepro bisect`` with the options that start ``req`` again from scratch."""
    from lnrepro.model.requests import CommandOracleSpec, PythonSpec

    args = ["--repo", str(req.repo)]
    o = req.oracle
    for opt in BISECT_OPTS:
        if opt.of == "BisectRequest" and opt.field != "repo":
            args += written(opt, getattr(req, opt.field))
        elif opt.of == "Policy":
            args += written(opt, getattr(req.policy, opt.field))
        elif isinstance(o, CommandOracleSpec):
            if opt.of == "CommandOracleSpec":
                args += [*written(opt, o.argv), *argv(o, COMMAND_ORACLE_ALIASES)]
        elif opt is BACKEND_KIND and isinstance(o.backend, PythonSpec):
            args += [BACKEND_KIND.flag, o.backend.kind.value]
        elif opt.of == type(o.backend).__name__ and opt.field not in ("checkout", "project"):
            args += written(opt, getattr(o.backend, opt.field))  # the checkout is --repo
        elif opt.of == "TestSpec" and opt.field == "gtest_filter":
            args += tests_argv(o.tests)
    return ["lnrepro", "bisect", *args, *(["--", *req.paths] if req.paths else [])]
