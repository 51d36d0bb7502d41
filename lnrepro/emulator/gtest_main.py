"""``ttml_tests`` in all but language: the kernel emulator behind googletest's command line.

Accepts the gtest flags that matter (``--gtest_filter``, ``--gtest_list_tests``,
``--gtest_repeat``, ``--gtest_random_seed``, ``--gtest_shuffle``, ``--gtest_output``,
``--gtest_brief``, ``--gtest_color``, ``--gtest_print_time``) and the model's own
(``--emu_kernel``, ``--emu_arch``, ``--emu_defect``, ``--emu_block_size``,
``--emu_l1_max_tiles``, ``--emu_bf16_stats``, ``--emu_data``, ``--emu_seed``; also from
``LNREPRO_EMU_KERNEL`` etc.). Console output, JSON/XML reports and the exit status follow
googletest 1.12 (the version Debian ships), so any gtest tooling reads them as it would the real
binary's. Data is the test's own (a copied ``std::mt19937(5489)``: the same every run) unless
``--emu_data=reference`` (the later, advancing generator) or ``--emu_data=random`` (numpy data
from ``--emu_seed``, printed so any run can be repeated).
"""

from __future__ import annotations

import json
import os
import random
import secrets
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TextIO, TypeVar

from lnrepro.emulator.catalogue import (
    CASES,
    SUITE,
    TEST_FILE,
    Case,
    Data,
    DataSource,
    IterationOutcome,
    Iterations,
    describe,
    failure_text,
    tolerances,
)
from lnrepro.emulator.cbmodel import gtest_front as front
from lnrepro.emulator.defects import ERA_DEFECTS, Arch, Era, defects_label, parse_defects
from lnrepro.emulator.kernel import KernelConfig

E = TypeVar("E", bound=Enum)

USAGE = """\
lnrepro emulator of tt-train's ttml_tests (LayerNorm backward only).

googletest flags:
  --gtest_list_tests            list the tests instead of running them
  --gtest_filter=POS[-NEG]      ':'-separated wildcard patterns (* and ?)
  --gtest_repeat=N              run the tests N times (-1: forever)
  --gtest_shuffle               shuffle test order each iteration
  --gtest_random_seed=N         seed for --gtest_shuffle (0: from the clock)
  --gtest_output=json:PATH|xml:PATH   write a report (rewritten each iteration)
  --gtest_brief=1               print only failures
  --gtest_color=yes|no|auto     colour the markers
  --gtest_print_time=0|1        print each test's time (default 1)

emulator flags (or env LNREPRO_EMU_KERNEL, _ARCH, _DEFECT, _BLOCK_SIZE, _L1_MAX_TILES, ...):
  --emu_kernel=ERA              2025-11 (older factory), 2025-12 (default), fixed (after #53215)
  --emu_arch=ARCH               wormhole_b0 (default, or $ARCH_NAME) or blackhole: free L1
  --emu_defect=D                the era's (default), shipped, none, or a comma list of
                                double-subtract, drop-xhat-blocks, drop-partial-tile,
                                overwrite-dy-gamma-sum
  --emu_block_size=N            tiles per block on the block path (default: the factory's)
  --emu_l1_max_tiles=N          rows of up to N tiles take the fits-in-L1 path (default: the
                                factory's byte budget against the arch's free L1)
  --emu_bf16_stats=0|1          mean, rstd and x_hat in bf16 buffers (default 1, the factory's)
  --emu_data=copy|reference|random   the test's generator copied (default), advancing, or numpy
  --emu_seed=N                  with --emu_data=random: the seed (default: random, printed)
  --emu_dump=PATH               append what the model computed, as JSON lines
"""


@dataclass
class Options:
    list_tests: bool = False
    gtest_filter: str = "*"
    repeat: int = 1
    shuffle: bool = False
    random_seed: int = 0
    output: str | None = None
    brief: bool = False
    color: str = "auto"
    print_time: bool = True
    kernel: KernelConfig = field(default_factory=KernelConfig)
    data: Data = Data.COPY
    seed: int | None = None
    dump: str | None = None  # JSON lines of what the model computed, for round-trip tests
    shard: tuple[int, int] | None = None  # (index, total) from GTEST_SHARD_INDEX/_TOTAL_SHARDS
    shard_status_file: str | None = None
    also_run_disabled: bool = False


def _bool(value: str) -> bool:
    return value.lower() not in ("0", "f", "false", "no", "n")


def _env_int(env: dict[str, str], name: str, default: int, out: TextIO) -> int:
    try:
        return int(env[name])
    except KeyError:
        return default
    except ValueError:
        out.write(
            f"WARNING: Environment variable {name} is expected to be a 32-bit integer, "
            f'but actually has value "{env[name]}".\n'
        )
        return default


def _from_env(opts: Options, env: dict[str, str], out: TextIO) -> None:
    """googletest's environment variables: each sets the default its flag then overrides.

    Read from googletest 1.12.1 (``gtest.cc``: ``BoolFromGTestEnv``, ``Int32FromGTestEnv``,
    ``ShouldShard``), as Debian ships it; checked against its binaries in tests/emulator.
    """
    if "GTEST_FILTER" in env:
        opts.gtest_filter = env["GTEST_FILTER"]
    if "GTEST_OUTPUT" in env:
        opts.output = env["GTEST_OUTPUT"]
    opts.repeat = _env_int(env, "GTEST_REPEAT", opts.repeat, out)
    opts.random_seed = _env_int(env, "GTEST_RANDOM_SEED", opts.random_seed, out)
    for name, attr in (
        ("GTEST_SHUFFLE", "shuffle"),
        ("GTEST_BRIEF", "brief"),
        ("GTEST_PRINT_TIME", "print_time"),
        ("GTEST_ALSO_RUN_DISABLED_TESTS", "also_run_disabled"),
    ):
        if name in env:
            setattr(opts, attr, env[name] != "0")  # googletest: any value but "0" is true
    if "GTEST_COLOR" in env:
        opts.color = env["GTEST_COLOR"].lower()
    opts.shard_status_file = env.get("GTEST_SHARD_STATUS_FILE")
    total, index = env.get("GTEST_TOTAL_SHARDS"), env.get("GTEST_SHARD_INDEX")
    if total is None and index is None:
        return
    if total is None or index is None:
        have, missing = (
            ("GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS")
            if total is None
            else ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX")
        )
        raise front.ExitNow(
            f"Invalid environment variables: you have {have} = {env[have]}, but have left {missing} unset."
        )
    try:
        t, i = int(total), int(index)
    except ValueError:
        bad = "GTEST_TOTAL_SHARDS" if not total.lstrip("-").isdigit() else "GTEST_SHARD_INDEX"
        raise front.ExitNow(
            f"WARNING: The value of environment variable {bad} is expected to be a 32-bit "
            f'integer, but actually has value "{env[bad]}".'
        ) from None
    if not 0 <= i < t:
        raise front.ExitNow(
            "Invalid environment variables: we require 0 <= GTEST_SHARD_INDEX < GTEST_TOTAL_SHARDS, "
            f"but you have GTEST_SHARD_INDEX={i}, GTEST_TOTAL_SHARDS={t}."
        )
    if t > 1:
        opts.shard = (i, t)


# the Options field each flag sets: a bool flag bare or =VALUE, a text flag =VALUE
_BOOL_FLAGS = {
    "gtest_list_tests": "list_tests",
    "gtest_shuffle": "shuffle",
    "gtest_brief": "brief",
    "gtest_print_time": "print_time",
}
_TEXT_FLAGS = {"gtest_filter": "gtest_filter", "gtest_output": "output", "emu_dump": "dump"}


def parse_args(argv: Sequence[str], env: dict[str, str], out: TextIO | None = None) -> Options:
    opts = Options()
    _from_env(opts, env, out or sys.stdout)
    model: dict[str, str] = {
        k[len("LNREPRO_EMU_") :].lower(): v for k, v in env.items() if k.startswith("LNREPRO_EMU_")
    }
    for arg in argv:
        if arg in ("-h", "--help", "-?", "/?"):
            raise front.Help
        if not arg.startswith("--gtest_") and not arg.startswith("--emu_"):
            continue  # gtest leaves unknown arguments to the program; so do we
        name, has_value, value = arg[2:].partition("=")
        try:
            if name in _BOOL_FLAGS:
                setattr(opts, _BOOL_FLAGS[name], not has_value or _bool(value))
            elif name in ("gtest_repeat", "gtest_random_seed"):
                setattr(opts, name[len("gtest_") :], int(value))
            elif name in _TEXT_FLAGS:
                setattr(opts, _TEXT_FLAGS[name], value)
            elif name == "gtest_color":
                opts.color = value.lower()
            elif name.startswith("emu_"):
                model[name[4:]] = value
            # other --gtest_ flags are accepted and ignored, as a binary that does not use them
        except ValueError:
            raise front.FlagError(f"bad value for --{name}: {value!r}") from None
    try:
        era = _choice(Era, model.get("kernel", Era.DEC_2025.value), "--emu_kernel")
        arch = _choice(
            Arch, model.get("arch", env.get("ARCH_NAME") or Arch.WORMHOLE_B0.value), "--emu_arch"
        )
        defect = model.get("defect")
        opts.kernel = KernelConfig(
            defects=ERA_DEFECTS[era] if defect in (None, "") else parse_defects(defect),
            era=era,
            arch=arch,
            block_size=int(model["block_size"]) if model.get("block_size") else None,
            l1_max_tiles=int(model["l1_max_tiles"]) if model.get("l1_max_tiles") else None,
            bf16_stats=_bool(model.get("bf16_stats", "1")),
        )
        opts.data = _choice(Data, model.get("data", Data.COPY.value), "--emu_data")
        if "seed" in model:
            opts.seed = int(model["seed"])
    except ValueError as exc:
        raise front.FlagError(str(exc)) from None
    k = opts.kernel
    if (k.block_size is not None and k.block_size < 1) or (
        k.l1_max_tiles is not None and k.l1_max_tiles < 0
    ):
        raise front.FlagError("--emu_block_size must be >= 1 and --emu_l1_max_tiles >= 0")
    return opts


def _choice(enum: type[E], value: str, flag: str) -> E:
    try:
        return enum(value)
    except ValueError:
        raise ValueError(
            f"{flag}: {value!r} is not one of {', '.join(e.value for e in enum)}"
        ) from None


def logger(printer: front.Printer, text: str) -> None:
    front.metal_log(printer.out, "info", "Emulator", text, "gtest_main.py:0")


def dump(opts: Options, iteration: int, case: Case, outcome: IterationOutcome) -> None:
    if not opts.dump:
        return
    rec = {
        "iteration": iteration,
        "test": case.full_name,
        "ok": outcome.ok,
        "tensors": {
            t.tensor: {"ok": t.ok, "max_diff": t.max_diff, "mean_diff": t.mean_diff}
            for t in outcome.tensors
        },
    }
    with Path(opts.dump).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")


def run_case(
    case: Case, opts: Options, iterations: Iterations, printer: front.Printer, iteration: int
) -> front.Reported:
    start = time.time()
    t0 = time.perf_counter()
    logger(
        printer,
        f"layernorm_bw {describe(case, opts.kernel)} defects={defects_label(opts.kernel.defects)} "
        f"kernel={opts.kernel.era.value} arch={opts.kernel.arch.value}",
    )
    failures: list[tuple[str, int, str]] = []
    worst: dict[str, tuple[float, float]] = {}  # tensor -> (max_diff, share of tolerance used)
    for _ in range(case.iterations):
        outcome = iterations(case, opts.kernel)
        dump(opts, iteration, case, outcome)
        for t in outcome.tensors:
            old = worst.get(t.tensor, (-1.0, -1.0))
            worst[t.tensor] = (_worse(old[0], t.max_diff), _worse(old[1], t.used))
        stdout, failed = failure_text(case, outcome, opts.kernel.era)
        for ln in stdout:  # the test's own prints, before its assertions
            printer.out.write(ln + "\n")
        for line, message in failed:
            printer.out.write(f"{TEST_FILE}:{line}: Failure\n{message}\n")
            failures.append((TEST_FILE, line, message))
    ms = int((time.perf_counter() - t0) * 1000)
    return front.Reported(
        case.name,
        TEST_FILE,
        case.line,
        start,
        ms,
        failures,
        properties(case, opts.kernel.era, worst),
    )


def _worse(a: float, b: float) -> float:
    return b if b != b or a != a or b > a else a  # NaN is the worst


def properties(case: Case, era: Era, worst: dict[str, tuple[float, float]]) -> dict[str, str]:
    """What the test records with ``RecordProperty`` (the line the real test lacks, e.g.
    ``RecordProperty("dx.max_diff", max_diff);``): per tensor its worst ``max_diff`` over the
    iterations, its tolerance, and the share of the tolerance used
    (max |metal - ref| / (atol + rtol·|ref|); the test fails above 1). Kept for passing tests
    too, in both report formats."""
    tol = tolerances(case, era)
    out: dict[str, str] = {}
    for tensor, (max_diff, used) in worst.items():
        rtol, atol, _ = tol[tensor]
        out[f"{tensor}.max_diff"] = f"{max_diff:.6g}"
        out[f"{tensor}.rtol"] = f"{rtol:g}"
        out[f"{tensor}.atol"] = f"{atol:g}"
        out[f"{tensor}.used"] = f"{used:.6g}"
    return out


def shard_of(cases: Sequence[Case], shard: tuple[int, int] | None) -> list[Case]:
    """googletest's sharding: the tests that pass the filter, numbered 0, 1, 2… in order; test k
    runs on shard k % total (``UnitTestImpl::FilterTests``), before any shuffling."""
    if shard is None:
        return list(cases)
    index, total = shard
    return [c for k, c in enumerate(cases) if k % total == index]


def _seed(raw: int) -> int:
    """googletest's seed: 0 means the clock; then (raw - 1) % 99999 + 1 (``GetRandomSeedFromFlag``)."""
    if raw == 0:
        raw = int(time.time() * 1000)
    return (raw - 1) % 99999 + 1


def run(opts: Options, out: TextIO) -> int:
    if opts.shard_status_file:  # "this binary supports sharding", before anything else
        try:
            Path(opts.shard_status_file).write_bytes(b"")
        except OSError:
            out.write(
                f'Could not write to the test shard status file "{opts.shard_status_file}" '
                "specified by the GTEST_SHARD_STATUS_FILE environment variable.\n"
            )
            return 1
    from lnrepro.emulator.probe import probe_cases

    cases = front.select(
        [*CASES, *probe_cases(os.environ, sys.stderr)], opts.gtest_filter, lambda c: c.full_name
    )
    if opts.list_tests:  # never sharded
        front.list_tests(out, SUITE, [c.name for c in cases])
        return 0
    color = front.use_color(opts.color, out, os.environ.get("TERM"))
    printer = front.Printer(out, color, opts.brief, opts.print_time)
    data_seed = opts.seed if opts.seed is not None else secrets.randbits(32)
    iterations = Iterations(DataSource(opts.data, data_seed))
    any_failed = False
    iteration = 0
    mine = shard_of(cases, opts.shard)
    shuffle_seed = _seed(opts.random_seed)
    while opts.repeat < 0 or iteration < opts.repeat:
        iteration += 1
        if opts.repeat != 1:
            out.write(f"\nRepeating all tests (iteration {iteration}) . . .\n\n")
        printer.filter_note(opts.gtest_filter)
        if opts.shard is not None and not opts.brief:
            out.write(f"Note: This is test shard {opts.shard[0] + 1} of {opts.shard[1]}.\n")
        order = list(mine)
        if opts.shuffle:
            if iteration > 1:
                shuffle_seed = shuffle_seed % 99999 + 1  # the next seed, wrapping 99999 to 1
            if not opts.brief:
                out.write(f"Note: Randomizing tests' orders with a seed of {shuffle_seed} .\n")
            random.Random(shuffle_seed).shuffle(order)
        if opts.data is Data.RANDOM:
            logger(
                printer,
                f"lnrepro emulator: data seed {data_seed} (rerun with --emu_seed={data_seed})",
            )
        else:
            logger(printer, f"lnrepro emulator: data from std::mt19937(5489), {opts.data.value}")
        printer.set_up(len(order))
        started = time.time()
        t0 = time.perf_counter()
        results: list[front.Reported] = []
        if order:
            printer.suite_start(len(order), SUITE)
            for case in order:
                printer.test_start(case.full_name)
                r = run_case(case, opts, iterations, printer, iteration)
                results.append(r)
                printer.test_end(case.full_name, not r.failures, r.ms)
            printer.suite_end(len(order), SUITE, int((time.perf_counter() - t0) * 1000))
        total = int((time.perf_counter() - t0) * 1000)
        failed = [f"{SUITE}.{r.name}" for r in results if r.failures]
        printer.tear_down(len(order), total, len(results) - len(failed), failed)
        any_failed = any_failed or bool(failed)
        if opts.output:
            front.write_report(opts.output, SUITE, results, started, total, "ttml_tests")
        out.flush()
    return 1 if any_failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return front.exit_status(
        lambda: run(parse_args(args, dict(os.environ)), sys.stdout), USAGE, "lnrepro-emulator"
    )
