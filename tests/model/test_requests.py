"""Requests both ways: JSON round trips, and the rerun line derived from a request parses back,
through the real command line, into the same request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lnrepro import options
from lnrepro.cli import cli
from lnrepro.cli.bisect import _request as bisect_request
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
    kernel_era=st.sampled_from(["2025-11", "2025-12", "fixed"]),
    arch=st.sampled_from(["wormhole_b0", "blackhole"]),
    defect=st.none() | st.sampled_from(["shipped", "none", "double-subtract"]),
    block_size=st.none() | st.integers(1, 9),
    l1_max_tiles=st.none() | st.integers(0, 300),
    fp32_stats=st.booleans(),
    data=st.sampled_from(["copy", "reference", "random"]),
    seed=st.none() | st.integers(0, 2**31),
)
tt_metal = st.builds(
    TtMetalSpec,
    checkout=st.builds(Path, st.sampled_from(["/src/tt-metal", "/a b/c"])),
    runner=st.sampled_from(["docker", "local"]),
    profile=st.none() | st.sampled_from(["in-tree", "standalone"]),
    image=st.none() | st.sampled_from(["img:1", "reg.io/x/y:tag"]),
    mount_set=st.sampled_from(["full", "tt-metal", "seed-broken"]),
    env=st.dictionaries(envkeys, words, max_size=2),
    require_device=st.booleans(),
    reset_cmd=st.none() | st.lists(words, min_size=1, max_size=3).map(tuple),
    watcher_s=st.none() | st.integers(1, 60),
    docker_context=st.none() | st.sampled_from(["card-a", "second"]),
    devices=st.none() | st.lists(st.sampled_from("0123"), min_size=1, max_size=2).map(tuple),
)
tests = st.builds(
    TestSpec,
    gtest_filter=words,
    repeat=st.integers(1, 50),
    timeout_s=st.sampled_from([1800.0, 60.0, 0.5]),
    metric_patterns=st.lists(st.just(r"pcc=(?P<pcc>[0-9.]+)"), max_size=1).map(tuple),
)
runs = st.builds(
    RunRequest,
    backend=emulator | st.builds(BinarySpec, binary=st.just(Path("/b/ttml_tests"))) | tt_metal,
    tests=tests,
    record_dir=st.sampled_from([Path(".lnrepro/runs"), Path("/records")]),
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
    argv = options.argv(req)
    assert argv[:2] == ["lnrepro", "run"]
    params = parsed("run", argv[2:])
    again = request_from(params)
    if (
        isinstance(req.backend, EmulatorSpec)
        and req.backend.seed is not None
        and req.backend.data != "random"
    ):
        return  # not a valid request (validation refuses it); argv still says exactly what it held
    assert again == req


bisects = st.builds(
    BisectRequest,
    repo=st.just(Path("/repo")),
    good=st.lists(words, min_size=1, max_size=2).map(tuple),
    bad=words,
    oracle=st.builds(
        CommandOracleSpec,
        argv=st.lists(words, min_size=1, max_size=3).map(tuple),
        timeout_s=st.sampled_from([1800.0, 30.0]),
        repeat=st.integers(1, 4),
    )
    | st.builds(
        RunOracleSpec,
        backend=tt_metal.map(lambda s: msgspec.structs.replace(s, checkout=Path("/repo"))),
        tests=tests,
    ),
    policy=st.builds(
        Policy,
        on_crash=st.sampled_from(list(OnCrash)),
        on_hang=st.sampled_from(list(OnHang)),
        metric=st.none(),
        threshold=st.none(),
    ),
    confidence=st.none() | st.sampled_from([0.95, 0.999]),
    fail_rates=st.none(),
    jobs=st.integers(1, 4),
    contexts=st.lists(st.sampled_from(["ctx-a", "ctx-b"]), max_size=2).map(tuple),
    devices=st.lists(st.sampled_from("01"), max_size=2).map(tuple),
    picks=st.lists(words, max_size=2).map(tuple),
    patches=st.lists(st.just(Path("/p/a.patch")), max_size=1).map(tuple),
    find_fix=st.booleans(),
    first_parent=st.booleans(),
    confirm=st.booleans(),
    paths=st.lists(st.sampled_from(["tt-train", "tt_metal/hw"]), max_size=2).map(tuple),
    record_dir=st.none() | st.just(Path("/recs")),
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
    argv = options.argv(req)
    params = parsed("bisect", argv[2:])
    repo = params.pop("repo")
    for k in ("resume", "show_log", "as_json"):
        params.pop(k)
    assert bisect_request(repo, params) == req


# The oldest request shapes records hold (lnrepro.run/3, lnrepro.bisect/3): fields added since
# were absent, and read as their defaults.
OLD_RUN = {
    "backend": {
        "backend": "tt-metal",
        "checkout": "/src/tt-metal",
        "runner": "docker",
        "profile": None,
        "image": None,
        "mount_set": "full",
        "env": {"A": "1", "B": "2"},
        "require_device": False,
        "reset_cmd": ["tt-smi", "-r", "0"],
        "watcher_s": None,
        "docker_context": None,
        "devices": None,
    },
    "tests": {"filter": "S.*", "repeat": 3, "timeout_s": 60, "metric_patterns": []},
    "record_dir": "/records",
}
OLD_BISECT = {
    "repo": "/repo",
    "good": ["g1"],
    "bad": "b1",
    "oracle": {"oracle": "command", "argv": ["make", "t"], "command": "make t", "timeout_s": 30,
               "repeat": 2},
    "policy": {"on_crash": "skip", "on_hang": "bad", "metric": None, "threshold": None,
               "higher_is_better": False},
    "confidence": None,
    "fail_rates": [0.5, 0.0],
    "jobs": 1,
    "contexts": [],
    "devices": [],
    "picks": [],
    "patches": ["/p/a.patch"],
    "find_fix": False,
    "first_parent": True,
    "confirm": True,
    "paths": [],
    "record_dir": None,
}  # fmt: skip


def test_the_oldest_request_documents_still_read() -> None:
    run = RunRequest.from_json(jsonio.Reader(OLD_RUN, "record.json"))
    assert run == RunRequest(
        backend=TtMetalSpec(
            checkout=Path("/src/tt-metal"),
            env={"A": "1", "B": "2"},
            reset_cmd=("tt-smi", "-r", "0"),
        ),
        tests=TestSpec(gtest_filter="S.*", repeat=3, timeout_s=60.0),
        record_dir=Path("/records"),
    )
    argv = options.argv(run.backend)
    assert argv[argv.index("--env") :][:6] == [
        "--env",
        "A=1",
        "--env",
        "B=2",
        "--reset-cmd",
        "tt-smi -r 0",
    ]
    bisect = BisectRequest.from_json(jsonio.Reader(OLD_BISECT, "bisect.json"))
    assert bisect == BisectRequest(
        repo=Path("/repo"),
        good=("g1",),
        bad="b1",
        oracle=CommandOracleSpec(argv=("make", "t"), timeout_s=30.0, repeat=2),
        policy=Policy(on_crash=OnCrash.SKIP, on_hang=OnHang.BAD),
        fail_rates=(0.5, 0.0),
        patches=(Path("/p/a.patch"),),
        first_parent=True,
    )
    # written back: today's JSON, the old keys in their old order, then the new ones
    again = json.loads(jsonio.dumps(bisect.to_json()))
    assert list(again)[: len(OLD_BISECT)] == list(OLD_BISECT)
    assert again["oracle"] == {**OLD_BISECT["oracle"], "timeout_s": 30.0}


def test_a_wrong_request_value_names_its_place() -> None:
    from lnrepro.errors import MalformedRecord

    doc = json.loads(json.dumps(OLD_RUN))
    doc["backend"]["runner"] = "podman"
    with pytest.raises(MalformedRecord, match=r"record\.json: backend\.runner is 'podman'"):
        RunRequest.from_json(jsonio.Reader(doc, "record.json"))
    doc = dict(OLD_RUN, backend={"backend": "cloud"})
    with pytest.raises(MalformedRecord, match=r"backend\.backend is 'cloud'"):
        RunRequest.from_json(jsonio.Reader(doc, "record.json"))
    doc = dict(OLD_BISECT, oracle={"oracle": "run", "backend": {"backend": "emulator"}})
    with pytest.raises(MalformedRecord, match=r"oracle\.backend\.backend is 'emulator'"):
        BisectRequest.from_json(jsonio.Reader(doc, "bisect.json"))


def test_the_command_line_of_a_command_oracle_is_derived_from_its_argv() -> None:
    o = CommandOracleSpec(argv=("sh", "-c", "make t && ./t"), command="stale")
    assert o.command == "sh -c 'make t && ./t'"
    doc = dict(OLD_BISECT, oracle={"oracle": "command", "argv": ["a b"], "command": "x"})
    argv = options.argv(BisectRequest.from_json(jsonio.Reader(doc, "b")))
    assert argv[argv.index("--command") + 1] == "'a b'"


def test_a_shrink_of_a_checkout_keeps_its_typed_backend() -> None:
    from lnrepro.model.shrink import ShrinkRequest

    req = ShrinkRequest(
        test="S.T", backend=TtMetalSpec(checkout=Path("/src"), env={"K": "v"}), command=None
    )
    doc = json.loads(jsonio.dumps(req.to_json()))
    assert doc["backend"]["backend"] == "tt-metal" and doc["backend"]["checkout"] == "/src"
    assert ShrinkRequest.from_json(jsonio.Reader(doc, "shrink-state.json")) == req
