"""Shrink's documents as lnrepro wrote them before issue 45 (tests/model/fixtures/shrink/,
written by the *Doc Structs that issue removed): today's code writes the same bytes from the same
objects, reads each document back to an equal object, and writes it again unchanged."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lnrepro.model import codec
from lnrepro.model.case import (
    TENSORS,
    Axis,
    Case,
    DataKind,
    DataSpec,
    Judged,
    Neighbour,
    OpKind,
    Shape,
    Status,
    Tolerance,
)
from lnrepro.model.jsonio import Reader, dumps
from lnrepro.model.requests import TtMetalSpec
from lnrepro.model.shrink import ShrinkDoc, ShrinkRecord, ShrinkRequest, ShrinkState, StartMeasure
from tests.consumers.schemas import errors

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "shrink"


def documents() -> dict[str, ShrinkRecord | ShrinkState]:
    """The objects the fixtures were written from."""
    tol = tuple(
        (t, Tolerance(0.1 * i + 0.01, math.inf if t == "dbeta" else 0.5))
        for i, t in enumerate(TENSORS)
    )
    gt = Case(
        Shape(2, 64, 1, 96),
        DataSpec(DataKind.CONSTANT, "bugrepro", 1.0, math.nan, 0.5),
        tol,
        "LayerNormBackwardOpTest.BugRepro",
    )
    few = Case(Shape(1, 32, 1, 33), DataSpec(DataKind.FEW_VALUED, "two-valued"), tol)
    rnd = Case(Shape(1, 1, 1, 32), DataSpec(DataKind.RANDOM, "mean-shifted", seed=7), tol, "x")
    ramp = Case(Shape(3, 1, 2, 64), DataSpec(DataKind.STRUCTURED, "ramp"), tol, "")
    tt = Case(
        Shape(1, 64, 1, 128),
        DataSpec(DataKind.RANDOM, "uniform", seed=3),
        (),
        "tests/ttnn/test_ln.py::test_ln[64-128]",
        op=OpKind.TTNN_LAYER_NORM,
        pcc=0.999,
    )
    ttc = Case(
        Shape(1, 32, 1, 32),
        DataSpec(DataKind.CONSTANT, "different-values", 0.5, 2.0, 1.0),
        (),
        "n",
        op=OpKind.TTNN_LAYER_NORM,
        pcc=0.5,
    )
    j1 = Judged(gt, Status.FAILS, math.inf, 3, "dx max_diff=1000")
    j2 = Judged(few, Status.PASSES, None, 1)
    j3 = Judged(rnd, Status.FLAKY, -math.inf, 5, "x")
    j4 = Judged(ramp, Status.INADMISSIBLE, 0.25, 2)
    j5 = Judged(tt, Status.FAILS, 12.5, 1, "pcc 0.2")
    j6 = Judged(ttc, Status.SKIPPED, math.nan, 0)
    emu = ShrinkRequest(test="LayerNormBackwardOpTest.BugRepro", seed=4)
    chk = ShrinkRequest(
        test="",
        backend=TtMetalSpec(
            checkout=Path("/src/tt-metal"), env={"B": "1", "A": "2"}, reset_cmd=("tt-smi", "-r")
        ),
        command=None,
        confidence=0.99,
        start_runs=7,
        budget=50,
        seed=0,
        source=Path("out/test_x.py"),
        timeout_s=12.5,
        source_flavour="lookalike",
        record_dir=Path("recs"),
        run="runs/r1",
        known_start=(10, 3),
    )
    cmd = ShrinkRequest(test="t", command=("sh", "-c", 'echo "é" \\ ok'), known_start=(0, 0))
    pyt = ShrinkRequest(
        backend=TtMetalSpec(checkout=Path("c"), profile="p"),
        pytest="tests/ttnn/test_ln.py::test_ln[64-128]",
    )
    docs = {
        "record-found": ShrinkRecord(
            chk,
            "checkout",
            StartMeasure(gt, 7, 3, (0.1, 0.7), True),
            3,
            j1,
            ("env", "LNREPRO_CASE={}", "x"),
            [
                Neighbour(Axis.FEATURES, "one tile fewer", j2, "passes", ("a", "b")),
                Neighbour(Axis.SEQ, "one fewer", None, "lower bound"),
                Neighbour(Axis.BATCH, "one fewer", j3, "", ()),
            ],
            evaluations=40,
            control_checks=5,
            candidates=12,
            inadmissible=[j4] * 22,
            budget_exhausted=True,
            seconds=12.34567,
            source=Path("out/test_x.py"),
            note="n",
            lower_bounds=[Axis.SEQ, Axis.HEADS],
        ),
        "record-none": ShrinkRecord(
            emu, "emulator", StartMeasure(rnd, 5, 5, (0.5, 1.0), False), 2, None, (), seconds=0.0004
        ),
        "record-ttnn": ShrinkRecord(
            pyt,
            "checkout-pytest",
            StartMeasure(tt, 1, 0, (0.0, 0.8), True),
            1,
            j5,
            ("r",),
            [Neighbour(Axis.FEATURES, "one tile fewer", j6, "why", ("q",))],
            evaluations=3,
            candidates=2,
            inadmissible=[j6],
        ),
        "record-command": ShrinkRecord(
            cmd, "command", StartMeasure(few, 2, 1, (0.2, 0.9), True), 2, j2, ()
        ),
        "state-new": ShrinkState(emu),
        "state-judged": ShrinkState(chk, (10, 3), 17, [j1, j2, j3, j4, j5, j6]),
        "state-pytest": ShrinkState(pyt, None, 1, [j5]),
    }
    return docs


DOCS = documents()
GTEST_TOLERANCE = json.loads((FIXTURES / "state-judged.json").read_text())["judged"][0]["case"][
    "tolerance"
]


@pytest.mark.parametrize("name", sorted(DOCS))
def test_a_document_is_written_byte_for_byte_as_before(name: str) -> None:
    written = (FIXTURES / f"{name}.json").read_text()
    assert dumps(DOCS[name].to_json()) + "\n" == written
    assert errors(written) == []


@pytest.mark.parametrize("name", sorted(n for n in DOCS if n.startswith("state-")))
def test_a_saved_state_reads_back_equal_and_writes_the_same_bytes(name: str) -> None:
    written = (FIXTURES / f"{name}.json").read_text()
    state = ShrinkState.from_json(Reader(json.loads(written), name))
    assert repr(state) == repr(DOCS[name])  # NaN != NaN: their reprs are equal
    assert dumps(state.to_json()) + "\n" == written


@pytest.mark.parametrize("name", sorted(n for n in DOCS if n.startswith("record-")))
def test_a_record_reads_back_and_writes_the_same_bytes(name: str) -> None:
    written = (FIXTURES / f"{name}.json").read_text()
    doc = codec.decode(Reader(json.loads(written), name), ShrinkDoc)
    assert dumps(codec.encode(doc)) + "\n" == written


def test_the_fixtures_hold_every_shape_of_a_field() -> None:
    """What the bytes above pin: absent vs null fields, non-finite numbers, both ops."""
    found = json.loads((FIXTURES / "record-found.json").read_text())
    ttnn = json.loads((FIXTURES / "record-ttnn.json").read_text())
    assert "pytest" not in found["request"] and "pytest" in ttnn["request"]
    assert "tolerance" not in ttnn["case"] and "op" not in found["case"]
    assert found["margin"] == "Infinity" and found["start"]["case"]["data"]["gamma"] == "NaN"
    assert found["smaller"][1]["case"] is None and len(found["inadmissible"]) == 20
    assert "seed" not in found["case"]["data"] and "dy" not in ttnn["case"]["data"]
    assert math.isnan(
        ShrinkState.from_json(Reader(json.loads((FIXTURES / "state-judged.json").read_text()), "s"))
        .judged[5]
        .margin
        or 0.0
    )


@pytest.mark.parametrize(
    ("at", "change", "message"),
    [
        (4, lambda c: c.pop("pcc"), "judged[4].case.pcc is required for a ttnn op's case"),
        (
            4,
            lambda c: c.update(tolerance=GTEST_TOLERANCE),
            "judged[4].case.tolerance does not apply to a ttnn op's case (its pcc does)",
        ),
        (0, lambda c: c.pop("tolerance"), "judged[0].case.tolerance is required"),
        (
            1,
            lambda c: c["data"].update(variant="ramp"),
            "judged[1].case.data.variant is 'ramp', not one of two-valued",
        ),
        (
            0,
            lambda c: c["tolerance"]["dx"].update(rtol=None),
            "judged[0].case.tolerance.dx.rtol should be number",
        ),
        (0, lambda c: c.update(extra=1), "judged[0].case object contains unknown field `extra`"),
    ],
)
def test_a_damaged_case_is_a_one_line_input_error(at: int, change: object, message: str) -> None:
    """What a case's document cannot say in types (checked when it is read, wherever it is)."""
    from lnrepro.errors import MalformedRecord

    doc = json.loads((FIXTURES / "state-judged.json").read_text())
    change(doc["judged"][at]["case"])  # type: ignore[operator]
    with pytest.raises(MalformedRecord) as exc:
        ShrinkState.from_json(Reader(doc, "s.json"))
    assert str(exc.value).startswith(f"s.json: {message}"), str(exc.value)
    assert "\n" not in str(exc.value)
