"""The model as a googletest binary (``python -m lnrepro.emulator.cbmodel``): its flags, its two
tests and what a deadlock does; the console, the reports and the exit status are googletest's,
from :mod:`.gtest_front`."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .config import ENV_CONFIG, SUITE, TEST_FILE, CbConfig, ConfigError, load_config
from .cores import Outcome, simulate
from .device import write_device_state
from .dprint import Dprint, dprint_cores, dprint_out
from .gtest_front import (
    Help,
    Printer,
    Reported,
    exit_status,
    list_tests,
    select,
    use_color,
    write_report,
)
from .timeout import dispatch_timeout
from .watcher import Program, Watcher, kernel_ids, watcher_interval

USAGE = f"""\
lnrepro's circular-buffer model of a reader/compute/writer op, as a googletest binary.

googletest flags:
  --gtest_list_tests            list the tests instead of running them
  --gtest_filter=POS[-NEG]      ':'-separated wildcard patterns (* and ?)
  --gtest_output=json:PATH|xml:PATH   write a report
  --gtest_color=yes|no|auto     colour the markers
  --gtest_brief=1               print only failures

model:
  --cb_config=FILE              the model's numbers, JSON or TOML (or env {ENV_CONFIG})

environment, as tt-metal reads it:
  TT_METAL_WATCHER=<s>|<n>ms    on a deadlock, write watcher.log every interval
  TT_METAL_LOGS_PATH=DIR        where generated/watcher/watcher.log goes (default: cwd)
  TT_METAL_WATCHER_APPEND=1     append to watcher.log instead of rewriting it
  TT_METAL_DPRINT_CORES=...     print DPRINT lines of these cores' CB calls
  TT_METAL_DPRINT_FILE=PATH     ... into this file instead of stdout
  TT_METAL_OPERATION_TIMEOUT_SECONDS=<s>   on a deadlock, give up after s seconds: run
                                the timeout command, then abort with tt-metal's TIMEOUT error
  TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE=<cmd>   the command (tt-triage, as a rule)
"""


@dataclass(frozen=True)
class Case:
    name: str
    line: int
    cores: Callable[[CbConfig], list[tuple[int, int]]]

    def full_name(self) -> str:
        return f"{SUITE}.{self.name}"


def cases(cfg: CbConfig) -> list[Case]:
    return [
        Case(cfg.test_name, 42, lambda c: c.cores),
        Case(f"{cfg.test_name}_SingleCore", 77, lambda c: [(0, 0)]),
    ]


@dataclass
class Options:
    list_tests: bool = False
    gtest_filter: str = "*"
    output: str | None = None
    color: str = "auto"
    brief: bool = False
    config: str | None = None


def parse_args(argv: Sequence[str], env: dict[str, str]) -> Options:
    opts = Options(
        gtest_filter=env.get("GTEST_FILTER", "*"),
        output=env.get("GTEST_OUTPUT"),
        color=env.get("GTEST_COLOR", "auto").lower(),
        config=env.get(ENV_CONFIG),
    )
    for arg in argv:
        name, has, value = arg.lstrip("-").partition("=")
        if arg in ("-h", "--help"):
            raise Help
        if name == "gtest_list_tests":
            opts.list_tests = not has or value not in ("0", "false", "no")
        elif name == "gtest_filter":
            opts.gtest_filter = value
        elif name == "gtest_output":
            opts.output = value
        elif name == "gtest_color":
            opts.color = value.lower()
        elif name == "gtest_brief":
            opts.brief = not has or value not in ("0", "false", "no")
        elif name == "cb_config":
            opts.config = value
    return opts


def check(cfg: CbConfig, outcome: Outcome) -> list[tuple[int, str]]:
    """The test's assertions on a run that finished."""
    expected = cfg.blocks_per_core * cfg.compute_out_pages_per_block
    fails = []
    for c in outcome.cores:
        if c.in_avail or c.out_avail:
            fails.append(
                (
                    58,
                    "Expected equality of these values:\n  pages_left_in_cbs\n"
                    f"    Which is: {c.in_avail + c.out_avail}\n  0\n"
                    f"core ({c.x},{c.y}) finished with pages left in its circular buffers",
                )
            )
            break
        if c.written != expected:
            fails.append(
                (
                    61,
                    f"Expected equality of these values:\n  pages_written\n    Which is: {c.written}\n"
                    f"  expected_pages\n    Which is: {expected}",
                )
            )
            break
    return fails


def run(opts: Options, cfg: CbConfig, env: dict[str, str], out: TextIO) -> int:
    chosen = select(cases(cfg), opts.gtest_filter, Case.full_name)
    if opts.list_tests:
        list_tests(out, SUITE, [c.name for c in chosen])
        return 0
    printer = Printer(out, use_color(opts.color, out, env.get("TERM")), opts.brief)
    interval = watcher_interval(env.get("TT_METAL_WATCHER"))
    watcher = Watcher(env, interval, out) if interval is not None else None
    ids = kernel_ids(cfg)
    if watcher is not None:
        watcher.names(ids)
    dout = dprint_out(env, out)
    say = Dprint(dprint_cores(env.get("TT_METAL_DPRINT_CORES"), cfg), dout)
    printer.filter_note(opts.gtest_filter)
    printer.set_up(len(chosen))
    t0, started = time.perf_counter(), time.time()
    results: list[Reported] = []
    last: Program | None = None
    if chosen:
        printer.suite_start(len(chosen), SUITE)
    for h_id, case in enumerate(chosen, 1):
        printer.test_start(case.full_name())
        c0, s0 = time.perf_counter(), time.time()
        cores = case.cores(cfg)
        outcome = simulate(cfg, cores, say)
        dout.flush()
        last = Program(cfg, h_id, {(c.x, c.y): c for c in outcome.cores}, ids)
        if outcome.deadlocked:
            out.flush()
            write_device_state(last, env)
            error = dispatch_timeout(watcher, last, env, out)
            out.write(
                f"terminate called after throwing an instance of 'std::runtime_error'\n"
                f"  what():  {error}\n"
            )
            out.flush()
            os.abort()  # an uncaught TT_THROW in a googletest binary
        fails = check(cfg, outcome)
        ms = int((time.perf_counter() - c0) * 1000)
        for line, message in fails:
            out.write(f"{TEST_FILE}:{line}: Failure\n{message}\n")
        results.append(
            Reported(
                case.name, TEST_FILE, case.line, s0, ms, [(TEST_FILE, ln, m) for ln, m in fails]
            )
        )
        printer.test_end(case.full_name(), not fails, ms)
    total = int((time.perf_counter() - t0) * 1000)
    if chosen:
        printer.suite_end(len(chosen), SUITE, total)
    if watcher is not None:
        if last is not None:
            watcher.dump(last)
        watcher.detach()
    if dout is not out:
        dout.close()
    failed = [f"{SUITE}.{r.name}" for r in results if r.failures]
    printer.tear_down(len(chosen), total, len(results) - len(failed), failed)
    if opts.output:
        write_report(opts.output, SUITE if results else None, results, started, total, "cbmodel")
    out.flush()
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)

    def body() -> int:
        opts = parse_args(args, env)
        cfg = load_config(Path(opts.config)) if opts.config else CbConfig()
        return run(opts, cfg, env, sys.stdout)

    return exit_status(body, USAGE, "lnrepro cbmodel", (ConfigError,))
