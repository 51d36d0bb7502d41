"""Options shared by commands, and the one place command-line values become typed requests.

Every option that belongs to one backend defaults to ``None`` (or ``False`` for a flag), so "did
the user pass it?" is ``value is not None``, asked here and nowhere else. The documented default
applies where the request is carried out. Options carry a help *section* (``group``), which
:class:`Command` prints as click's own help sections.

Only click is imported here: ``lnrepro --help`` must stay free of numpy, docker and git.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import click

from lnrepro.cli import Context
from lnrepro.emulator.defects import DEFECT_NAMES
from lnrepro.errors import UsageError
from lnrepro.model.requests import (
    DEFAULT_FILTER,
    DEFAULT_RECORD_DIR,
    DEFAULT_TIMEOUT_S,
    BackendSpec,
    BinarySpec,
    DataKind,
    EmulatorSpec,
    TestSpec,
    TtMetalSpec,
)

F = Callable[..., Any]
# Paths are the request's to check (validate.py): click's own checks would make an unreadable
# record directory a usage error, and it is the environment's (exit 5).
PATHS = click.Path(path_type=Path, readable=False)


class Option(click.Option):
    """An option that knows its help section."""

    def __init__(self, *args: Any, group: str = "Options", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.group = group


SIMILAR = 0.75  # difflib ratio of two flags' names (without the dashes) to call one a typo


def _close(name: str, flags: list[str]) -> list[str]:
    import difflib

    by_bare = {f.lstrip("-"): f for f in flags if f.startswith("--")}
    return [by_bare[m] for m in difflib.get_close_matches(name.lstrip("-"), by_bare, 3, SIMILAR)]


def no_such_option(ctx: click.Context, name: str) -> click.NoSuchOption:
    """An unknown flag, with the flags it may be a typo of: this command's, or else another
    command's (``run --thershold``: --threshold is bisect's). click's own suggestion compares
    with the dashes and a loose cutoff, and offered --watcher."""
    own = _close(name, [o for p in ctx.command.params for o in p.opts])
    message = f"no such option {name}"
    if own:
        message += f"; did you mean {' or '.join(own)}?"
    parent = ctx.parent
    if not own and parent is not None and isinstance(parent.command, click.Group):
        group = parent.command
        for other in group.list_commands(parent):
            cmd = group.get_command(parent, other)
            near = _close(name, [o for p in cmd.params for o in p.opts]) if cmd else []
            if near and other != ctx.info_name:
                message += f" ({near[0]} is an option of `{parent.info_name} {other}`)"
                break
    return click.NoSuchOption(name, message, ctx=ctx)


class Command(click.Command):
    """A command whose ``--help`` lists its options in sections (click's HelpFormatter.section)
    and whose unknown-option error suggests only near misses. Its help breaks lines at spaces
    only (:class:`lnrepro.cli.HelpFormatter`)."""

    context_class = Context

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            raise no_such_option(ctx, exc.option_name) from None
        except click.UsageError as exc:  # the parser's own (`-n` with no value) know no command
            if exc.ctx is None:
                exc.ctx = ctx  # so the fix names `lnrepro run --help`, not `lnrepro --help`
            raise

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        sections: dict[str, list[tuple[str, str]]] = {}
        for p in self.get_params(ctx):
            if isinstance(p, click.Argument):  # in "Positional arguments" (format_arguments)
                continue
            rec = p.get_help_record(ctx)
            if rec is not None:
                sections.setdefault(getattr(p, "group", "Options"), []).append(rec)
        for name, rows in sections.items():
            with formatter.section(name):
                formatter.write_dl(rows)


def option(*decls: str, group: str = "Options", **kw: Any) -> Callable[[F], F]:
    return click.option(*decls, cls=Option, group=group, **kw)


def apply(options: list[Callable[[F], F]]) -> Callable[[F], F]:
    def deco(f: F) -> F:
        for o in reversed(options):
            f = o(f)
        return f

    return deco


def flag_of(name: str, ctx: click.Context | None = None) -> str:
    """The flag ``--help`` shows for the running command's parameter ``name`` (its dest name, or
    a long flag it has), asked of click (``Parameter.opts``), so an error can never spell a flag
    the command does not have. A positional argument is named by its metavar."""
    ctx = ctx or click.get_current_context()
    params = ctx.command.params
    p = next((p for p in params if p.name == name), None) or next(
        (p for p in params if f"--{name.replace('_', '-')}" in p.opts), None
    )
    if p is None:  # a dest name that drifted from the options: a bug, found by the tests
        raise LookupError(f"{ctx.command_path} has no parameter {name!r}")
    if isinstance(p, click.Argument):
        return p.make_metavar(ctx).strip("[].")
    longs = [o for o in p.opts if o.startswith("--")]
    return (longs or list(p.opts))[0]


def exclusive(**flags: object) -> None:
    """At most one of these parameters (by dest name) was given."""
    given = [flag_of(k) for k, v in flags.items() if v]
    if len(given) > 1:
        raise UsageError(f"{' and '.join(given)} do not go together", "pick one")


def given(ctx: click.Context, name: str) -> bool:
    """The user typed this option (or set its environment variable): not a default."""
    src = ctx.get_parameter_source(name)
    return src is not None and src.name in ("COMMANDLINE", "ENVIRONMENT")


def tt_metal_home() -> Path | None:
    """``$TT_METAL_HOME``, the one way lnrepro reads it (empty counts as unset)."""
    v = os.environ.get("TT_METAL_HOME")
    return Path(v) if v else None


# ---------------------------------------------------------------------------------- backend
EMULATOR = (
    "kernel_era",
    "arch",
    "defect",
    "block_size",
    "l1_max_tiles",
    "fp32_stats",
    "data",
    "seed",
)
LOCAL = ("binary",)
TT_METAL = (
    "tt_metal",
    "runner",
    "profile",
    "image",
    "mount_set",
    "env",
    "require_device",
    "reset_cmd",
    "watcher",
    "docker_context",
    "device_nodes",
    "python",
    "no_triage",
    "dispatch_timeout",
)
BACKEND_NAMES = ("backend", *EMULATOR, *LOCAL, *TT_METAL)

BACKEND_OPTIONS: list[Callable[[F], F]] = [
    option(
        "--backend",
        type=click.Choice(["emulator", "local", "tt-metal"]),
        group="Backend",
        help="emulator: the built-in numpy model (no card); local: a gtest binary already built "
        "here; tt-metal: build a checkout and run its tests. [default: tt-metal with --tt-metal, "
        "else emulator]",
    ),
    option(
        "--kernel-era",
        type=click.Choice(["2025-11", "2025-12", "fixed"]),
        group="Emulator",
        help="Which kernel, program factory and tests to model: 2025-11 (older factory), 2025-12 "
        "(newer factory; the reports' main), fixed (after PR #53215). [default: 2025-12]",
    ),
    option(
        "--arch",
        type=click.Choice(["wormhole_b0", "blackhole"]),
        group="Emulator",
        help="The card whose free L1 decides the path. [default: wormhole_b0]",
    ),
    option(
        "--defect",
        group="Emulator",
        help=f"The era's defects (default), {DEFECT_NAMES}.",
    ),
    option(
        "--block-size",
        type=int,
        group="Emulator",
        help="Tiles per block on the block path (1 to 1024). [default: the factory's: 2/1 or 3]",
    ),
    option(
        "--l1-max-tiles",
        type=int,
        group="Emulator",
        help="Widest row (in tiles) on the fits-in-L1 path. [default: the factory's byte budget]",
    ),
    option(
        "--fp32-stats",
        is_flag=True,
        default=False,
        group="Emulator",
        help="Keep mean, rstd and x_hat in fp32 (not the factory's bf16 buffers).",
    ),
    option(
        "--data",
        type=click.Choice(["copy", "reference", "random"]),
        group="Emulator",
        help="The test's std::mt19937(5489) copied (the same data every run), advancing (later "
        "test versions), or random numpy data from --seed. [default: copy]",
    ),
    option(
        "--seed",
        type=int,
        group="Emulator",
        help="Random data from this seed, 0 to 2^32-1 (implies --data random; attempt k uses "
        "seed+k-1). With --data random and no seed: a random one, recorded.",
    ),
    option(
        "--binary",
        type=PATHS,
        group="Local binary",
        help="The gtest binary, e.g. build/tt-train/tests/ttml_tests.",
    ),
    option(
        "--tt-metal",
        "tt_metal",
        type=PATHS,
        metavar="DIR",
        group="tt-metal",
        help="A tt-metal checkout to build and test (selects --backend tt-metal). "
        "[default with --backend tt-metal: $TT_METAL_HOME]",
    ),
    option(
        "--runner",
        type=click.Choice(["docker", "local"]),
        group="tt-metal",
        help="Build and test in lnrepro's container, or on this host (or inside a container "
        "already). [default: docker]",
    ),
    option(
        "--profile",
        metavar="NAME",
        group="tt-metal",
        help="Build profile: in-tree (./build_metal.sh) or standalone (tt-train's CMake), or one "
        "from lnrepro.toml. [default: in-tree]",
    ),
    option(
        "--image",
        metavar="IMAGE",
        group="tt-metal",
        help="With --runner docker: the image to build and test in. [default: lnrepro's image "
        "on ghcr.io/tenstorrent/tt-metal/tt-metalium/ubuntu-22.04-dev-amd64:latest]",
    ),
    option(
        "--mount-set",
        type=click.Choice(["full", "tt-metal", "seed-broken"]),
        group="tt-metal",
        help="With --runner docker: full is seed 001's working set (devices, /dev, /sys, "
        "hugepages); tt-metal is tt-metal's scripts' set; seed-broken is --device only. "
        "[default: full]",
    ),
    option(
        "--env",
        multiple=True,
        metavar="KEY=VALUE",
        group="tt-metal",
        help="Extra environment for the build and the tests. Repeatable.",
    ),
    option(
        "--require-device",
        is_flag=True,
        default=False,
        group="tt-metal",
        help="Fail at once when this host has no /dev/tenstorrent device.",
    ),
    option(
        "--reset-cmd",
        metavar="CMD",
        group="tt-metal",
        help="Run on the host before every attempt, e.g. 'tt-smi -r 0'. An attempt whose reset "
        "fails is not run: it is an environment error.",
    ),
    option(
        "--watcher",
        type=int,
        metavar="SECONDS",
        group="tt-metal",
        help="Set TT_METAL_WATCHER and keep the watcher log of a failed or hung attempt; a hung "
        "attempt's log is read into a diagnosis (which kernel waits on what, on which cores).",
    ),
    option(
        "--no-triage",
        is_flag=True,
        group="tt-metal",
        help="Do not run the checkout's tools/tt-triage.py against the still-hung device when an "
        "attempt times out (by default it runs, with its own time limit, before the kill; its "
        "output is kept beside the attempt's log and read into the hang's diagnosis).",
    ),
    option(
        "--dispatch-timeout",
        type=float,
        metavar="SECONDS",
        group="tt-metal",
        help="Set TT_METAL_OPERATION_TIMEOUT_SECONDS (and, when the checkout has tt-triage, "
        "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE to it): tt-metal detects the hang itself, "
        "runs triage and raises; the attempt is a HANG with triage's diagnosis. Keep it below "
        "--timeout.",
    ),
    option(
        "--python",
        metavar="PATH",
        group="tt-metal",
        help="The Python that runs --pytest tests. [default: the checkout's python_env/bin/python "
        "with --runner local if it exists, else python3]",
    ),
]


# one engine and its devices for a run; a bisect has its own, one per job
ENGINE_OPTIONS: list[Callable[[F], F]] = [
    option(
        "--docker-context",
        "docker_context",
        metavar="NAME",
        group="tt-metal",
        help="With --runner docker: the Docker context (engine) to build and test on, e.g. a card "
        "host's (tcp:// or ssh://); sources, image and records go through its API.",
    ),
    option(
        "--device",
        "device_nodes",
        multiple=True,
        metavar="N",
        group="tt-metal",
        help="With --runner docker: only these /dev/tenstorrent/N. Repeatable. [default: every device]",
    ),
]


def backend_options(f: F) -> F:
    return apply([*BACKEND_OPTIONS, *ENGINE_OPTIONS])(f)


def bisect_backend_options(f: F) -> F:
    """The backend options less the engine's: a bisect has --docker-context and --device per job."""
    return apply(BACKEND_OPTIONS)(f)


def _misplaced(chosen: str, values: dict[str, Any]) -> None:
    owners = {"emulator": EMULATOR, "local": LOCAL, "tt-metal": TT_METAL}
    for other, names in owners.items():
        if other == chosen:
            continue
        for name in names:
            v = values.get(name)
            if v is not None and v is not False and v != ():
                f = flag_of(name)
                raise UsageError(
                    f"{f} only applies with --backend {other}",
                    f"add --backend {other}, or drop {f}",
                )


def split_command(text: str, flag: str) -> tuple[str, ...]:
    """A command given as one string, split as a shell would; a usage error when it cannot be."""
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"{flag} {text!r} cannot be split: {exc}", "balance the quotes") from None
    if not argv:
        raise UsageError(f"{flag} is empty", f"give the command for {flag}")
    return argv


def backend_spec(values: dict[str, Any], *, default_checkout: Path | None = None) -> BackendSpec:
    """The backend the options ask for, or a usage error naming the misplaced option."""
    backend = values.get("backend")
    chosen = backend or (
        "tt-metal" if values.get("tt_metal") is not None or default_checkout else "emulator"
    )
    _misplaced(chosen, values)
    if chosen == "emulator":
        data = values.get("data") or ("random" if values.get("seed") is not None else "copy")
        return EmulatorSpec(
            kernel_era=values.get("kernel_era") or "2025-12",
            arch=values.get("arch") or "wormhole_b0",
            defect=values.get("defect"),
            block_size=values.get("block_size"),
            l1_max_tiles=values.get("l1_max_tiles"),
            fp32_stats=bool(values.get("fp32_stats")),
            data=cast(DataKind, data),
            seed=values.get("seed"),
        )
    if chosen == "local":
        if values.get("binary") is None:
            raise UsageError(
                "--backend local needs --binary PATH",
                "pass the gtest binary, e.g. build/tt-train/tests/ttml_tests",
            )
        return BinarySpec(binary=values["binary"])
    checkout = values.get("tt_metal") or default_checkout or tt_metal_home()
    if checkout is None:
        raise UsageError("no tt-metal checkout given", "pass --tt-metal DIR or set TT_METAL_HOME")
    env: dict[str, str] = {}  # a name given twice: the last value, as a shell would
    for item in values.get("env") or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--env {item!r} is not KEY=VALUE", "write it as --env NAME=value")
        env.pop(key, None)
        env[key] = value
    reset = values.get("reset_cmd")
    return TtMetalSpec(
        checkout=Path(checkout),
        runner=values.get("runner") or "docker",
        profile=values.get("profile"),
        image=values.get("image"),
        mount_set=values.get("mount_set") or "full",
        env=env,
        require_device=bool(values.get("require_device")),
        reset_cmd=split_command(reset, "--reset-cmd") if reset is not None else None,
        watcher_s=values.get("watcher"),
        docker_context=values.get("docker_context"),
        devices=tuple(values["device_nodes"]) if values.get("device_nodes") else None,
        python=values.get("python"),
        triage=not values.get("no_triage"),
        dispatch_timeout_s=values.get("dispatch_timeout"),
    )


def pop_backend(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {n: kwargs.pop(n) for n in BACKEND_NAMES if n in kwargs}


# ---------------------------------------------------------------------------------- tests
TEST_OPTIONS: list[Callable[[F], F]] = [
    option(
        "--filter",
        "gtest_filter",
        metavar="PATTERN",
        group="Tests",
        help=f"gtest filter. [default: the BugRepro and NIGHTLY LayerNorm backward tests, {DEFAULT_FILTER}]",
    ),
    option(
        "--pytest",
        "pytest_nodeids",
        multiple=True,
        metavar="NODEID",
        group="Tests",
        help="Run these pytest tests of the checkout (node ids relative to it, e.g. "
        "tests/ttnn/unit_tests/operations/test_layer_norm.py::test_layer_norm) instead of the gtest "
        "binary; results come from pytest's JUnit XML, PCC lines become the metric pcc. Repeatable.",
    ),
    option(
        "--repeat",
        "-n",
        type=int,
        group="Tests",
        help="Run the tests N times (per commit, when bisecting), each in a fresh process; pass "
        "rates come with 95% intervals. [default: 1]",
    ),
    option(
        "--timeout",
        "timeout_s",
        type=float,
        group="Tests",
        help="Seconds one attempt (or a bisect's --command) may run before its process group is "
        f"killed. [default: {DEFAULT_TIMEOUT_S:g}]",
    ),
    option(
        "--metric-pattern",
        "metric_patterns",
        multiple=True,
        metavar="REGEX",
        group="Tests",
        help="Extra metric regex with named groups: (?P<tensor>...) and one per metric. Repeatable.",
    ),
]
TEST_NAMES = ("gtest_filter", "pytest_nodeids", "repeat", "timeout_s", "metric_patterns")


def test_options(f: F) -> F:
    return apply(TEST_OPTIONS)(f)


def test_spec(values: dict[str, Any]) -> TestSpec:
    pytest = tuple(values.get("pytest_nodeids") or ())
    if pytest and values.get("gtest_filter") is not None:
        raise UsageError(
            "--filter and --pytest do not go together",
            "--filter picks gtests, --pytest names pytest tests: give one",
        )
    return TestSpec(
        gtest_filter=(
            DEFAULT_FILTER if values.get("gtest_filter") is None else values["gtest_filter"]
        ),
        repeat=1 if values.get("repeat") is None else values["repeat"],
        timeout_s=DEFAULT_TIMEOUT_S if values.get("timeout_s") is None else values["timeout_s"],
        metric_patterns=tuple(values.get("metric_patterns") or ()),
        pytest=pytest,
    )


def pop_tests(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {n: kwargs.pop(n) for n in TEST_NAMES}


def record_dir_option(
    help_text: str, *, default: Path | None = DEFAULT_RECORD_DIR
) -> Callable[[F], F]:
    return option(
        "--record-dir",
        type=PATHS,
        default=default,
        group="Records",
        show_default=default is not None,
        help=help_text,
    )


def json_flag(what: str) -> Callable[[F], F]:
    return option("--json", "as_json", is_flag=True, group="Output", help=f"Print {what} as JSON.")


def wraps(f: F) -> Callable[[F], F]:
    return functools.wraps(f)
