"""The command table: every command's name, the module under :mod:`lnrepro.cli` that defines
it and its one-line summary, and the ``lnrepro`` group that lists them without importing any
(``lnrepro --help`` loads no command; a command's module is imported when it runs or its help
is asked for)."""

from __future__ import annotations

import importlib

import click

from lnrepro import __version__
from lnrepro.cli.help import Context

EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 tests or checks failed; 2 usage error; 3 internal error; "
    "4 bad input file; 5 environment problem (Docker, device, tool, disk) or nothing about the "
    "kernel could be learned; 6 git problem; 7 timeout; 130 interrupted (Ctrl-C); 143/129 "
    "terminated (SIGTERM/SIGHUP). With run --bisect-exit-code: git bisect run's 0 good, 1 bad, "
    "125 skip, 128 abort."
)
# every command: the module (under lnrepro.cli) that defines it, and its one-line summary.
# `lnrepro --help` lists them from here and imports none of them (click's LazyGroup pattern:
# https://click.palletsprojects.com/en/stable/complex/#lazily-loading-subcommands).
COMMANDS: dict[str, tuple[str, str]] = {
    "bisect": ("bisect", "Find the commit that introduced (or fixed) the bug."),
    "compare": ("records", "Compare two runs test by test."),
    "env-check": ("envcheck", "Check this host (or container) can run tt-metal's tests."),
    "explain": (
        "studies",
        "Rank the kernel models that reproduce a run or log; say where a hang waits.",
    ),
    "parse": ("parse", "Parse a gtest log (and its report) into typed results."),
    "report": ("records", "Write a bug report (Markdown), JUnit XML or JSON from a record."),
    "run": ("run", "Run the BugRepro and NIGHTLY gtests N times, with timeouts; report."),
    "runs": ("records", "List saved runs and bisects."),
    "show": ("records", "Show one saved run or bisect."),
    "shrink": (
        "shrink",
        "Shrink a failing (or masked) test to its smallest, loudest deterministic case.",
    ),
    "tolerance": (
        "studies",
        "Which tolerance (and which data) tells the correct kernel from the bug.",
    ),
}
SUMMARY = {name: summary for name, (_, summary) in COMMANDS.items()}


class LazyGroup(click.Group):
    """A group whose commands are imported when one is run or its help asked for."""

    context_class = Context

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            importlib.import_module(f"lnrepro.cli.{COMMANDS[cmd_name][0]}")  # registers it
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUMMARY[name]) for name in self.list_commands(ctx)])


def all_commands() -> dict[str, click.Command]:
    """Every command, imported (for the docs and the tests)."""
    for module in {m for m, _ in COMMANDS.values()}:
        importlib.import_module(f"lnrepro.cli.{module}")
    return {name: cli.commands[name] for name in sorted(COMMANDS)}


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, "--version", "-V", prog_name="lnrepro")
def cli() -> None:
    """Reproduce, measure and bisect numerical bugs in accelerator kernels.

    First target: tt-train's fused LayerNorm backward kernel in tt-metal, whose
    block-based path gets gradients wrong by ~1000 for constant inputs while the
    random-data NIGHTLY test passes. Runs on a Tenstorrent card, or anywhere on the
    built-in numpy emulator of the kernel.
    """
