"""Every record and request type round-trips through its JSON, and what it writes validates
against the schema generated from it (issue 39).

The documents are the types scripts/schemas.py derives docs/schemas/ from; their nested records
(steps, attempts, test results, diagnoses...) are drawn inside them. The values come from
tests/model/strategies.py, which reads each type's annotations and msgspec constraints, so every
drawn value is one the type allows.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings

from lnrepro.model import codec, requests
from lnrepro.model.jsonio import Reader, dumps

from ..consumers.schemas import _registry as registry
from ..test_schemas_generated import script
from .strategies import for_type, same

ROOT = Path(__file__).resolve().parents[2]

# Files of docs/schemas/ still written by hand, with hand-written to_json/from_json behind them.
# Each leaves this set when its types are derived (issue 39); the test below keeps it honest.
PENDING_SCHEMAS: set[str] = set()
# Documents holding a request's backend as an open JSON object: a drawn object is not a backend,
# so only their round trip is checked. (None now: the shrink documents hold a typed backend.)
UNTYPED_BACKEND: set[str] = set()
# Request types still encoded by hand (their own to_json/from_json).
PENDING_REQUESTS: set[str] = set()


DERIVED: dict[str, tuple[type[Any], str]] = script().DERIVED


def request_types() -> list[type[Any]]:
    return [
        obj
        for obj in vars(requests).values()
        if isinstance(obj, type)
        and obj.__module__ == requests.__name__
        and (dataclasses.is_dataclass(obj) or issubclass(obj, msgspec.Struct))
    ]


def test_every_schema_file_is_derived_or_still_listed_as_hand_written() -> None:
    files = {p.name for p in (ROOT / "docs" / "schemas").glob("*.json")}
    assert set(DERIVED) | PENDING_SCHEMAS == files
    assert not set(DERIVED) & PENDING_SCHEMAS, "a derived file is still listed as hand-written"
    names = {t.__name__ for t in request_types()}
    assert names >= PENDING_REQUESTS, "a listed request type no longer exists"


def round_trip(kind: type[Any], value: Any) -> None:
    text = dumps(codec.encode(value))
    back = codec.decode(Reader(json.loads(text), "drawn"), kind)
    assert same(back, value), f"{kind.__name__} changed in a round trip:\n{text}"
    assert dumps(codec.encode(back)) == text


@pytest.mark.parametrize("file", sorted(DERIVED))
def test_every_document_round_trips_and_matches_its_generated_schema(file: str) -> None:
    kind, title = DERIVED[file]
    validator = jsonschema.Draft202012Validator(
        codec.document_schema(kind, title=title, file=file), registry=registry()
    )

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(for_type(kind))
    def check(value: Any) -> None:
        round_trip(kind, value)
        if file in UNTYPED_BACKEND:
            return
        errors = [e.message for e in validator.iter_errors(json.loads(dumps(codec.encode(value))))]
        assert errors == [], errors

    check()


@pytest.mark.parametrize(
    "kind",
    [t for t in request_types() if t.__name__ not in PENDING_REQUESTS],
    ids=lambda t: t.__name__,
)
def test_every_request_round_trips(kind: type[Any]) -> None:
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(for_type(kind))
    def check(value: Any) -> None:
        round_trip(kind, value)

    check()


def test_a_wrong_value_names_its_place_and_a_non_finite_number_reads_back() -> None:
    from lnrepro.errors import MalformedRecord
    from lnrepro.model.compare import CompareDoc

    row = {
        "test": "S.T",
        "verdict_a": "PASS",
        "verdict_b": "FAIL",
        "pass_rate_a": 1.0,
        "pass_rate_b": 0.0,
        "max_diff_a": 0.5,
        "max_diff_b": "Infinity",
        "pcc_a": None,
        "pcc_b": "NaN",
        "change": "PASS → FAIL",
    }
    doc = codec.decode(Reader({"a": "x", "b": "y", "tests": [row]}, "c.json"), CompareDoc)
    assert doc.tests[0].max_diff_b == float("inf")
    assert json.loads(dumps(codec.encode(doc)))["tests"][0]["pcc_b"] == "NaN"
    bad = dict(row, max_diff_a="lots")
    with pytest.raises(MalformedRecord, match=r"c\.json: tests\[0\]\.max_diff_a should be number"):
        codec.decode(Reader({"a": "x", "b": "y", "tests": [bad]}, "c.json"), CompareDoc)
    with pytest.raises(MalformedRecord, match=r"verdict_a is 'MAYBE'"):
        codec.decode(
            Reader({"a": "x", "b": "y", "tests": [dict(row, verdict_a="MAYBE")]}, "c.json"),
            CompareDoc,
        )
