"""Every error message about a flag names a flag that the command's ``--help`` lists (errors
built from dest names once said --goods, --timeout-s, --gtest-filter, --contexts). The commands' own parameters are walked, each error path is exercised through
the real entry point, and every ``--flag`` in the one error line is looked up in ``--help``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest

from lnrepro.cli import all_commands
from lnrepro.cli.bisect import RESUME_OWN
from lnrepro.cli.params import EMULATOR, LOCAL, TT_METAL
from tests.conftest import ROOT
from tests.harness import assert_one_line_error, lnrepro

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*(?![\w-])")
# flags of other tools that a fix quotes (git, docker, pytest): never lnrepro's
OTHER_TOOLS = {
    "--shared",
    "--docker",
    "--context",
    "--global",
    "--add",
    "--oneline",
    "--collect-only",
    "--junitxml",
}


def help_flags(command: str) -> set[str]:
    """The flags ``lnrepro COMMAND --help`` shows a person (and the group's own)."""
    (code, out, err), (top_code, top, top_err) = lnrepro(command, "--help"), lnrepro("--help")
    assert code == top_code == 0, err or top_err
    return set(FLAG.findall(out)) | set(FLAG.findall(top))


def check(argv: list[str], expect: str | None = None) -> str:
    err = assert_one_line_error(lnrepro(*argv), None)
    named = set(FLAG.findall(err))
    listed = help_flags(argv[0])
    for other in re.findall(r"`lnrepro ([a-z-]+)`", err):  # "--x is an option of `lnrepro y`"
        listed |= help_flags(other)
    unknown = named - listed - set(argv)  # quoting what the user typed is fine
    assert not unknown, f"{argv}: {err!r} names {unknown}, which `lnrepro {argv[0]} --help` lacks"
    if expect is not None:
        assert expect in named, (argv, err)
    return err


def value_for(p: click.Parameter) -> list[str]:
    """Arguments that give ``p`` a value click accepts."""
    assert isinstance(p, click.Option)
    if p.is_flag:
        return [p.opts[0]]
    if isinstance(p.type, click.Choice):
        return [p.opts[0], str(p.type.choices[0])]
    if isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType)):
        return [p.opts[0], "2"]
    return [p.opts[0], "x"]


def long_flag(p: click.Parameter) -> str:
    return next(o for o in p.opts if o.startswith("--"))


BISECT = all_commands()["bisect"]
BISECT_OPTIONS = [
    p
    for p in BISECT.params
    if isinstance(p, click.Option) and p.name not in RESUME_OWN and p.name != "help"
]


@pytest.mark.parametrize("mode", ["--resume", "--log"])
@pytest.mark.parametrize("param", BISECT_OPTIONS, ids=lambda p: p.name)
def test_resume_and_log_name_the_flag_they_refuse(
    mode: str, param: click.Parameter, tmp_path: Path
) -> None:
    err = check(["bisect", "--repo", str(tmp_path), mode, *value_for(param)], long_flag(param))
    assert "cannot be changed" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--log", "--good", "x"],
        ["--resume", "--timeout", "5"],
        ["--resume", "--filter", "X*"],
        ["--resume", "--docker-context", "c"],
    ],
)
def test_the_four_reported_errors_name_real_flags(argv: list[str], tmp_path: Path) -> None:
    err = check(["bisect", "--repo", str(tmp_path), *argv], argv[1])
    for wrong in ("--goods", "--timeout-s", "--gtest-filter", "--contexts"):
        assert wrong not in err


OWNERS = {"emulator": EMULATOR, "local": LOCAL, "tt-metal": TT_METAL}
RUN = all_commands()["run"]
MISPLACED = [
    (p, owner)
    for p in RUN.params
    for owner, names in OWNERS.items()
    if p.name in names and isinstance(p, click.Option)
]


@pytest.mark.parametrize(("param", "owner"), MISPLACED, ids=lambda x: getattr(x, "name", x))
def test_a_misplaced_backend_option_is_named_as_help_spells_it(
    param: click.Parameter, owner: str
) -> None:
    other = "local" if owner == "emulator" else "emulator"
    base = ["run", "--backend", other] + (["--binary", "b"] if other == "local" else [])
    err = check([*base, *value_for(param)], long_flag(param))
    assert f"only applies with --backend {owner}" in err


COMMAND_REFUSES = [
    p
    for p in BISECT.params
    if p.name
    in (
        *EMULATOR,
        *LOCAL,
        *TT_METAL,
        "backend",
        "gtest_filter",
        "pytest_nodeids",
        "metric_patterns",
    )
]


@pytest.mark.parametrize("param", COMMAND_REFUSES, ids=lambda p: p.name)
def test_bisect_command_names_the_option_it_does_not_take(
    param: click.Parameter, tmp_path: Path
) -> None:
    argv = ["bisect", "--repo", str(tmp_path), "--good", "a", "--bad", "b", "--command", "true"]
    check([*argv, *value_for(param)], long_flag(param))


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--json", "--markdown"],
        ["run", "--list", "--dry-run"],
        ["run", "--backend", "local"],
        ["run", "--backend", "emulator", "--env", "A=1"],
        ["run", "--repeat", "0"],
        ["run", "--timeout", "nan"],
        ["run", "--filter", ""],
        ["run", "--seed", "1", "--data", "copy"],
        ["run", "--block-size", "0"],
        ["run", "--defect", "nonsense"],
        ["run", "--metric-pattern", "("],
        ["run", "--tt-metal", "/nonexistent", "--env", "X"],
        ["run", "--tt-metal", "/nonexistent", "--reset-cmd", "'"],
        ["run", "--tt-metal", "/nonexistent", "--runner", "local", "--image", "x"],
        ["run", "--filter", "x", "--pytest", "a.py::t"],
        ["run", "--thershold", "3"],
        ["run", "--repeat"],
        ["bisect", "--good", "a"],
        ["bisect", "--log", "--resume"],
        ["bisect", "--good", "a", "--bad", "b", "--fail-rates", "x"],
        ["bisect", "--good", "a", "--bad", "b", "--confidence", "0.9", "--repeat", "3"],
        ["bisect", "--good", "a", "--bad", "b", "--hang-in", "x"],
        ["bisect", "--good", "a", "--bad", "b", "--backend", "emulator"],
        ["bisect", "--good", "a", "--bad", "b", "--command", "'"],
        ["env-check", "--image", "x"],
        ["env-check", "--mount-set", "full"],
        ["env-check", "--sysroot", "/", "--container"],
        ["env-check", "--min-driver", "x"],
        ["tolerance", "--plot", "x.svg"],
        ["tolerance", "--defect", "shipped"],
        ["tolerance", "--test", "x", "--shape", "1,1,1,1"],
        ["tolerance", "--shape", "x"],
        ["tolerance", "--alpha", "2"],
        ["compare", "--json", "--markdown", "a", "b"],
        ["parse", "--json", "--markdown", "x"],
    ],
    ids=" ".join,
)
def test_every_error_about_a_flag_names_one_help_lists(argv: list[str]) -> None:
    err = check(argv)
    assert FLAG.search(err), f"{argv}: {err!r} names no flag"


def test_every_flag_in_an_error_message_of_the_source_is_a_real_flag() -> None:
    """The literal half: every ``--flag`` written into an error's text anywhere in lnrepro is one
    some command has (or another tool's, quoted in a fix)."""
    known = {"--help", "--version"} | OTHER_TOOLS
    for c in all_commands().values():
        for p in c.params:
            known.update(p.opts)
    errors = {
        "UsageError",
        "GitError",
        "InputError",
        "EnvironmentProblem",
        "MalformedRecord",
        "LnreproError",
        "BuildFailed",
        "CommandTimeout",
        "DockerUnavailable",
        "MalformedLog",
        "MalformedReport",
        "OutcomeError",
        "DiskFull",
        "NoGtestOutput",
        "EngineLost",
    }
    wrong: list[str] = []
    for f in sorted((ROOT / "lnrepro").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name not in errors:
                continue
            for s in ast.walk(node):
                if isinstance(s, ast.Constant) and isinstance(s.value, str):
                    wrong += [
                        f"{f.name}:{node.lineno} {m}"
                        for m in FLAG.findall(s.value)
                        if m not in known
                    ]
    assert not wrong
