"""Strict JSON out, typed JSON in: non-finite numbers in one encoding, damaged documents named
with their path, the place in them and the fix, never an internal error."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lnrepro.errors import InputError, MalformedRecord
from lnrepro.model import bisect, jsonio
from lnrepro.model.record import RunRecord
from tests.consumers.schemas import strict_loads


def test_non_finite_numbers_have_one_strict_encoding() -> None:
    doc = {
        "max_diff": math.inf,
        "mean_diff": -math.inf,
        "pcc": math.nan,
        "ok": 1.5,
        "n": [math.inf],
    }
    text = jsonio.dumps(doc)
    back = strict_loads(text)
    assert back == {
        "max_diff": "Infinity",
        "mean_diff": "-Infinity",
        "pcc": "NaN",
        "ok": 1.5,
        "n": ["Infinity"],
    }
    num = {k: jsonio.decode_number(v) for k, v in back.items()}
    assert num["max_diff"] == math.inf and num["mean_diff"] == -math.inf
    assert math.isnan(num["pcc"]) and num["ok"] == 1.5


def test_reader_names_the_file_the_place_and_the_fix() -> None:
    r = jsonio.Reader({"steps": [{"kind": 3}]}, "/x/bisect.json")
    step = r.list("steps")[0]
    with pytest.raises(MalformedRecord) as e:
        step.str("kind")
    line = e.value.one_line()
    assert "/x/bisect.json" in line and "steps[0].kind" in line and "the number 3" in line
    assert "fix: move /x/bisect.json aside" in line


def test_load_turns_every_file_fault_into_an_input_error(tmp_path: Path) -> None:
    cases = {
        "cut.json": '{"schema": "lnrepro.run/3", "id"',
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "latin1.json": b"\xff\xfe{}",
    }
    for name, body in cases.items():
        p = tmp_path / name
        p.write_bytes(body if isinstance(body, bytes) else body.encode())
        with pytest.raises(InputError) as e:
            jsonio.load(p)
        assert str(p) in e.value.one_line()
    with pytest.raises(InputError, match="does not exist"):
        jsonio.load(tmp_path / "missing.json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=20,
)
run_keys = [
    "schema",
    "request",
    "attempts",
    "state",
    "build",
    "backend",
    "tests",
    "notes",
    "missing",
]
bisect_keys = ["schema", "request", "steps", "result", "signature", "state", "record", "rerun"]


def damaged(keys: list[str]) -> st.SearchStrategy[object]:
    """Documents with the right keys and arbitrary values, or anything at all."""
    return st.dictionaries(st.sampled_from(keys), json_values, max_size=len(keys)) | json_values


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=damaged(run_keys))
def test_any_damaged_run_record_is_an_input_error(doc: object) -> None:
    try:
        RunRecord.from_json(jsonio.Reader(doc, "/r/record.json"), Path("/r"))
    except InputError as exc:
        assert "/r/record.json" in exc.one_line() and "fix:" in exc.one_line()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=damaged(bisect_keys))
def test_any_damaged_bisect_state_is_an_input_error(doc: object) -> None:
    try:
        bisect.decode(doc, "/g/lnrepro/bisect.json")
    except InputError as exc:
        assert "/g/lnrepro/bisect.json" in exc.one_line() and "fix:" in exc.one_line()
