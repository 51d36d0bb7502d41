"""A run request checked completely before anything starts: no record directory, build or
process for a request that is wrong. Returns the request made concrete (absolute paths, a
recorded seed for random data), which is what the record keeps and ``rerun`` repeats.

Usage errors (exit 2) are the request's own faults; a record directory that exists but cannot be
used is the environment's (exit 5).
"""

from __future__ import annotations

import math
import os
import re
import secrets
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import msgspec

from lnrepro.errors import EnvironmentProblem, UsageError
from lnrepro.model.metrics import validate_pattern
from lnrepro.model.requests import (
    ARCHES,
    CASE_ENV,
    DATA_KINDS,
    DEFAULT_FILTER,
    KERNEL_ERAS,
    MOUNT_SETS,
    RUNNERS,
    BackendSpec,
    BinarySpec,
    EmulatorSpec,
    PythonSpec,
    RunRequest,
    TestSpec,
    TtMetalSpec,
)
from lnrepro.options.table import flag

MAX_SEED = 2**32 - 1  # the emulator's generators take 32-bit seeds (attempt k uses seed + k - 1)
MAX_REPEAT = 100_000
MAX_TIMEOUT_S = 7 * 24 * 3600.0
MAX_BLOCK_SIZE = 1024
# a docker image reference: [host[:port]/]path[:tag][@digest], lower-case path components
IMAGE_REF = re.compile(
    r"^(?:[a-zA-Z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-][a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$"
)
ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Flag:
    """The flags these messages name, as the table of options spells them."""

    filter = flag(TestSpec, "gtest_filter")
    pytest = flag(TestSpec, "pytest")
    repeat = flag(TestSpec, "repeat")
    timeout = flag(TestSpec, "timeout_s")
    metric_pattern = flag(TestSpec, "metric_patterns")
    kernel_era = flag(EmulatorSpec, "kernel_era")
    arch = flag(EmulatorSpec, "arch")
    data = flag(EmulatorSpec, "data")
    defect = flag(EmulatorSpec, "defect")
    block_size = flag(EmulatorSpec, "block_size")
    l1_max_tiles = flag(EmulatorSpec, "l1_max_tiles")
    seed = flag(EmulatorSpec, "seed")
    runner = flag(TtMetalSpec, "runner")
    mount_set = flag(TtMetalSpec, "mount_set")
    image = flag(TtMetalSpec, "image")
    require_device = flag(TtMetalSpec, "require_device")
    docker_context = flag(TtMetalSpec, "docker_context")
    device = flag(TtMetalSpec, "devices")
    env = flag(TtMetalSpec, "env")
    reset_cmd = flag(TtMetalSpec, "reset_cmd")
    python = flag(TtMetalSpec, "python")
    watcher = flag(TtMetalSpec, "watcher_s")
    dispatch_timeout = flag(TtMetalSpec, "dispatch_timeout_s")
    tt_metal = flag(TtMetalSpec, "checkout")
    binary = flag(BinarySpec, "binary")
    backend = flag(RunRequest, "backend")
    repo = flag(PythonSpec, "project")
    record_dir = flag(RunRequest, "record_dir")


def finite(value: float, flag: str, lo: float, hi: float, unit: str = "") -> None:
    """``lo <= value <= hi`` and a real number (``nan`` and ``inf`` are never accepted)."""
    if not math.isfinite(value) or not lo <= value <= hi:
        raise UsageError(
            f"{flag} {value:g} is not a number from {lo:g} to {hi:g}{unit}",
            f"give {flag} a value in that range",
        )


def within(value: int, flag: str, lo: int, hi: int, fix: str = "give a count in range") -> None:
    """``lo <= value <= hi`` for a whole number (a count, a seed, a size)."""
    if not lo <= value <= hi:
        raise UsageError(f"{flag} {value} is not from {lo} to {hi}", fix)


def check_tests(t: TestSpec) -> None:
    if t.pytest:
        from lnrepro.pytests.argv import node_id_problem

        if t.gtest_filter != DEFAULT_FILTER:
            raise UsageError(
                f"{Flag.filter} and {Flag.pytest} do not go together",
                f"{Flag.filter} picks gtests, {Flag.pytest} names pytest tests: give one",
            )
        for nid in t.pytest:
            problem = node_id_problem(nid)
            if problem:
                raise UsageError(
                    f"{Flag.pytest}: {problem}",
                    "give node ids as pytest --collect-only -q prints them",
                )
    if not t.gtest_filter.strip():
        raise UsageError(
            f"{Flag.filter} is empty", f"give a gtest pattern, or leave {Flag.filter} out"
        )
    if any(c in t.gtest_filter for c in "\n\r\0"):
        raise UsageError(
            f"{Flag.filter} holds a line break or NUL", "give a one-line gtest pattern"
        )
    within(t.repeat, Flag.repeat, 1, MAX_REPEAT)
    finite(t.timeout_s, Flag.timeout, 0.1, MAX_TIMEOUT_S, " seconds")
    check_metric_patterns(t.metric_patterns)


def check_metric_patterns(patterns: tuple[str, ...]) -> None:
    """Each ``--metric-pattern`` a regular expression lnrepro can read metrics with."""
    for p in patterns:
        if problem := validate_pattern(p):
            raise UsageError(f"{Flag.metric_pattern} {p!r}: {problem}", "see the command's --help")


def _choice(value: str, allowed: tuple[str, ...], flag: str) -> None:
    if value not in allowed:
        raise UsageError(
            f"{flag} {value!r} is not one of {', '.join(allowed)}", f"choose one for {flag}"
        )


def check_emulator(s: EmulatorSpec, repeat: int = 1) -> EmulatorSpec:
    from lnrepro.emulator.defects import parse_defects

    _choice(s.kernel_era, KERNEL_ERAS, Flag.kernel_era)
    _choice(s.arch, ARCHES, Flag.arch)
    _choice(s.data, DATA_KINDS, Flag.data)
    if s.defect is not None:
        if not s.defect.strip():
            raise UsageError(
                f"{Flag.defect} is empty",
                f"use {Flag.defect} none for no defect ({Flag.kernel_era} fixed for the fix)",
            )
        try:
            parse_defects(s.defect)
        except ValueError as exc:
            raise UsageError(f"{Flag.defect}: {exc}", "see `lnrepro run --help`") from None
    if s.block_size is not None:
        fix = "give a block size in tiles in that range"
        within(s.block_size, Flag.block_size, 1, MAX_BLOCK_SIZE, fix)
    if s.l1_max_tiles is not None:
        within(
            s.l1_max_tiles, Flag.l1_max_tiles, 0, 1_000_000, "give a width in tiles in that range"
        )
    if s.seed is not None:
        if s.data != "random":
            raise UsageError(
                f"{Flag.seed} does not apply with {Flag.data} {s.data}",
                f"use {Flag.data} random, or drop {Flag.seed}",
            )
        top = MAX_SEED - (repeat - 1)
        fix = (
            f"give a seed in that range (attempt k uses seed + k - 1; the largest allowed is {top})"
        )
        within(s.seed, Flag.seed, 0, top, fix)
    if s.data == "random" and s.seed is None:
        # chosen now, so the record repeats it
        return msgspec.structs.replace(s, seed=secrets.randbelow(2**31))
    return s


def check_tt_metal(s: TtMetalSpec, config_dir: Path | None = None) -> TtMetalSpec:
    from lnrepro.run.backends.factory import make_backend

    _choice(s.runner, RUNNERS, Flag.runner)
    _choice(s.mount_set, MOUNT_SETS, Flag.mount_set)
    if s.runner == "local":
        given = [
            flag
            for flag, on in (
                (Flag.image, s.image),
                (Flag.mount_set, s.mount_set != "full"),
                (Flag.require_device, s.require_device),
                (Flag.docker_context, s.docker_context),
                (Flag.device, s.devices),
            )
            if on
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)} only apply with {Flag.runner} docker",
                f"add {Flag.runner} docker, or drop them",
            )
    check_image(s.image)
    for k in s.env:
        if not ENV_KEY.match(k):
            raise UsageError(
                f"{Flag.env} {k!r} is not a variable name", f"write it as {Flag.env} NAME=value"
            )
    if s.reset_cmd is not None and not s.reset_cmd:
        raise UsageError(
            f"{Flag.reset_cmd} is empty", f"give the command, e.g. {Flag.reset_cmd} 'tt-smi -r 0'"
        )
    if s.python is not None and (not s.python.strip() or any(c in s.python for c in "\n\r\0")):
        raise UsageError(
            f"{Flag.python} is empty or not one line",
            f"give the interpreter, e.g. {Flag.python} python_env/bin/python",
        )
    if s.watcher_s is not None and not 1 <= s.watcher_s <= 3600:
        raise UsageError(
            f"{Flag.watcher} {s.watcher_s} is not from 1 to 3600 seconds",
            "give a poll interval in range",
        )
    if s.dispatch_timeout_s is not None and not 0 <= s.dispatch_timeout_s <= 86400:
        raise UsageError(
            f"{Flag.dispatch_timeout} {s.dispatch_timeout_s:g} is not from 0 to 86400 seconds",
            "give tt-metal's operation timeout in seconds, e.g. 5 (0 turns it off)",
        )
    s = msgspec.structs.replace(s, checkout=s.checkout.expanduser().absolute())
    make_backend(s, config_dir)  # the profile, the image or base, the context, the devices
    return s


def check_image(image: str | None) -> None:
    """``--image`` names a Docker image (a reference Docker would take)."""
    if image is not None and not IMAGE_REF.match(image):
        raise UsageError(
            f"{Flag.image} {image!r} is not a valid image name", "use a name like repo/name:tag"
        )


def check_dispatch_timeout(b: BackendSpec, timeout_s: float) -> None:
    """tt-metal's own hang detection must fire before lnrepro's ``--timeout`` kills the attempt,
    or its triage never runs (0 is off: tt-metal reads the variable as a float, 0 = no timeout,
    tt_metal/llrt/rtoptions.cpp)."""
    if not isinstance(b, TtMetalSpec) or not b.dispatch_timeout_s:
        return
    if b.dispatch_timeout_s >= timeout_s:
        raise UsageError(
            f"{Flag.dispatch_timeout} {b.dispatch_timeout_s:g} is not below {Flag.timeout} "
            f"{timeout_s:g}: lnrepro would kill the attempt before tt-metal detects the hang",
            f"give a {Flag.dispatch_timeout} under {timeout_s:g} seconds, or a longer "
            f"{Flag.timeout}",
        )


def check_builds_tt_metal(
    profile: str | None, has_build_metal: Callable[[], bool], where: str, doing: str, fix: str
) -> None:
    """Unless a profile of lnrepro.toml brings its own commands, lnrepro builds tt-metal with
    build_metal.sh (both shipped profiles): a tree without it is not tt-metal, and would fail
    only at the build (in Docker: "the base image is missing"). Asked before any image or engine
    is looked at, by ``run --tt-metal`` (the directory) and ``bisect`` (the commit it builds)."""
    from lnrepro.model.checkout import BUILD_METAL
    from lnrepro.run.config import load_config

    if load_config(Path.cwd()).get_profile(profile).planned is None:
        return  # a profile of lnrepro.toml with its own commands
    if not has_build_metal():
        raise UsageError(
            f"{where} has no {BUILD_METAL}: it is not a tt-metal checkout, and {doing}", fix
        )


def check_binary(b: BinarySpec) -> None:
    """``--binary`` names an executable file. Used by ``lnrepro run`` except under git bisect
    run's protocol, where a binary missing at a commit is that commit's (a build that failed,
    exit 125 skip); the library keeps that meaning too (a BUILD_FAILED record)."""
    p = b.binary.expanduser()
    if not p.exists():
        raise UsageError(
            f"{Flag.binary} {b.binary} does not exist",
            "pass the path of a built gtest binary, e.g. build/tt-train/tests/ttml_tests",
        )
    if p.is_dir():
        raise UsageError(
            f"{Flag.binary} {b.binary} is a directory, not a program",
            f"pass the gtest binary inside it, e.g. {p / 'tt-train/tests/ttml_tests'}",
        )
    if not os.access(p, os.X_OK):
        raise UsageError(
            f"{Flag.binary} {b.binary} is not executable",
            f"chmod +x {p}, or pass another {Flag.binary}",
        )


def check_backend(b: BackendSpec, repeat: int = 1) -> BackendSpec:
    if isinstance(b, EmulatorSpec):
        return check_emulator(b, repeat)
    if isinstance(b, BinarySpec):
        return msgspec.structs.replace(b, binary=b.binary.expanduser().absolute())
    if isinstance(b, PythonSpec):
        return msgspec.structs.replace(b, project=b.project.expanduser().absolute())
    return check_tt_metal(b)


def check_record_dir(path: Path, flag: str = Flag.record_dir) -> Path:
    """Absolute, and usable if it exists: nothing is created here."""
    path = path.expanduser().absolute()
    probe = path
    try:
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
    except OSError as exc:  # a directory on the way that may not be entered
        raise EnvironmentProblem(
            f"cannot use the record directory {path}: {exc.strerror}",
            f"make it usable by you, or pass another {flag}",
        ) from None
    if not probe.is_dir():  # an existing path the directory cannot be made in: the environment's
        raise EnvironmentProblem(
            f"cannot use the record directory {path}: {probe} is a file",
            f"pass a directory to {flag}",
        )
    if not os.access(probe, os.W_OK | os.X_OK):
        raise EnvironmentProblem(
            f"{flag} {path}: {probe} is not writable",
            f"make {probe} writable, or pass another {flag}",
        )
    return path


def validate_run(req: RunRequest) -> RunRequest:
    """``req`` checked and made concrete, or the one-line error that says what to change."""
    check_tests(req.tests)
    if req.tests.pytest and not isinstance(req.backend, TtMetalSpec | PythonSpec):
        raise UsageError(
            f"{Flag.pytest} runs a Python project's or a tt-metal checkout's pytest tests",
            f"drop {Flag.backend} (the project is {Flag.repo} DIR, default .), or pass "
            f"{Flag.tt_metal} DIR",
        )
    if isinstance(req.backend, PythonSpec):
        from lnrepro.run.python_project import check_project

        check_project(req.backend, req.tests.pytest)
    b = req.backend
    if isinstance(b, TtMetalSpec) and b.checkout.expanduser().is_dir():  # else: check_tt_metal's
        from lnrepro.model.checkout import BUILD_METAL

        check_builds_tt_metal(
            b.profile,
            (b.checkout.expanduser() / BUILD_METAL).is_file,
            f"{Flag.tt_metal} {b.checkout}",
            "run builds tt-metal and runs its tests",
            f"pass {Flag.tt_metal} the directory of a tt-metal clone (where "
            f"{BUILD_METAL} is), or {Flag.backend} local {Flag.binary} PATH for a "
            "gtest binary built elsewhere",
        )
    backend = check_backend(req.backend, req.tests.repeat)
    check_dispatch_timeout(backend, req.tests.timeout_s)
    if isinstance(backend, EmulatorSpec) and CASE_ENV in os.environ and not backend.case:
        # the emulator's probe test reads the case from the environment: the request keeps it,
        # so the record says which case ran and its rerun line sets it again
        backend = msgspec.structs.replace(backend, case=os.environ[CASE_ENV])
    return replace(req, backend=backend, record_dir=check_record_dir(req.record_dir))
