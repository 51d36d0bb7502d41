"""Records and reports, for real: `runs`, `show`, `compare`, `report --format md|json|junit` on
records written by real runs and bisects. The Markdown is read back by a CommonMark parser
(markdown-it-py) and the JUnit by a JUnit consumer (junitparser), never by our own code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped
from markdown_it import MarkdownIt

from tests.conftest import need_toolchain
from tests.lookalike import KERNEL, GroundTruth, Spec, device_env, generate

LNREPRO = [sys.executable, "-m", "lnrepro"]
GIT_FILE_OK = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}
SECTIONS = [
    "Component / Area", "Issue Type (optional)", "Observed", "Expected", "1. Steps (exact commands)",
    "2. Input data / link or description", "3. Frequency", "1. Software Versions", "2. Hardware Details",
    "Is this a regression?", "Regression Details", "Logs & Diagnostics",
]  # fmt: skip


def lnrepro(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([*LNREPRO, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                       env={**os.environ, **GIT_FILE_OK, **(env or {})})  # fmt: skip
    assert "Traceback" not in p.stderr, p.stderr
    return p


class Md:
    """A Markdown document as a CommonMark parser (with GFM tables) sees it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = MarkdownIt("commonmark").enable("table").parse(text)

    def headings(self) -> list[str]:
        t = self.tokens
        return [t[i + 1].content for i, tok in enumerate(t) if tok.type == "heading_open"]

    def section(self, title: str) -> list[Any]:
        """The tokens between the heading ``title`` and the next heading."""
        t = self.tokens
        start = next(
            i for i, tok in enumerate(t) if tok.type == "heading_open" and t[i + 1].content == title
        )
        end = next((i for i in range(start + 3, len(t)) if t[i].type == "heading_open"), len(t))
        return t[start + 3 : end]

    def tables(self, title: str) -> list[list[list[str]]]:
        """Each table in a section, as rows of cell texts (the header row first)."""
        out: list[list[list[str]]] = []
        row: list[str] | None = None
        for tok in self.section(title):
            if tok.type == "table_open":
                out.append([])
            elif tok.type == "tr_open":
                row = []
            elif tok.type == "inline" and row is not None:
                row.append(tok.content)
            elif tok.type == "tr_close" and row is not None:
                out[-1].append(row)
                row = None
        return out

    def fences(self, title: str) -> list[tuple[str, str]]:
        return [(tok.info, tok.content) for tok in self.section(title) if tok.type == "fence"]


def check_template(md: Md) -> None:
    assert md.headings() == SECTIONS
    for tok in md.tokens:  # every fence is closed: nothing after a stray ``` swallowed the rest
        assert not (tok.type == "fence" and tok.map and tok.map[1] > len(md.text.splitlines()) + 1)


# ---------------------------------------------------------------------------------- emulator runs
@pytest.fixture(scope="module")
def emulator_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Two real emulator runs: the shipped kernel (2 attempts) and the fixed one."""
    cwd = tmp_path_factory.mktemp("records")
    a = lnrepro("run", "-n", "2", "--json", cwd=cwd)
    b = lnrepro("run", "--kernel-era", "fixed", "--json", cwd=cwd)
    return cwd, json.loads(a.stdout), json.loads(b.stdout)


def test_run_json_has_an_id_that_runs_lists_with_a_headline(emulator_runs: Any) -> None:
    cwd, a, b = emulator_runs
    assert a["id"] == Path(a["record_dir"]).name and a["schema"] == "lnrepro.run/2"
    listed = json.loads(lnrepro("runs", "--json", cwd=cwd).stdout)
    byid = {e["id"]: e for e in listed}
    assert byid[a["id"]]["headline"] == "7 FAIL, 1 PASS" and byid[b["id"]]["headline"] == "8 PASS"
    assert byid[a["id"]]["where"] == "emulator" and byid[a["id"]]["state"] == "complete"
    table = lnrepro("runs", cwd=cwd).stdout
    assert a["id"][:10] in table and "7 FAIL" in table


def test_show_accepts_last_an_id_and_a_prefix(emulator_runs: Any) -> None:
    cwd, a, b = emulator_runs
    assert json.loads(lnrepro("show", "last", "--json", cwd=cwd).stdout)["id"] == b["id"]
    assert json.loads(lnrepro("show", a["id"], "--json", cwd=cwd).stdout)["verdict"] == "FAIL"
    p = lnrepro("show", "run-", cwd=cwd)
    assert (
        p.returncode == 4
        and "matches 2 records" in p.stderr
        and len(p.stderr.strip().splitlines()) == 1
    )
    p = lnrepro("show", "nope", cwd=cwd)
    assert p.returncode == 4 and "no record 'nope'" in p.stderr


def test_markdown_of_an_emulator_run_in_tt_metals_bug_template(emulator_runs: Any) -> None:
    cwd, a, _ = emulator_runs
    md = Md(lnrepro("report", a["id"], cwd=cwd).stdout)
    check_template(md)
    observed = md.tables("Observed")[0]
    assert observed[0] == ["test", "verdict", "max_diff", "mean_diff", "first failure"]
    rows = {r[0]: r for r in observed[1:]}
    assert len(rows) == 8
    assert rows["BugRepro_Deterministic_256Tiles"][1] == "**FAIL**"
    assert rows["BugRepro_Deterministic_256Tiles"][2] == "1000 (dx)"
    assert rows["NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"][1] == "**PASS**"
    freq = md.tables("3. Frequency")[0]
    assert any(
        r[0] == "BugRepro_Deterministic_256Tiles" and r[2].startswith("0/2 (0%; 95% CI")
        for r in freq
    )
    (info, cmd), (_, raw) = md.fences("1. Steps (exact commands)")
    assert info == "sh" and cmd.startswith("lnrepro run --backend emulator --kernel-era 2025-12")
    assert "--gtest_filter=" in raw and "--emu_kernel=2025-12" in raw
    logs = md.fences("Logs & Diagnostics")
    assert len(logs) == 7 and all(
        "[ RUN      ] LayerNormBackwardOpTest." in text for _, text in logs
    )
    assert "dx FAILED: max_diff=1000, mean_diff=1004.21" in logs[0][1]
    # the fixed kernel's report says so, and the comparison shows the fix
    rows_cmp = json.loads(lnrepro("compare", a["id"], "last", "--json", cwd=cwd).stdout)["tests"]
    fixed = {r["test"].split(".")[1]: r for r in rows_cmp}
    assert fixed["BugRepro_Deterministic_256Tiles"]["change"].startswith("FAIL → PASS")
    assert fixed["BugRepro_Deterministic_256Tiles"]["max_diff_a"] == 1000
    assert fixed["BugRepro_Deterministic_256Tiles"]["pass_rate_b"] == 1.0
    cmp_md = Md(lnrepro("compare", a["id"], "last", "--markdown", cwd=cwd).stdout)
    assert len(cmp_md.tokens) and sum(t.type == "tr_open" for t in cmp_md.tokens) == 9


def test_junit_of_an_emulator_run_read_by_a_junit_consumer(
    emulator_runs: Any, tmp_path: Path
) -> None:
    cwd, a, _ = emulator_runs
    out = tmp_path / "results.xml"
    p = lnrepro("report", a["id"], "--format", "junit", "-o", str(out), cwd=cwd)
    assert p.returncode == 0 and p.stdout == ""
    xml = JUnitXml.fromfile(str(out))
    suites = list(xml)
    cases = [c for s in suites for c in s]
    assert len(cases) == 16  # 8 tests x 2 attempts
    failed = [c for c in cases if any(isinstance(r, Failure) for r in c.result)]
    assert len(failed) == 14 and xml.failures == 14 and xml.tests == 16
    first = next(
        c for c in failed if c.name.startswith("BugRepro_Deterministic_256Tiles [attempt 1")
    )
    assert (
        first.classname == "LayerNormBackwardOpTest"
        and first.result[0].message == "Value of: dx_close"
    )
    assert "dx mismatch with deterministic inputs (features=8192)" in first.result[0].text
    props = (
        {p.name: p.value for p in first.child(junitparser_properties())}
        if hasattr(first, "child")
        else {}
    )
    if props:
        assert props["dx.max_diff"] == "1000"
    assert (
        json.loads(lnrepro("report", a["id"], "--format", "json", cwd=cwd).stdout)["id"] == a["id"]
    )


def junitparser_properties() -> Any:
    from junitparser import Properties

    return Properties


def test_junit_marks_crashes_and_hangs_as_errors() -> None:
    from lnrepro.present.report import junit

    doc = {"id": "run-x", "kind": "run", "attempts": [{"index": 1, "env_error": None, "tests": [
        {"name": "S.Crashes", "status": "CRASHED", "crash": {"reason": "signal SIGABRT"}, "failures": []},
        {"name": "S.Hangs", "status": "TIMEOUT", "crash": {"reason": "killed after 5 s"}, "failures": []},
        {"name": "S.Skipped", "status": "SKIPPED", "failures": []},
        {"name": "S.Ansi|<x>&", "status": "FAILED", "failures": [{"message": "\x1b[31mred\x1b[0m <&> ]]>"}]},
    ]}]}  # fmt: skip
    xml = JUnitXml.fromstring(junit(doc))
    cases = {c.name.split(" [")[0]: c for s in xml for c in s}
    assert (
        isinstance(cases["Crashes"].result[0], Error)
        and "SIGABRT" in cases["Crashes"].result[0].message
    )
    assert (
        isinstance(cases["Hangs"].result[0], Error) and cases["Hangs"].result[0].type == "TIMEOUT"
    )
    assert isinstance(cases["Skipped"].result[0], Skipped)
    bad = cases["Ansi|<x>&"].result[0]
    assert isinstance(bad, Failure) and "<&> ]]>" in bad.text and "\x1b" not in bad.text


def test_markdown_holds_hostile_names_and_logs() -> None:
    from lnrepro.present.report import run_markdown

    name = "S.T|a`b<script>"
    doc = {"id": "run-x", "kind": "run", "verdict": "FAIL", "repeat": 1, "filter": "*", "record_dir": "/r",
           "tests": [{"name": name, "verdict": "FAIL", "runs": 1, "passed": 0, "worst_metrics": {"dx": {"max_diff": 2.0}}}],
           "attempts": [{"index": 1, "log": "a.log", "tests": [{"name": name, "failures": [{"message": "```\n|x|"}]}]}],
           "rerun": ["lnrepro", "run", "--filter", "a b"]}  # fmt: skip
    log = f"[ RUN      ] {name}\n```\nnot a fence end\n~~~\n[  FAILED  ] {name} (1 ms)\n"
    md = Md(run_markdown(doc, {"a.log": log}))
    check_template(md)
    rows = md.tables("Observed")[0]
    assert len(rows) == 2 and all(len(r) == 5 for r in rows)
    assert rows[1][0].startswith("T") and rows[1][1] == "**FAIL**"  # the pipe did not split a cell
    html = [
        c for tok in md.tokens for c in [tok, *(tok.children or [])] if c.type.startswith("html")
    ]
    assert html == [md.tokens[0]]  # raw HTML: only lnrepro's own leading comment; the name is text
    ((_, text),) = md.fences("Logs & Diagnostics")
    assert "not a fence end" in text and text.rstrip().endswith("(1 ms)")


# ---------------------------------------------------------------------------------- records on disk
def test_old_partial_and_corrupt_records_are_listed_never_a_crash(
    emulator_runs: Any, tmp_path: Path
) -> None:
    import shutil

    _, a, _ = emulator_runs
    base = tmp_path / ".lnrepro" / "runs"
    base.mkdir(parents=True)
    # a record of schema /1 (no id): loads, its id the directory's name
    old = json.loads(Path(a["record_dir"], "record.json").read_text())
    old["schema"] = "lnrepro.run/1"
    del old["id"]
    (base / "run-20250101-000000").mkdir()
    (base / "run-20250101-000000" / "record.json").write_text(json.dumps(old))
    # an interrupted run, and one cut off while its record was written
    shutil.copytree(a["record_dir"], base / "run-20250101-000001")
    part = json.loads((base / "run-20250101-000001" / "record.json").read_text())
    part.update(state="interrupted", stop_reason="interrupted (SIGTERM)")
    (base / "run-20250101-000001" / "record.json").write_text(json.dumps(part))
    (base / "run-20250101-000002").mkdir()
    (base / "run-20250101-000002" / "record.json").write_text(
        '{"schema": "lnrepro.run/2", "tests": ['
    )
    p = lnrepro("runs", "--json", cwd=tmp_path)
    byid = {e["id"]: e for e in json.loads(p.stdout)}
    assert byid["run-20250101-000000"]["headline"] == "7 FAIL, 1 PASS"
    assert byid["run-20250101-000001"]["state"] == "interrupted"
    assert (
        byid["run-20250101-000002"]["state"] == "unreadable"
        and "not valid JSON" in byid["run-20250101-000002"]["problem"]
    )
    p = lnrepro("runs", cwd=tmp_path)
    assert p.returncode == 0 and "warning: run-20250101-000002" in p.stderr
    assert (
        json.loads(lnrepro("show", "run-20250101-000000", "--json", cwd=tmp_path).stdout)["id"]
        == "run-20250101-000000"
    )
    p = lnrepro("report", "run-20250101-000002", cwd=tmp_path)
    assert (
        p.returncode == 4
        and "not valid JSON" in p.stderr
        and len(p.stderr.strip().splitlines()) == 1
    )


# ---------------------------------------------------------------------------------- bisect and container
def test_markdown_and_junit_of_a_bisect(tmp_path: Path) -> None:
    t: GroundTruth = generate(tmp_path / "tt-metal", Spec(commits=60, tus=1))
    has_fix = f"grep -q 'zero_dst_reg(dest, kMeanDyGamma);' {KERNEL}"
    p = lnrepro(
        "bisect",
        "--repo",
        t.path,
        "--good",
        t.good,
        "--bad",
        t.bad,
        "--command",
        has_fix,
        "--json",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["id"].startswith("bisect-") and r["first_bad"] == t.culprit
    repo = Path(t.path)  # its records are kept inside .git, out of the checkout: found from there
    assert not (repo / ".lnrepro").exists() and not (tmp_path / ".lnrepro").exists()
    listed = {e["id"]: e for e in json.loads(lnrepro("runs", "--json", cwd=repo).stdout)}
    assert listed[r["id"]]["kind"] == "bisect" and t.culprit[:12] in listed[r["id"]]["headline"]
    md = Md(lnrepro("report", r["id"], cwd=repo).stdout)
    check_template(md)
    details = md.tables("Regression Details")[0]
    assert details[0][:5] == ["#", "kind", "commit", "subject", "mark"]
    assert len(details) - 1 == len(r["steps_taken"])
    assert any(t.culprit[:12] in row[2] and row[4] == "**bad**" for row in details[1:])
    assert "Yes: introduced by" in md.text and t.culprit[:12] in md.text
    (_, ours), (_, git) = md.fences("1. Steps (exact commands)")
    assert ours.startswith("lnrepro bisect --repo") and "--command" in ours
    assert git.startswith(f"git bisect start {t.bad} {t.good}")
    xml = JUnitXml.fromstring(lnrepro("report", r["id"], "--format", "junit", cwd=repo).stdout)
    cases = [c for s in xml for c in s]
    assert len(cases) == len(r["steps_taken"])
    bad = [c for c in cases if any(isinstance(x, Failure) for x in c.result)]
    assert len(bad) == sum(s["mark"] == "bad" for s in r["steps_taken"])


@pytest.mark.docker
def test_markdown_of_a_lookalike_container_run(
    lookalike_builds: dict[str, Path], toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    need_toolchain()
    tree = lookalike_builds["bad"]
    env = device_env(tmp_path, tree)
    p = lnrepro("run", "--tt-metal", str(tree), "--runner", "docker", "--image", toolchain_image,
                "--filter", "*Deterministic_2048Features:*NIGHTLY*", "--json", cwd=tmp_path, env=env, timeout=900)  # fmt: skip
    doc = json.loads(p.stdout)
    md = Md(lnrepro("report", doc["id"], cwd=tmp_path).stdout)
    check_template(md)
    versions = "".join(
        tok.content for tok in md.section("1. Software Versions") if tok.type == "inline"
    )
    assert doc["fingerprint"]["commit"][:12] in versions and toolchain_image in versions
    hardware = "".join(
        tok.content for tok in md.section("2. Hardware Details") if tok.type == "inline"
    )
    assert "/dev/tenstorrent/0" in hardware
    (_, ours), (_, raw) = md.fences("1. Steps (exact commands)")
    assert ours.startswith("lnrepro run --tt-metal") and "--runner docker" in ours
    assert (
        raw.count("docker run --rm") >= 2
        and "--device /dev/tenstorrent/0:/dev/tenstorrent/0" in raw
    )
    observed = {r[0]: r for r in md.tables("Observed")[0][1:]}
    assert observed["BugRepro_Deterministic_2048Features"][1] == "**FAIL**"
    assert observed["NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"][1] == "**PASS**"


def test_readme_report_excerpt_is_what_the_script_writes() -> None:
    root = Path(__file__).resolve().parent.parent
    p = subprocess.run([sys.executable, str(root / "scripts" / "report_excerpt.py"), "--check"],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr
