"""The issue bodies lnrepro writes, read by GitHub's own parser of issue forms
(``@github/issue-parser`` from npm) against tt-metal's bug form's fields: every field found,
every dropdown answered with one of its options, the values as written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lnrepro.present import markdown as md
from tests.conftest import ROOT, need

PARSER = "@github/issue-parser@2.0.0"
SCRIPT = """import { parseIssue } from '@github/issue-parser'
import { readFileSync } from 'fs'
console.log(JSON.stringify(parseIssue(readFileSync(process.argv[2], 'utf8'), readFileSync(process.argv[3], 'utf8'))))
"""


@pytest.fixture(scope="module")
def issue_parser() -> Path:
    """The parser installed once (scripts/test.sh has npm install it into .cache/npm)."""
    need(
        shutil.which("node") is not None and shutil.which("npm") is not None,
        "node and npm are not installed",
    )
    where = Path(os.environ.get("LNREPRO_NPM_CACHE") or ROOT / ".cache" / "npm")
    if not (where / "node_modules" / "@github" / "issue-parser").is_dir():
        p = subprocess.run(
            [
                "npm",
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(where),
                PARSER,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        need(p.returncode == 0, f"npm could not install {PARSER}: {p.stderr[-300:]}")
    script = where / "parse-issue.mjs"
    script.write_text(SCRIPT)
    return script


def form_template() -> dict[str, object]:
    """The form's fields as an issue-form template (ids, kinds, labels, options): what a parser
    of filled-in forms (github/issue-parser) reads the body against."""
    body: list[dict[str, object]] = []
    for f in md.FORM:
        attrs: dict[str, object] = {"label": f.label}
        if f.options:
            attrs["options"] = list(f.options)
        req = {"required": f.required}
        body.append({"type": f.kind, "id": f.id, "attributes": attrs, "validations": req})
    return {"name": "Bug Report", "body": body}


def parse(script: Path, body: str, tmp: Path) -> dict[str, object]:
    (tmp / "body.md").write_text(body)
    (tmp / "template.json").write_text(json.dumps(form_template()))  # YAML is a superset of JSON
    p = subprocess.run(
        ["node", str(script), str(tmp / "body.md"), str(tmp / "template.json")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=script.parent,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)  # type: ignore[no-any-return]


def test_a_run_report_is_tt_metals_bug_form_filled_in(issue_parser: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "w"
    cwd.mkdir()
    run = subprocess.run(
        [sys.executable, "-m", "lnrepro", "run", "-n", "2", "--filter", "*2048Features:*NIGHTLY*"],
        cwd=cwd,
        capture_output=True,
        timeout=300,
    )
    assert run.returncode == 1
    body = subprocess.run(
        [sys.executable, "-m", "lnrepro", "report", "last"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    got = parse(issue_parser, body, tmp_path)
    required = {f.id for f in md.FORM if f.required}
    assert required <= set(got), required - set(got)
    assert got["issue_type"] == ["Bad Outputs"] and got["regression"] == ["Unknown"]
    assert (
        got["priority"] == [] and "optional_impact" not in got
    )  # unanswered, as GitHub writes them
    assert str(got["area"]).startswith("tt-train")
    assert "BugRepro_Deterministic_2048Features" in str(got["observed"])
    for f in md.FORM:
        if f.options and got.get(f.id):
            assert set(got[f.id]) <= set(f.options), (f.id, got[f.id])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("verdicts", "kind"),
    [
        (("TIMEOUT",), "Deterministic Hang"),
        (("TIMEOUT", "PASSED"), "Non-Deterministic Hang"),
        (("CRASHED",), "Runtime Crash"),
        (("FAILED",), "Bad Outputs"),
    ],
)
def test_issue_type_is_one_of_the_forms_options(
    verdicts: tuple[str, ...], kind: str, issue_parser: Path, tmp_path: Path
) -> None:
    from lnrepro.model.gtest import TestResult, TestStatus
    from lnrepro.model.record import Attempt, RunRecord
    from lnrepro.model.requests import EmulatorSpec, RunRequest, TestSpec

    rec = RunRecord(
        request=RunRequest(
            backend=EmulatorSpec(),
            tests=TestSpec(gtest_filter="*", repeat=len(verdicts)),
            record_dir=tmp_path,
        ),
        record_dir=tmp_path / "run-1",
    )
    for i, v in enumerate(verdicts, 1):
        rec.attempts.append(
            Attempt(
                index=i,
                argv=["p"],
                exit_code=0 if v == "PASSED" else 1,
                timed_out=v == "TIMEOUT",
                seconds=1.0,
                log="a.log",
                tests=[TestResult(name="S.T", status=TestStatus(v))],
            )
        )
    got = parse(issue_parser, md.run_markdown(rec), tmp_path)
    assert got["issue_type"] == [kind]
