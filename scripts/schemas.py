"""Write the JSON Schemas of docs/schemas/ that are derived from the record types.

    .venv/bin/python scripts/schemas.py          # rewrite them
    .venv/bin/python scripts/schemas.py --check  # exit 1, naming the files, when one differs

Each entry of DERIVED names a file, the record type it is derived from (a keyword-only
dataclass or msgspec Struct; see lnrepro/model/codec.py) and its title. A file not in DERIVED is
still written by hand (issue 39).
tests/test_schemas_generated.py runs the check.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lnrepro import api
from lnrepro.bisect import releases
from lnrepro.envcheck import document as envcheck
from lnrepro.hang import model as hang
from lnrepro.model import bisect, compare, gtest, listing, record, requests, shrink
from lnrepro.model.codec import document_schema
from lnrepro.studies import explain_doc, tolerance

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "docs" / "schemas"

# file name -> (the document's type, or an untagged union of them, and its title)
DERIVED: dict[str, tuple[Any, str]] = {
    "bisect.json": (
        bisect.BisectRecord,
        "A bisect's state and record: bisect.json, bisect --json, show --json (lnrepro.bisect/6)",
    ),
    "compare.json": (
        compare.CompareDoc,
        "lnrepro compare --json (lnrepro.compare/3): two runs, test by test",
    ),
    "run.json": (
        record.RunDoc,
        "A run record: record.json, run --json, show --json, report --format json (lnrepro.run/5)",
    ),
    "gtest-run.json": (gtest.GtestRunDoc, "lnrepro parse --json (lnrepro.gtest-run/2)"),
    "runs.json": (listing.RunsDoc, "lnrepro runs --json (lnrepro.runs/1)"),
    "requests.json": (
        requests.RequestShapes,
        "The typed requests records keep (lnrepro.model.requests): a run's and a bisect's, "
        "for the records' schemas to refer to ($defs/RunRequest, $defs/BisectRequest)",
    ),
    "env-check.json": (
        envcheck.EnvCheckDoc,
        "lnrepro env-check --json (lnrepro.env-check/2): every check of the host or a sysroot, "
        "and with --container the container's view beside it",
    ),
    "explain.json": (
        explain_doc.ExplainDoc,
        "lnrepro explain --json (lnrepro.explain/2): every model's fit to a run or gtest log, "
        "best first, its hangs, and the notes the console shows",
    ),
    "hang.json": (
        hang.Diagnosis,
        "A hang's diagnosis from a watcher log, tt-triage output or a user's summary of one: a "
        "run attempt's hang, explain --json on such a text (lnrepro.hang/2; /1 documents lack "
        "source, idle, unknowns, key and the per-group name, frames, cbs, go_message)",
    ),
    "tolerance.json": (
        tolerance.ToleranceDoc,  # two documents, told apart by their fields
        "lnrepro tolerance --json (lnrepro.tolerance/1): the tests' own tolerances, or a shape "
        "study",
    ),
    "plan.json": (
        api.Plan,
        "lnrepro run --dry-run --json (lnrepro.plan/2)",
    ),
    "shrink.json": (
        shrink.ShrinkDoc,
        "lnrepro shrink --json (lnrepro.shrink/1): the smallest, loudest deterministic case, "
        "its smaller neighbours and what the search cost",
    ),
    "version-bisect.json": (
        releases.VersionBisectDoc,
        "lnrepro bisect --package NAME --json (lnrepro.version-bisect/1): the first bad (or, "
        "with --find-fix, first fixed) release of a dependency and every release judged",
    ),
    "shrink-state.json": (
        shrink.StateDoc,
        "A long shrink's saved state (lnrepro.shrink-state/1): the request and every candidate "
        "judged so far, for --resume",
    ),
}


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one derived file, from its type."""
    kind, title = DERIVED[name]
    return document_schema(kind, title=title, file=name)


def text(name: str) -> str:
    return json.dumps(schema(name), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only say which files differ")
    a = ap.parse_args(argv)
    stale = []
    for name in DERIVED:
        path = SCHEMAS / name
        want = text(name)
        have = path.read_text(encoding="utf-8") if path.exists() else None
        if have == want:
            continue
        stale.append(name)
        if not a.check:
            path.write_text(want, encoding="utf-8")
            print(f"wrote docs/schemas/{name}")
    if a.check and stale:
        print(
            f"docs/schemas/ differs from the types: {', '.join(stale)}; "
            "run `python scripts/schemas.py` and commit the result",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
