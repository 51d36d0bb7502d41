"""docs/schemas as a validator: which schema a document names, and every error it has."""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"
BY_NAME = {
    "lnrepro.run/5": "run.json",
    "lnrepro.bisect/6": "bisect.json",
    "lnrepro.gtest-run/2": "gtest-run.json",
    "lnrepro.env-check/2": "env-check.json",
    "lnrepro.runs/1": "runs.json",
    "lnrepro.compare/3": "compare.json",
    "lnrepro.plan/2": "plan.json",
    "lnrepro.explain/2": "explain.json",
    "lnrepro.tolerance/1": "tolerance.json",
    "lnrepro.hang/2": "hang.json",
    "lnrepro.shrink/1": "shrink.json",
    "lnrepro.shrink-state/1": "shrink-state.json",
    "lnrepro.version-bisect/1": "version-bisect.json",
}


@cache
def _registry() -> Any:
    from referencing import Registry, Resource

    resources = []
    for p in SCHEMAS.glob("*.json"):
        doc = json.loads(p.read_text())
        resources.append((doc["$id"], Resource.from_contents(doc)))
        resources.append((p.name, Resource.from_contents(doc)))  # relative $refs resolve by name
    return Registry().with_resources(resources)


def strict_loads(text: str) -> Any:
    """As strict as Node's JSON.parse: no NaN/Infinity literals, no overflow to infinity."""

    def bad(name: str) -> None:
        raise ValueError(f"non-standard JSON literal {name}")

    def finite(t: str) -> float:
        v = float(t)
        if not math.isfinite(v):
            raise ValueError(f"{t} overflows a double")
        return v

    return json.loads(text, parse_constant=bad, parse_float=finite)


@cache
def _validator(schema: str) -> Any:
    """The validator of one schema, made once: building it is half of checking a document."""
    from jsonschema import Draft202012Validator

    s = json.loads((SCHEMAS / BY_NAME[schema]).read_text())
    return Draft202012Validator(
        s, registry=_registry(), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def errors(text: str) -> list[str]:
    """Why ``text`` is not a valid lnrepro document (empty when it is)."""
    try:
        doc = strict_loads(text)
    except ValueError as exc:
        return [f"not strict JSON: {exc}"]
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in BY_NAME:
        return [f"no known schema key (got {schema!r})"]
    return [
        f"{schema} at /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
        for e in _validator(schema).iter_errors(doc)
    ]
