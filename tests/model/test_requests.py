"""Requests both ways: JSON round trips, and the rerun line derived from a request parses back,
through the real command line, into the same request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lnrepro.cli import cli
from lnrepro.cli.bisect import _request as bisect_request
from lnrepro.cli.options import pop_backend, pop_tests
from lnrepro.cli.run import request_from
from lnrepro.model import jsonio
from lnrepro.model.requests import (
    BinarySpec,
    BisectRequest,
    CommandOracleSpec,
    EmulatorSpec,
    OnCrash,
    OnHang,
    Policy,
    RunOracleSpec,
    RunRequest,
    TestSpec,
    TtMetalSpec,
)

words = st.text(alphabet="abcXYZ019_.-*:/ '\"$", min_size=1, max_size=12).filter(
    lambda s: s.strip() == s and s
)
envkeys = st.from_regex(r"[A-Z_][A-Z0-9_]{0,6}", fullmatch=True)
emulator = st.builds(
    EmulatorSpec,
    st.sampled_from(["2025-11", "2025-12", "fixed"]),
    st.sampled_from(["wormhole_b0", "blackhole"]),
    st.none() | st.sampled_from(["shipped", "none", "double-subtract"]),
    st.none() | st.integers(1, 9),
    st.none() | st.integers(0, 300),
    st.booleans(),
    st.sampled_from(["copy", "reference", "random"]),
    st.none() | st.integers(0, 2**31),
)
tt_metal = st.builds(
    TtMetalSpec,
    st.builds(Path, st.sampled_from(["/src/tt-metal", "/a b/c"])),
    st.sampled_from(["docker", "local"]),
    st.none() | st.sampled_from(["in-tree", "standalone"]),
    st.none() | st.sampled_from(["img:1", "reg.io/x/y:tag"]),
    st.sampled_from(["full", "tt-metal", "seed-broken"]),
    st.dictionaries(envkeys, words, max_size=2).map(lambda d: tuple(d.items())),
    st.booleans(),
    st.none() | st.lists(words, min_size=1, max_size=3).map(tuple),
    st.none() | st.integers(1, 60),
    st.none() | st.sampled_from(["card-a", "second"]),
    st.none() | st.lists(st.sampled_from("0123"), min_size=1, max_size=2).map(tuple),
)
tests = st.builds(
    TestSpec,
    words,
    st.integers(1, 50),
    st.sampled_from([1800.0, 60.0, 0.5]),
    st.lists(st.just(r"pcc=(?P<pcc>[0-9.]+)"), max_size=1).map(tuple),
)
runs = st.builds(
    RunRequest,
    emulator | st.builds(BinarySpec, st.just(Path("/b/ttml_tests"))) | tt_metal,
    tests,
    st.sampled_from([Path(".lnrepro/runs"), Path("/records")]),
)


def parsed(command: str, argv: list[str]) -> dict[str, Any]:
    """What the real command line makes of ``argv`` (its parameters, before any work)."""
    ctx = cli.commands[command].make_context(command, argv)
    return dict(ctx.params)


@settings(max_examples=200, deadline=None)
@given(req=runs)
def test_run_request_json_round_trip(req: RunRequest) -> None:
    doc = json.loads(jsonio.dumps(req.to_json()))
    assert RunRequest.from_json(jsonio.Reader(doc, "x")) == req


@settings(max_examples=200, deadline=None)
@given(req=runs)
def test_the_rerun_line_parses_back_into_the_same_request(req: RunRequest) -> None:
    argv = req.argv()
    assert argv[:2] == ["lnrepro", "run"]
    params = parsed("run", argv[2:])
    again = request_from(pop_backend(params), pop_tests(params), params["record_dir"])
    if (
        isinstance(req.backend, EmulatorSpec)
        and req.backend.seed is not None
        and req.backend.data != "random"
    ):
        return  # not a valid request (validation refuses it); argv still says exactly what it held
    assert again == req


bisects = st.builds(
    BisectRequest,
    st.just(Path("/repo")),
    st.lists(words, min_size=1, max_size=2).map(tuple),
    words,
    st.builds(
        CommandOracleSpec,
        st.lists(words, min_size=1, max_size=3).map(tuple),
        st.sampled_from([1800.0, 30.0]),
        st.integers(1, 4),
    )
    | st.builds(
        RunOracleSpec,
        tt_metal.map(lambda s: TtMetalSpec(**{**s.__dict__, "checkout": Path("/repo")})),
        tests,
    ),
    st.builds(
        Policy, st.sampled_from(list(OnCrash)), st.sampled_from(list(OnHang)), st.none(), st.none()
    ),
    st.none() | st.sampled_from([0.95, 0.999]),
    st.none(),
    st.integers(1, 4),
    st.lists(st.sampled_from(["ctx-a", "ctx-b"]), max_size=2).map(tuple),
    st.lists(st.sampled_from("01"), max_size=2).map(tuple),
    st.lists(words, max_size=2).map(tuple),
    st.lists(st.just(Path("/p/a.patch")), max_size=1).map(tuple),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.lists(st.sampled_from(["tt-train", "tt_metal/hw"]), max_size=2).map(tuple),
    st.none() | st.just(Path("/recs")),
)


@settings(max_examples=200, deadline=None)
@given(req=bisects)
def test_bisect_request_round_trips_json_and_command_line(req: BisectRequest) -> None:
    doc = json.loads(jsonio.dumps(req.to_json()))
    assert BisectRequest.from_json(jsonio.Reader(doc, "x")) == req
    if isinstance(req.oracle, RunOracleSpec) and (
        req.oracle.backend.docker_context or req.oracle.backend.devices
    ):
        return  # a job's own engine and device: what --jobs derives, not a bisect option
    if (
        isinstance(req.oracle, CommandOracleSpec)
        and req.confidence is not None
        and req.oracle.repeat != 1
    ):
        return  # --repeat with --confidence is refused on the command line
    if (
        isinstance(req.oracle, RunOracleSpec)
        and req.confidence is not None
        and req.oracle.tests.repeat != 1
    ):
        return
    argv = req.argv()
    params = parsed("bisect", argv[2:])
    repo = params.pop("repo")
    for k in ("resume", "show_log", "as_json"):
        params.pop(k)
    assert bisect_request(repo, params) == req
