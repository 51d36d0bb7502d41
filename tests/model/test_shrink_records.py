"""lnrepro.shrink/1 and lnrepro.shrink-state/1, defined once (the types in lnrepro/model/shrink.py
and case.py, a case through its CaseDoc): they read back what they write, read what older lnrepro wrote, byte for
byte, refuse what does not fit with a one-line MalformedRecord, and validate against the schemas
derived from them."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lnrepro.errors import MalformedRecord
from lnrepro.model import codec
from lnrepro.model.case import (
    TENSORS,
    VARIANTS,
    Axis,
    Case,
    DataDoc,
    DataKind,
    DataSpec,
    Judged,
    Neighbour,
    Shape,
    Status,
    Tolerance,
    data,
    data_doc,
)
from lnrepro.model.jsonio import Reader, dumps
from lnrepro.model.requests import EmulatorSpec
from lnrepro.model.shrink import ShrinkDoc, ShrinkRecord, ShrinkRequest, ShrinkState, StartMeasure
from tests.consumers.schemas import errors

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "records" / "shrink-state-1.json"
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
number = st.floats(allow_nan=False, width=64)  # NaN != NaN: its encoding is tested below
count = st.integers(0, 1 << 40)
pair = st.tuples(count, count)


@st.composite
def data_specs(draw: st.DrawFn) -> DataSpec:
    kind = draw(st.sampled_from(DataKind))
    variant = draw(st.sampled_from(VARIANTS[kind]))
    if kind is DataKind.CONSTANT:
        return DataSpec(kind, variant, draw(number), draw(number), draw(number))
    if kind is DataKind.RANDOM:
        return DataSpec(kind, variant, seed=draw(count))
    return DataSpec(kind, variant)


extent = st.integers(1, 1 << 24)
cases = st.builds(
    Case,
    st.builds(Shape, extent, extent, extent, extent),
    data_specs(),
    st.tuples(*(st.tuples(st.just(t), st.builds(Tolerance, number, number)) for t in TENSORS)),
    text,
)
judgeds = st.builds(Judged, cases, st.sampled_from(Status), st.none() | number, count, text)
paths = st.from_regex(r"\A[a-z]{1,5}(/[a-z]{1,5}){0,2}\Z").map(Path)
requests = st.builds(
    ShrinkRequest,
    test=text,
    backend=st.just(EmulatorSpec()),
    command=st.none() | st.tuples(text, text),
    confidence=st.floats(0.5, 1.0),
    start_runs=st.integers(1, 99),
    budget=st.integers(1, 10_000),
    seed=count,
    source=st.none() | paths,
    timeout_s=st.floats(0.1, 1e6),
    source_flavour=st.sampled_from(["tt-metal", "lookalike"]),
    record_dir=paths,
    run=st.none() | text,
    known_start=st.none() | pair,
)
states = st.builds(ShrinkState, requests, st.none() | pair, count, st.lists(judgeds, max_size=3))


def back(doc: object) -> Reader:
    return Reader(json.loads(dumps(doc)), "test.json")


@SETTINGS
@given(states)
def test_a_state_reads_back_as_it_was_written(state: ShrinkState) -> None:
    text = dumps(state.to_json())
    assert ShrinkState.from_json(back(state.to_json())) == state
    assert errors(text) == []


@SETTINGS
@given(judgeds, requests)
def test_judged_case_and_request_read_back(j: Judged, req: ShrinkRequest) -> None:
    assert codec.decode(back(codec.encode(j)), Judged) == j
    assert codec.decode(back(codec.encode(j.case)), Case) == j.case
    assert Case.from_env_value(j.case.env_value()) == j.case
    assert data(codec.decode(back(codec.encode(data_doc(j.case.data))), DataDoc)) == j.case.data
    assert ShrinkRequest.from_json(back(req.to_json())) == req


@SETTINGS
@given(
    requests,
    cases,
    st.lists(judgeds, max_size=25),
    st.none() | judgeds,
    st.lists(st.sampled_from(Axis), max_size=4),
)
def test_a_record_reads_back_and_fits_its_schema(
    req: ShrinkRequest, start: Case, judged: list[Judged], result: Judged | None, axes: list[Axis]
) -> None:
    rec = ShrinkRecord(
        req,
        "checkout",
        StartMeasure(start, 5, 1, (0.0, 0.5), True),
        3,
        result,
        ("env", "x") if result else (),
        [
            Neighbour(a, "one fewer", j, "why", ("r",))
            for a, j in zip(axes, [*judged, None], strict=False)
        ],
        inadmissible=judged,
        lower_bounds=axes,
        seconds=1.0,
    )
    plain = json.loads(dumps(rec.to_json()))
    doc = codec.decode(Reader(plain, "shrink.json"), ShrinkDoc)  # non-finite numbers: codec.Real
    assert json.loads(dumps(codec.encode(doc))) == plain
    assert dumps(codec.encode(doc)) == dumps(codec.encode(rec.doc()))
    assert len(plain["inadmissible"]) == min(len(judged), 20)
    assert errors(dumps(rec.to_json())) == []


def test_a_state_written_before_the_structs_reads_and_writes_back_byte_for_byte() -> None:
    written = FIXTURE.read_text()
    state = ShrinkState.from_json(Reader(json.loads(written), str(FIXTURE)))
    assert state.judged[0].margin == math.inf
    assert state.judged[0].case.data == DataSpec(DataKind.CONSTANT, "different-values", 0.5, 2, 1)
    assert state.judged[1].case.data.seed == 7
    assert state.request.known_start == (5, 1)
    assert dumps(state.to_json()) + "\n" == written
    assert errors(written) == []


def test_non_finite_numbers_keep_their_strings() -> None:
    case = Case(
        Shape(1, 1, 1, 32),
        DataSpec(DataKind.CONSTANT, "bugrepro", math.nan, -math.inf, 0.5),
        tuple((t, Tolerance(math.inf, 0.1)) for t in TENSORS),
    )
    j = Judged(case, Status.FAILS, math.nan, 1)
    doc = json.loads(dumps(codec.encode(j)))
    assert doc["margin"] == "NaN"
    assert (doc["case"]["data"]["dy"], doc["case"]["data"]["gamma"]) == ("NaN", "-Infinity")
    assert doc["case"]["tolerance"]["dx"] == {"rtol": "Infinity", "atol": 0.1}
    again = codec.decode(back(codec.encode(j)), Judged)
    assert again.margin is not None and math.isnan(again.margin)
    assert math.isnan(again.case.data.dy) and again.case.tol["dx"].rtol == math.inf


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["judged"][0]["case"].update(batch=0),
            "judged[0].case.batch should be int >= 1",
        ),
        (
            lambda d: d["judged"][0].update(status="great"),
            "judged[0].status is 'great', which is not an allowed value",
        ),
        (
            lambda d: d["judged"][0]["case"]["data"].update(variant="ramp"),
            "judged[0].case.data.variant is 'ramp'",
        ),
        (lambda d: d["request"].update(budget=True), "request.budget should be int, got bool"),
        (
            lambda d: d.update(schema="lnrepro.shrink-state/0"),
            "schema is 'lnrepro.shrink-state/0', which is not an allowed value",
        ),
        (lambda d: d.update(extra=1), "object contains unknown field `extra`"),
        (lambda d: d["request"].update(known_start=[1, 2, 3]), "request.known_start should be"),
    ],
)
def test_a_damaged_state_is_a_one_line_malformed_record(change: object, message: str) -> None:
    doc = json.loads(FIXTURE.read_text())
    change(doc)  # type: ignore[operator]
    with pytest.raises(MalformedRecord) as exc:
        ShrinkState.from_json(Reader(doc, "shrink-state.json"))
    assert message in str(exc.value), str(exc.value)
    assert str(exc.value).startswith("shrink-state.json: ")
    assert "\n" not in str(exc.value)


def test_help_loads_no_record_library() -> None:
    code = (
        "import sys; from lnrepro.cli import main; rc = main(['--help']); "
        "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in ('msgspec', 'pydantic')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert "LOADED []" in out.stdout, out.stdout + out.stderr
