"""ttnn's pytest tests and seed 003's hang, end to end in the container, on the look-alike.

The look-alike's ttnn side (tests/lookalike/tree: pytest.ini as tt-metal's, assert_with_pcc and
comp_pcc as tt-metal's) has a LayerNorm test that a main commit pushes under its PCC threshold,
and an op under development whose reader pushes one page fewer than compute waits for from one
merged branch on: the kernels deadlock and the watcher log says where.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.consumers.schemas import errors
from tests.harness import Result, lnrepro_process
from tests.leftovers import left, running_in
from tests.lookalike import HANG_KERNEL, HANG_TEST, PCC_TEST, GroundTruth, Spec, generate

pytestmark = pytest.mark.docker
GIT_FILE_OK = {  # the look-alike's submodules come from local paths
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}


def lnrepro_docker(*args: str, cwd: Path, timeout: float = 900) -> Result:
    """:func:`lnrepro_process` that allows the look-alike's local submodules, and then checks
    that it ended without a traceback and left no container behind."""
    p = lnrepro_process(*args, cwd=cwd, timeout=timeout, env=GIT_FILE_OK)
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert not left(p.owner), "a container was left behind"
    return p


def run_json(tree: Path, tmp: Path, image: str, *extra: str) -> tuple[int, dict[str, Any]]:
    tmp.mkdir(parents=True, exist_ok=True)
    p = lnrepro_docker(
        "run",
        "--tt-metal",
        str(tree),
        "--image",
        image,
        "--record-dir",
        str(tmp / "runs"),
        "--json",
        *extra,
        cwd=tmp,
    )
    assert p.stdout.strip(), p.stderr[-3000:]
    assert not errors(p.stdout), errors(p.stdout)
    doc: dict[str, Any] = json.loads(p.stdout)
    return p.returncode, doc


def record(doc: dict[str, Any]) -> dict[str, Any]:
    rec: dict[str, Any] = json.loads((Path(doc["record_dir"]) / "record.json").read_text())
    assert not errors(json.dumps(rec)), errors(json.dumps(rec))
    return rec


def test_pytest_runs_in_the_container_with_pcc_metrics_and_compare_with_gtest_runs(
    lookalike: GroundTruth,
    lookalike_builds: dict[str, Path],
    toolchain_image: str,
    fake_card_host: None,
    tmp_path: Path,
) -> None:
    """`--pytest`: pytest's own JUnit XML read, tt-metal's PCC message parsed into the metric
    pcc; the record is the gtest record's schema, so `compare` and `report` take both."""
    # the builds: "good" is before the PCC regression, "main" after it
    kernel = "ttnn/cpp/ttnn/operations/normalization/layernorm/device/kernels/compute/layernorm.cpp"
    assert "rows_per_stat = 1;" in (lookalike_builds["good"] / kernel).read_text()
    assert "rows_per_stat = 32;" in (lookalike_builds["main"] / kernel).read_text()
    code, good = run_json(
        lookalike_builds["good"], tmp_path / "g", toolchain_image, "--pytest", PCC_TEST, "-n", "2"
    )
    assert code == 0 and good["verdict"] == "PASS", good
    code, bad = run_json(
        lookalike_builds["main"], tmp_path / "b", toolchain_image, "--pytest", PCC_TEST
    )
    assert code == 1 and bad["verdict"] == "FAIL"
    rec_good, rec_bad = record(good), record(bad)
    for rec in (rec_good, rec_bad):
        assert rec["attempts"][0]["argv"][1:3] == ["-m", "pytest"]
        assert all(
            (Path(rec["record_dir"]) / f"attempt-{a['index']}.xml").is_file()
            for a in rec["attempts"]
        )
    [t_bad] = rec_bad["attempts"][0]["tests"]
    assert t_bad["name"] == PCC_TEST and t_bad["status"] == "FAILED"
    pcc_bad = t_bad["metrics"]["(unnamed)"]["pcc"]
    assert 0.999 < pcc_bad < 0.9999  # the number in tt-metal's "AssertionError: <pcc>"
    assert t_bad["failures"][0]["message"] == f"AssertionError: {pcc_bad!r}"
    pcc_good = [t["metrics"]["(unnamed)"]["pcc"] for a in rec_good["attempts"] for t in a["tests"]]
    assert len(pcc_good) == 2 and min(pcc_good) > 0.99999  # printed by the passing test

    # the same record schema as a gtest run: compare takes a pytest run and a gtest run
    code, gtest = run_json(
        lookalike_builds["good"],
        tmp_path / "t",
        toolchain_image,
        "--filter",
        "*Deterministic_2048Features",
    )
    assert gtest["schema"] == good["schema"] == bad["schema"]
    p = lnrepro_docker("compare", good["record_dir"], bad["record_dir"], "--json", cwd=tmp_path)
    assert not errors(p.stdout), errors(p.stdout)
    cmp = json.loads(p.stdout)
    [row] = cmp["tests"]
    assert row["test"] == PCC_TEST and row["change"].startswith("PASS → FAIL; ")
    # the plugin's margin at the test's own call site (assert_with_pcc calls comp_pcc: once)
    assert "; test_layer_norm.py:" in row["change"] and "utils_for_testing" not in row["change"]
    assert "; pcc " in row["change"]
    assert row["pcc_a"] == min(pcc_good) and row["pcc_b"] == pcc_bad
    p = lnrepro_docker("compare", gtest["record_dir"], bad["record_dir"], cwd=tmp_path)
    assert p.returncode in (0, 1) and "test_layer_norm[64-1024]" in p.stdout
    md = lnrepro_docker("report", bad["record_dir"], "--format", "md", cwd=tmp_path).stdout
    assert "pcc" in md and f"{pcc_bad:.4f}" in md


def test_a_hung_op_is_diagnosed_killed_and_explained(
    lookalike_builds: dict[str, Path], toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    """Seed 003 without a card: the test times out, the container is removed, and the watcher
    log says that compute waits in cb_wait_front on 64 cores while the reader is done."""
    code, doc = run_json(
        lookalike_builds["main"],
        tmp_path / "h",
        toolchain_image,
        "--pytest",
        HANG_TEST,
        "--watcher",
        "1",
        "--timeout",
        "4",
    )
    assert doc["verdict"] == "HANG" and code != 0
    rec = record(doc)
    hang = rec["attempts"][0]["hang"]
    assert hang["pattern"] == "CONSUMER_STARVED" and hang["progress"] == "STUCK"
    top = hang["groups"][0]
    assert top["kernel"] == HANG_KERNEL and len(top["cores"]) == 64 and top["waypoint"] == "CWFW"
    assert any(p["role"] == "reader" and p["state"] == "done" for p in top["peers"])
    log = Path(rec["record_dir"]) / "attempt-1.watcher.log"
    assert log.is_file()
    # nothing of the hung test is left running (its processes worked in this tree; another
    # test's hang, in a worker beside this one, works in its own)
    assert not running_in(lookalike_builds["main"], "test_layernorm_fused_rm")

    for target in (doc["record_dir"], str(log)):
        p = lnrepro_docker("explain", target, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert "CONSUMER_STARVED" in p.stdout and "layernorm_fused_rm.cpp" in p.stdout
        assert "64 core(s)" in p.stdout
    p = lnrepro_docker("explain", str(log), "--json", cwd=tmp_path)
    assert not errors(p.stdout) and json.loads(p.stdout)["pattern"] == "CONSUMER_STARVED"
    md = lnrepro_docker("report", doc["record_dir"], "--format", "md", cwd=tmp_path).stdout
    assert "CONSUMER_STARVED" in md and "layernorm_fused_rm.cpp" in md


# ------------------------------------------------------------------ bisects on a small history
@pytest.fixture
def small(tmp_path: Path) -> GroundTruth:
    """A short history of its own per test: a bisect's worktree (and the look-alike's run count
    in it, which seeded flaky hangs follow) starts fresh."""
    return generate(tmp_path / "tt-metal", Spec(commits=40, tus=1))


def bisect(
    t: GroundTruth, tmp: Path, image: str, good: str, bad: str, *extra: str
) -> dict[str, Any]:
    tmp.mkdir(parents=True, exist_ok=True)
    p = lnrepro_docker(
        "bisect",
        "--repo",
        t.path,
        "--good",
        good,
        "--bad",
        bad,
        "--runner",
        "docker",
        "--image",
        image,
        "--record-dir",
        str(tmp / "runs"),
        "--json",
        *extra,
        cwd=tmp,
        timeout=1500,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert not errors(p.stdout), errors(p.stdout)
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def test_bisect_by_pcc_finds_the_regression(
    small: GroundTruth, toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    fp = small.first_parent
    at = fp.index(small.pcc_culprit or "")
    doc = bisect(
        small,
        tmp_path,
        toolchain_image,
        fp[at - 6],
        fp[at + 3],
        "--pytest",
        PCC_TEST,
        "--metric",
        "pcc",
        "--threshold",
        "0.9999",
    )
    assert doc["result"]["first_bad"] == small.pcc_culprit
    reasons = [s["reason"] for s in doc["steps"]]
    assert any(r.startswith("pcc=0.999") and "< 0.9999" in r for r in reasons), reasons


def flaky_seed(repo: str, good: str, bad: str, rate: float) -> int:
    """A seed for the look-alike's flaky hang (its conftest.py's draw: the seed, the commit and the
    worktree's run count) under which the bad endpoint's first run hangs elsewhere and its next
    two runs hang in the bug's kernel, and no commit of the range (good included) ever hangs
    elsewhere three runs in a row, which would set it aside: the bisect replays the same way for
    every history the generator writes (its shas depend on where it is written)."""

    def draw(seed: int, sha: str, n: int) -> float:
        key = f"{seed}:{sha}:{n}".encode()
        return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64

    between = subprocess.run(
        ["git", "-C", repo, "rev-list", f"{good}..{bad}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    shas = [*between, good]

    def no_streak(seed: int, sha: str) -> bool:  # from run 2 (the bad endpoint takes 2 or 3 first)
        hangs = [draw(seed, sha, n) < rate for n in range(2, 40)]
        return not any(all(hangs[i : i + 3]) for i in range(len(hangs) - 2))

    return next(
        s
        for s in range(100_000)
        if draw(s, bad, 0) < rate <= draw(s, bad, 1)
        and draw(s, bad, 2) >= rate
        and all(no_streak(s, c) for c in shas)
    )


@pytest.mark.parametrize("named", [True, False], ids=["hang-in", "seen-twice"])
def test_bisect_on_hang_finds_the_merged_branchs_commit_past_flaky_hangs(
    named: bool, small: GroundTruth, toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    """`--on-hang bad --watcher`: the hang's place is its signature, so the flaky hangs at device
    open (another op's kernels) stay noise, even the one at the bad endpoint; the culprit is the
    commit on the merged branch, not the merge."""
    fp = small.first_parent
    at = fp.index(small.hang_merge or "")
    good, bad = fp[at - 4], fp[at + 3]
    rate = 0.25
    flake = f"TT_LOOKALIKE_FLAKE=hang={rate},seed={flaky_seed(small.path, good, bad, rate)}"
    named_args = ("--hang-in", "layernorm_fused_rm.cpp") if named else ()
    doc = bisect(
        small,
        tmp_path,
        toolchain_image,
        good,
        bad,
        "--pytest",
        HANG_TEST,
        "--on-hang",
        "bad",
        "--watcher",
        "1",
        "--timeout",
        "6",
        "--env",
        flake,
        *named_args,
    )
    r = doc["result"]
    assert r["first_bad"] == small.hang_culprit and r["first_bad"] not in fp
    assert r["signature"]["hang_key"] == "CONSUMER_STARVED:layernorm_fused_rm.cpp:TRISC0:CWFW"
    first = doc["steps"][0]
    assert first["sha"] == bad and first["verdict"] == "HANG"
    assert ("elsewhere" if named else "seen once") in first["reason"], first["reason"]
    # the flaky hang at the bad endpoint was set aside, not learned
    assert all(
        "writer_binary" not in (s["reason"] or "")
        or "elsewhere" in s["reason"]
        or "seen once" in s["reason"]
        for s in doc["steps"]
    )


def test_a_hang_the_watcher_does_not_place_never_becomes_the_signature(
    small: GroundTruth, toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    """With --watcher on, a hang with no watcher log to place it (here the log is sent where
    lnrepro does not look) teaches no place: the bad endpoint's runs are noise, and the bisect
    stops with that reason instead of searching with a signature that any timeout matches.
    (--no-triage: tt-triage, run on each hang, would place it; test_triage.py shows that.)"""
    fp = small.first_parent
    at = fp.index(small.hang_merge or "")
    p = lnrepro_docker(
        "bisect",
        "--repo",
        small.path,
        "--good",
        fp[at - 4],
        "--bad",
        fp[at + 3],
        "--runner",
        "docker",
        "--image",
        toolchain_image,
        "--pytest",
        HANG_TEST,
        "--on-hang",
        "bad",
        "--watcher",
        "1",
        "--timeout",
        "3",
        "--no-triage",
        "--env",
        "TT_METAL_LOGS_PATH=/tmp/elsewhere",
        "--record-dir",
        str(tmp_path / "runs"),
        cwd=tmp_path,
        timeout=900,
    )
    assert p.returncode != 0 and len(p.stderr.strip().splitlines()[-1:]) == 1
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("lnrepro: error: the bad endpoint") and "does not place" in last, last
    state = json.loads((Path(small.path) / ".git" / "lnrepro" / "bisect.json").read_text())
    assert state["signature"] is None
    ends = [s for s in state["steps"] if s["kind"] == "endpoint"]
    assert len(ends) == 3 and all(
        s["mark"] == "skip" and "does not place" in s["reason"] for s in ends
    )
