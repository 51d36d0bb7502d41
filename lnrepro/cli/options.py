"""The backend options shared by every command that runs tests (``run`` now, ``bisect`` next).

:func:`backend_options` adds them to a click command and hands the command one
:class:`~lnrepro.run.backends.factory.BackendOptions`; :func:`lnrepro.run.backends.factory.make_backend`
turns that into a backend. The command itself never looks at them one by one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

_NAMES = (
    "backend", "kernel_era", "arch", "defect", "block_size", "l1_max_tiles", "fp32_stats", "data",
    "seed", "binary", "tt_metal",
    "runner", "profile", "image", "mount_set", "env", "require_device", "reset_cmd", "watcher",
)  # fmt: skip

_OPTIONS: list[Callable[[Any], Any]] = [
    click.option(
        "--backend",
        type=click.Choice(["emulator", "local", "tt-metal"]),
        default=None,
        help="emulator: the built-in numpy model (no card); local: a gtest binary already built "
        "here; tt-metal: build a checkout and run its tests. [default: tt-metal with --tt-metal, "
        "else emulator]",
    ),
    click.option(
        "--kernel-era",
        type=click.Choice(["2025-11", "2025-12", "fixed"]),
        default="2025-12",
        show_default=True,
        help="Emulator: which kernel, program factory and tests to model: 2025-11 (older factory), "
        "2025-12 (newer factory; the reports' main), fixed (after PR #53215).",
    ),
    click.option(
        "--arch",
        type=click.Choice(["wormhole_b0", "blackhole"]),
        default="wormhole_b0",
        show_default=True,
        help="Emulator: the card whose free L1 decides the path.",
    ),
    click.option(
        "--defect",
        default=None,
        help="Emulator: the era's defects (default), shipped, none, or a comma list of "
        "double-subtract, drop-xhat-blocks, drop-partial-tile (hypothesis), "
        "overwrite-dy-gamma-sum (refuted).",
    ),
    click.option(
        "--block-size",
        type=click.IntRange(min=1),
        help="Emulator: tiles per block on the block path [the factory's: 2/1 or 3].",
    ),
    click.option(
        "--l1-max-tiles",
        type=click.IntRange(min=0),
        help="Emulator: widest row (in tiles) on the fits-in-L1 path [the factory's byte budget].",
    ),
    click.option(
        "--fp32-stats",
        is_flag=True,
        help="Emulator: keep mean, rstd and x_hat in fp32 (not the factory's bf16 buffers).",
    ),
    click.option(
        "--data",
        type=click.Choice(["copy", "reference", "random"]),
        default="copy",
        show_default=True,
        help="Emulator: the test's std::mt19937(5489) copied (the same data every run), advancing "
        "(later test versions), or random numpy data from --seed.",
    ),
    click.option(
        "--seed",
        type=int,
        help="Emulator: random data from this seed (implies --data random; attempt k uses "
        "seed+k-1). With --data random and no seed: a random one, recorded.",
    ),
    click.option(
        "--binary",
        type=click.Path(path_type=Path),
        help="Local: the gtest binary, e.g. build/tt-train/tests/ttml_tests.",
    ),
    click.option(
        "--tt-metal",
        "tt_metal",
        type=click.Path(path_type=Path),
        metavar="DIR",
        help="A tt-metal checkout to build and test (selects --backend tt-metal). "
        "[default with --backend tt-metal: $TT_METAL_HOME]",
    ),
    click.option(
        "--runner",
        type=click.Choice(["docker", "local"]),
        default="docker",
        show_default=True,
        help="tt-metal: build and test in lnrepro's container, or on this host (or inside a container already).",
    ),
    click.option(
        "--profile",
        metavar="NAME",
        help="tt-metal: build profile: in-tree (./build_metal.sh) or standalone (tt-train's CMake), "
        "or one from lnrepro.toml. [default: in-tree]",
    ),
    click.option(
        "--image",
        metavar="IMAGE",
        help="tt-metal with --runner docker: the image to build and test in. "
        "[default: ghcr.io/tenstorrent/tt-metal/tt-metalium/ubuntu-22.04-dev-amd64:latest]",
    ),
    click.option(
        "--mount-set",
        type=click.Choice(["full", "tt-metal", "seed-broken"]),
        default="full",
        show_default=True,
        help="tt-metal with --runner docker: full is seed 001's working set (devices, /dev, /sys, "
        "hugepages); tt-metal is tt-metal's scripts' set (no /dev); seed-broken is --device only.",
    ),
    click.option(
        "--env", multiple=True, metavar="KEY=VALUE", help="tt-metal: extra environment. Repeatable."
    ),
    click.option(
        "--require-device",
        is_flag=True,
        help="tt-metal: fail at once when this host has no /dev/tenstorrent device.",
    ),
    click.option(
        "--reset-cmd",
        metavar="CMD",
        help="tt-metal: run on the host before every attempt, e.g. 'tt-smi -r 0'.",
    ),
    click.option(
        "--watcher",
        type=click.IntRange(min=1),
        metavar="SECONDS",
        help="tt-metal: set TT_METAL_WATCHER and keep the watcher log of a failed or hung attempt.",
    ),
]


def backend_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add the backend options; the command receives them as ``backend_opts``."""
    from click.core import ParameterSource

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from lnrepro.run.backends.factory import BackendOptions

        ctx = click.get_current_context()
        given = {
            n for n in _NAMES if ctx.get_parameter_source(n) not in (None, ParameterSource.DEFAULT)
        }
        values = {n: kwargs.pop(n) for n in _NAMES}
        values["env"] = tuple(values["env"])
        kwargs["backend_opts"] = BackendOptions(**values, given=given)
        return f(*args, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def _finite_timeout(_ctx: Any, _param: Any, value: float) -> float:
    import math

    if not math.isfinite(value):
        raise click.BadParameter("must be a finite number of seconds")
    return value


_RUN_OPTIONS: list[Callable[[Any], Any]] = [
    click.option(
        "--filter",
        "gtest_filter",
        default=None,
        metavar="PATTERN",
        help="gtest filter. [default: the BugRepro and NIGHTLY LayerNorm backward tests]",
    ),
    click.option(
        "--repeat",
        "-n",
        type=click.IntRange(1, 100000),
        default=1,
        show_default=True,
        help="Run the tests N times (per commit, when bisecting), each in a fresh process; "
        "pass rates come with 95% intervals.",
    ),
    click.option(
        "--timeout",
        "timeout_s",
        type=click.FloatRange(min=0.1),
        default=1800.0,
        show_default=True,
        callback=_finite_timeout,
        help="Seconds one attempt (or a bisect's --command) may run before its process group is "
        "killed.",
    ),
    click.option(
        "--record-dir",
        type=click.Path(path_type=Path),
        default=Path(".lnrepro/runs"),
        show_default=True,
        help="Each run writes a new directory here (logs, reports, record.json); nothing is "
        "overwritten.",
    ),
]


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """How the tests run: --filter, --repeat, --timeout, --record-dir (run and bisect alike)."""
    for option in reversed(_RUN_OPTIONS):
        f = option(f)
    return f
