"""One table of options: each request field a command line sets is declared once, in
lnrepro/options/table.py, and the commands' options, their ``--help``, the rerun line,
resume's refusal, the errors' flag names and lnrepro.toml's keys all come from it."""

from __future__ import annotations

import dataclasses
import re
import typing
from typing import Any

import click
import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings

from lnrepro import options
from lnrepro.cli import all_commands
from lnrepro.cli.bisect import RESUME_OWN
from lnrepro.cli.bisect import _request as bisect_request
from lnrepro.cli.run import request_from
from lnrepro.cli.shrink import shrink_request
from lnrepro.model.gtest import HIGHER_IS_BETTER
from lnrepro.model.requests import (
    DEFAULT_FILTER,
    BinarySpec,
    BisectRequest,
    CommandOracleSpec,
    EmulatorSpec,
    OnHang,
    Policy,
    PythonSpec,
    RunOracleSpec,
    RunRequest,
    TestSpec,
    TtMetalSpec,
)
from lnrepro.model.shrink import ShrinkRequest
from lnrepro.options import shrink as shrink_table
from lnrepro.options import table
from lnrepro.options.opt import Opt, bare, by_dest, hints, text
from lnrepro.run.config import FILE_ONLY, ConfigDoc
from tests.harness import lnrepro
from tests.model.strategies import for_type

from .test_flag_names import check

REQUESTS = (
    EmulatorSpec,
    BinarySpec,
    TtMetalSpec,
    TestSpec,
    RunRequest,
    Policy,
    CommandOracleSpec,
    RunOracleSpec,
    BisectRequest,
    ShrinkRequest,
)
COMMANDS = {"run": table.RUN_OPTS, "bisect": table.BISECT_OPTS, "shrink": shrink_table.OPTS}
ALL = (*table.ALL, *shrink_table.OPTS)
NOT_OPTIONS = table.NOT_OPTIONS | shrink_table.NOT_OPTIONS


def names(owner: type) -> list[str]:
    if dataclasses.is_dataclass(owner):
        return [f.name for f in dataclasses.fields(owner)]
    return [f.name for f in msgspec.structs.fields(owner)]


def test_every_entry_names_a_field_and_every_field_is_an_option_or_says_why_not() -> None:
    for o in ALL:
        assert o.field in names(o.owner), f"{o.flag}: {o.owner.__name__} has no {o.field}"
        assert o.annotation is not None
    every = {(t.__name__, n) for t in REQUESTS for n in names(t)}
    set_by = {(o.of, o.field) for o in ALL}
    assert every - (set_by | NOT_OPTIONS) == set(), "fields no option sets, NOT_OPTIONS unnamed"
    assert NOT_OPTIONS & set_by == set()


def test_the_shapes_click_reads_at_help_time_are_the_fields_own() -> None:
    """``--help`` reads each field's kind, choices and default from lnrepro/options/shapes.py,
    not from the requests (msgspec); a changed field leaves it stale: run
    scripts/option_shapes.py."""
    from lnrepro.options.shapes import SHAPES

    assert options.field_shapes() == SHAPES


def test_every_shrink_request_field_is_a_shrink_option_or_says_why_not() -> None:
    """Before, shrink's own options were click options written by hand beside ShrinkRequest."""
    own = {o.field for o in shrink_table.OPTS if o.owner is ShrinkRequest}
    missing = set(names(ShrinkRequest)) - own - {n for _, n in shrink_table.NOT_OPTIONS}
    assert missing == set()
    params = {p.name for p in all_commands()["shrink"].params}
    assert {o.dest for o in shrink_table.OPTS} <= params


def help_text(command: str) -> str:
    out = lnrepro(command, "--help", width=80).out
    return " ".join(out.split())


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_is_in_its_command_s_help_exactly_as_declared(command: str) -> None:
    params = {p.name: p for p in all_commands()[command].params}
    shown = help_text(command)
    for o in by_dest(COMMANDS[command]).values():
        p = params[o.dest]
        assert isinstance(p, click.Option)
        assert tuple(p.opts) == o.flags and getattr(p, "group", None) == o.group, o.flag
        assert p.is_flag == o.is_flag and p.multiple == o.multiple, o.flag
        if o.choices is not None:
            assert isinstance(p.type, click.Choice) and tuple(p.type.choices) == o.choices
            assert f"[{'|'.join(o.choices)}]" in shown, o.flag
        for f in o.flags:
            assert re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", shown), f
        declared = " ".join(o.help.split()).split("{DEFECT_NAMES}")[0]
        assert declared in shown, f"{o.flag}'s help is not shown as declared"
        if o.form != "tag" and o.default() not in (None, (), False, {}) and "[default: " in o.help:
            default = o.help.rsplit("[default: ", 1)[1]
            assert text(o.default()) in default, f"{o.flag} says another default than its field"


def test_resume_refuses_every_request_option_but_the_repository() -> None:
    assert RESUME_OWN - {"resume", "as_json", "show_log"} == {"repo"}
    assert {o.dest for o in table.BISECT_OPTS if o.resume} == {"repo"}


def test_every_toml_key_is_a_declared_option_of_the_same_type() -> None:
    keys = {f.name for f in msgspec.structs.fields(ConfigDoc)}
    by_key = {o.toml: o for o in table.ALL if o.toml}
    assert keys - FILE_ONLY == set(by_key)
    config = hints(ConfigDoc)
    assert not any(o.toml for o in shrink_table.OPTS if o.owner is ShrinkRequest)
    for key, o in by_key.items():
        kinds = typing.get_args(bare(config[key])) or (bare(config[key]),)
        assert o.annotation in kinds or bare(config[key]) == o.annotation, key


def parsed(command: str, argv: list[str]) -> dict[str, Any]:
    ctx = all_commands()[command].make_context(command, argv)
    return dict(ctx.params)


FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def sayable_backend(b: Any) -> Any:
    """``b`` as the command line can say it: --seed implies --data random; an empty --device
    list or reset command is no option at all; a KEY=VALUE key has no '='; the prebuilt tree is
    a bisect's choice per commit."""
    if isinstance(b, EmulatorSpec) and b.seed is not None and b.data == "copy":
        return msgspec.structs.replace(b, data="random")
    if isinstance(b, PythonSpec):
        return msgspec.structs.replace(
            b,
            setup=b.setup or None,
            env={k: v for k, v in b.env.items() if k and "=" not in k},
        )
    if isinstance(b, TtMetalSpec):
        return msgspec.structs.replace(
            b,
            prebuilt=None,
            devices=b.devices or None,
            reset_cmd=b.reset_cmd or None,
            env={k: v for k, v in b.env.items() if k and "=" not in k},
        )
    return b


def sayable_tests(t: TestSpec) -> TestSpec:
    """--pytest names the tests, or --filter picks them: not both."""
    return msgspec.structs.replace(t, gtest_filter=DEFAULT_FILTER) if t.pytest else t


@FUZZ
@given(for_type(RunRequest))
def test_a_run_s_rerun_line_parses_back_into_the_same_request(drawn: RunRequest) -> None:
    req = dataclasses.replace(
        drawn, backend=sayable_backend(drawn.backend), tests=sayable_tests(drawn.tests)
    )
    argv = options.argv(req)
    b = req.backend
    if isinstance(b, EmulatorSpec) and isinstance(b.case, str):  # the probe's case: env, no flag
        assert argv[:2] == ["env", f"LNREPRO_CASE={b.case}"]
        argv = argv[2:]
        req = dataclasses.replace(req, backend=msgspec.structs.replace(b, case=msgspec.UNSET))
    assert argv[:2] == ["lnrepro", "run"]
    assert request_from(parsed("run", argv[2:])) == req


def sayable_bisect(req: BisectRequest) -> BisectRequest:
    """``req`` as the command line can say it: the policy's derived part follows --metric,
    --hang-in goes with --on-hang bad, --confidence decides the repeats, a job's engine and
    devices come from --jobs, the checkout is --repo, and validation counts the endpoints' runs."""
    p, o = req.policy, req.oracle
    hang_in = p.hang_in if p.on_hang is OnHang.BAD and p.hang_in and p.hang_in.strip() else None
    policy = dataclasses.replace(p, higher_is_better=p.metric in HIGHER_IS_BETTER, hang_in=hang_in)
    if isinstance(o, RunOracleSpec) and isinstance(o.backend, PythonSpec):
        backend = sayable_backend(msgspec.structs.replace(o.backend, project=req.repo))
        o = RunOracleSpec(backend=backend, tests=sayable_tests(o.tests))
        repeat = o.tests.repeat
    elif isinstance(o, RunOracleSpec):
        backend = msgspec.structs.replace(
            sayable_backend(o.backend), checkout=req.repo, docker_context=None, devices=None
        )
        o = RunOracleSpec(backend=backend, tests=sayable_tests(o.tests))
        repeat = o.tests.repeat
    else:
        repeat = o.repeat
    confidence = req.confidence if repeat == 1 else None
    return dataclasses.replace(
        req, oracle=o, policy=policy, confidence=confidence, endpoint_runs=None
    )


@FUZZ
@given(for_type(BisectRequest))
def test_a_bisect_s_command_line_parses_back_into_the_same_request(drawn: BisectRequest) -> None:
    req = sayable_bisect(drawn)
    params = parsed("bisect", options.argv(req)[2:])
    assert bisect_request(params.pop("repo"), params) == req


def sayable_shrink(req: ShrinkRequest) -> ShrinkRequest:
    """``req`` as the command line can say it: --run takes the run's backend (and its measured
    start); one --seed is the emulator's and the request's (random data: shrink's own seed); an
    empty --command is no command."""
    b, seed = sayable_backend(req.backend), 0
    if req.run is not None:
        b = EmulatorSpec()
    elif isinstance(b, EmulatorSpec):
        given = b.seed if b.seed is not None else (req.seed or None)
        if given is not None and b.data == "advancing":
            b, seed = msgspec.structs.replace(b, seed=given), given
        elif given is not None:
            b, seed = msgspec.structs.replace(b, data="copy", seed=None), given
    if isinstance(b, EmulatorSpec):  # shrink hands each candidate its case itself
        b = msgspec.structs.replace(b, case=msgspec.UNSET)
    return dataclasses.replace(
        req, backend=b, seed=seed, command=req.command or None, known_start=None
    )


@FUZZ
@given(for_type(ShrinkRequest))
def test_a_shrink_s_rerun_line_parses_back_into_the_same_request(drawn: ShrinkRequest) -> None:
    assume(not isinstance(drawn.backend, PythonSpec))  # shrink has no Python project (validated)
    req = sayable_shrink(drawn)
    argv = options.argv(req)
    assert argv[:2] == ["lnrepro", "shrink"]
    assert shrink_request(parsed("shrink", argv[2:])) == req


def test_a_misplaced_backend_option_after_shrink_run_is_named_as_help_spells_it() -> None:
    """Before the table, shrink built this message from dest names: --device-nodes."""
    err = check(["shrink", "--run", "last", "--device", "0"], "--device")
    assert "--device-nodes" not in err


def test_a_flag_in_an_error_comes_from_the_table() -> None:
    assert table.flag(TestSpec, "gtest_filter") == "--filter"
    assert table.flag(TtMetalSpec, "watcher_s") == "--watcher"
    assert table.flag(BisectRequest, "contexts") == "--docker-context"
    assert all(isinstance(o, Opt) and o.flag.startswith("--") for o in ALL)
