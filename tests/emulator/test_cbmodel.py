"""The circular-buffer model as a googletest binary: balanced configs pass, a page-count mismatch
hangs like a tt-metal test, and the watcher.log it writes diagnoses as the hang it is."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lnrepro.emulator.cbmodel.config import ENV_CONFIG, TEST_FILE, CbConfig, load_config
from lnrepro.emulator.cbmodel.cores import simulate
from lnrepro.emulator.cbmodel.dprint import dprint_cores
from lnrepro.emulator.cbmodel.watcher import watcher_interval, watcher_log_path
from lnrepro.hang.model import HangPattern, Progress
from lnrepro.hang.watcher.diagnose import diagnose
from lnrepro.hang.watcher.dprint import parse_dprint
from lnrepro.hang.watcher.log import parse, parse_file

CB = [sys.executable, "-m", "lnrepro.emulator.cbmodel"]
CLEAN_ENV = {
    k: v for k, v in os.environ.items() if not k.startswith(("TT_METAL_", "GTEST_", "LNREPRO_CB"))
}


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CB, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={**CLEAN_ENV, **(env or {})},
    )


def config(tmp_path: Path, name: str = "cb.json", **values: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(values), encoding="utf-8")
    return path


def hang(tmp_path: Path, cfg: Path, env: dict[str, str], until_dumps: int = 3) -> tuple[str, Path]:
    """Start a run that must hang, wait for its watcher dumps, kill it; (stdout, watcher.log)."""
    log = (
        Path(env.get("TT_METAL_LOGS_PATH", str(tmp_path))) / "generated" / "watcher" / "watcher.log"
    )
    out = tmp_path / "stdout.txt"
    with out.open("w") as fh:
        p = subprocess.Popen(
            [*CB, f"--cb_config={cfg}", "--gtest_color=no"],
            stdout=fh,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
            env={**CLEAN_ENV, **env},
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                text = log.read_text() if log.exists() else ""
                if text.count(" completed at ") >= until_dumps:
                    break
                assert p.poll() is None, "the hung run must not exit by itself"
                time.sleep(0.05)
            else:
                pytest.fail(f"no {until_dumps} watcher dumps in 30 s")
            time.sleep(0.3)
            assert p.poll() is None, "still hung after its dumps"
        finally:
            p.kill()
            p.wait(timeout=10)
    assert p.returncode == -signal.SIGKILL
    with pytest.raises(ProcessLookupError):  # nothing left running
        os.kill(p.pid, 0)
    return out.read_text(), log


def test_list_tests_and_filter(tmp_path: Path) -> None:
    listed = run("--gtest_list_tests", cwd=tmp_path).stdout
    assert listed == "CbModelTest.\n  LayerNormFusedRm\n  LayerNormFusedRm_SingleCore\n"
    one = run("--gtest_list_tests", "--gtest_filter=*SingleCore", cwd=tmp_path).stdout
    assert one == "CbModelTest.\n  LayerNormFusedRm_SingleCore\n"
    neg = run("--gtest_filter=-*SingleCore", "--gtest_color=no", cwd=tmp_path).stdout
    assert (
        "Note: Google Test filter = -*SingleCore" in neg
        and "[ RUN      ] CbModelTest.LayerNormFusedRm\n" in neg
    )
    assert (
        "Running 1 test from 1 test suite." in neg
        and "CbModelTest.LayerNormFusedRm_SingleCore" not in neg
    )


def test_balanced_config_passes_quickly_with_a_report(tmp_path: Path) -> None:
    cfg = config(tmp_path, reader_pages_per_block=32, compute_pages_per_block=32)
    t0 = time.monotonic()
    p = run(
        f"--cb_config={cfg}",
        "--gtest_color=no",
        f"--gtest_output=json:{tmp_path}/r.json",
        cwd=tmp_path,
    )
    assert time.monotonic() - t0 < 10
    assert p.returncode == 0, p.stdout + p.stderr
    assert "[       OK ] CbModelTest.LayerNormFusedRm (" in p.stdout
    assert p.stdout.rstrip().endswith("[  PASSED  ] 2 tests.")
    assert "\x1b[" not in p.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["tests"] == 2 and report["failures"] == 0
    assert [t["name"] for t in report["testsuites"][0]["testsuite"]] == [
        "LayerNormFusedRm",
        "LayerNormFusedRm_SingleCore",
    ]
    assert not (tmp_path / "generated").exists()  # no watcher asked for, none written


def test_the_config_comes_from_the_environment_too_and_toml_works(tmp_path: Path) -> None:
    toml = tmp_path / "cb.toml"
    toml.write_text(
        'test_name = "GroupNormSharded"\nblocks_per_core = 2\n[kernels]\ncompute = "k/compute/gn.cpp"\n'
    )
    p = run("--gtest_list_tests", cwd=tmp_path, env={ENV_CONFIG: str(toml)})
    assert p.stdout == "CbModelTest.\n  GroupNormSharded\n  GroupNormSharded_SingleCore\n"
    assert load_config(toml).compute_kernel == "k/compute/gn.cpp"


def test_bad_configs_are_refused(tmp_path: Path) -> None:
    assert run(f"--cb_config={config(tmp_path, reader_pages=3)}", cwd=tmp_path).returncode == 2
    bad = run(f"--cb_config={config(tmp_path, grid=[0, 8])}", cwd=tmp_path)
    assert bad.returncode == 2 and "grid" in bad.stderr
    assert run(f"--cb_config={tmp_path}/missing.json", cwd=tmp_path).returncode == 2


def test_leftover_pages_fail_the_test_without_a_hang(tmp_path: Path) -> None:
    cfg = config(tmp_path, reader_pages_per_block=33, cb_in_capacity=200)
    p = run(
        f"--cb_config={cfg}",
        "--gtest_color=no",
        f"--gtest_output=xml:{tmp_path}/r.xml",
        cwd=tmp_path,
    )
    assert p.returncode == 1
    assert f"{TEST_FILE}:58: Failure" in p.stdout and "pages_left_in_cbs" in p.stdout
    assert " 2 FAILED TESTS" in p.stdout
    assert 'failures="2"' in (tmp_path / "r.xml").read_text()


def test_mismatched_pages_hang_and_the_watcher_log_says_consumer_starved(tmp_path: Path) -> None:
    cfg = config(tmp_path, reader_pages_per_block=31)  # compute still waits for 32 per block
    stdout, log_path = hang(tmp_path, cfg, {"TT_METAL_WATCHER": "100ms"})
    assert stdout.rstrip().endswith("[ RUN      ] CbModelTest.LayerNormFusedRm")
    assert "Watcher log file: " + str(log_path) in stdout
    log = parse_file(log_path)
    assert not log.unparsed and len(log.dumps) >= 3
    d = diagnose(log)
    assert d.pattern is HangPattern.CONSUMER_STARVED and d.progress is Progress.STUCK
    g = d.groups[0]
    assert g.count == 64 and len(d.groups) == 1
    assert g.kernel == CbConfig().compute_kernel and g.kernel_name == "layernorm_fused_rm.cpp"
    assert (g.risc, g.waypoint) == ("TRISC0", "CWFW")
    assert (
        "on 64 cores compute kernel layernorm_fused_rm.cpp (TRISC0) waits in cb_wait_front"
        in d.summary
    )
    assert "reader (NCRISC, reader_layernorm_fused_rm.cpp) is done" in d.summary
    assert (d.cores_dispatch, d.cores_idle) == (2, 6)  # the 9th row: dispatch and idle cores
    names = (log_path.parent / "kernel_names.txt").read_text().splitlines()
    assert names[0] == "0: blank" and names[-1].endswith("layernorm_fused_rm.cpp")


def test_a_too_small_buffer_is_a_producer_consumer_cycle(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        compute_pages_per_block=48,
        reader_pages_per_block=48,
        cb_in_capacity=40,
        grid=[2, 2],
        device_grid=[2, 2],
    )
    logs = tmp_path / "logs"
    _, log_path = hang(
        tmp_path, cfg, {"TT_METAL_WATCHER": "100ms", "TT_METAL_LOGS_PATH": str(logs)}, 2
    )
    assert log_path == logs / "generated" / "watcher" / "watcher.log"
    assert not (tmp_path / "generated").exists()
    g = diagnose(parse_file(log_path)).groups[0]
    assert g.pattern is HangPattern.PRODUCER_BLOCKED and (g.risc, g.waypoint, g.count) == (
        "NCRISC",
        "CRBW",
        4,
    )


def test_writer_waiting_for_more_than_compute_pushes(tmp_path: Path) -> None:
    cfg = config(tmp_path, writer_pages_per_block=33, grid=[4, 2], device_grid=[4, 2])
    _, log_path = hang(tmp_path, cfg, {"TT_METAL_WATCHER": "100ms"}, 2)
    g = diagnose(parse_file(log_path)).groups[0]
    assert g.pattern is HangPattern.CONSUMER_STARVED and (g.risc, g.role, g.count) == (
        "BRISC",
        "writer",
        8,
    )
    assert "the compute (TRISC2, layernorm_fused_rm.cpp) is done" in g.sentence


def test_dprint_lines_attach_to_the_starved_cores(tmp_path: Path) -> None:
    cfg = config(tmp_path, reader_pages_per_block=31)
    env = {"TT_METAL_WATCHER": "100ms", "TT_METAL_DPRINT_CORES": "(0,0)-(1,0)"}
    stdout, log_path = hang(tmp_path, cfg, env, 2)
    lines = parse_dprint(stdout)
    assert lines and {(d.x, d.y) for d in lines} == {(0, 0), (1, 0)}
    d = diagnose(parse_file(log_path), lines, max_dprint=4)
    picked = d.groups[0].dprint
    assert len(picked) == 4 and all(p.risc == "TRISC0" for p in picked)  # the waiting processor's
    assert picked[-1].text == "block 3: cb_wait_front(c_0, 32) waits"
    assert {(p.x, p.y) for p in picked if p.text.endswith("waits")} == {(0, 0), (1, 0)}


def test_a_hang_without_watcher_writes_nothing_and_still_blocks(tmp_path: Path) -> None:
    cfg = config(tmp_path, reader_pages_per_block=31)
    p = subprocess.Popen(
        [*CB, f"--cb_config={cfg}"], stdout=subprocess.PIPE, cwd=tmp_path, env=CLEAN_ENV
    )
    device = tmp_path / "generated" / "lookalike-device" / "device.json"
    try:  # hung once it has written the device's state (a loaded machine starts Python slowly)
        deadline = time.monotonic() + 60
        while not device.is_file() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(subprocess.TimeoutExpired):
            p.wait(timeout=1.5)
    finally:
        p.kill()
        out = p.communicate(timeout=10)[0].decode()
    assert out.rstrip().endswith("CbModelTest.LayerNormFusedRm") and p.returncode == -signal.SIGKILL
    assert not (tmp_path / "generated" / "watcher").exists()
    # the hung device's state, for the look-alike's tt-triage (no watcher needed)
    assert device.is_file()


def test_a_passing_run_with_the_watcher_logs_idle_cores(tmp_path: Path) -> None:
    p = run("--gtest_color=no", cwd=tmp_path, env={"TT_METAL_WATCHER": "5"})
    assert p.returncode == 0
    text = (tmp_path / "generated" / "watcher" / "watcher.log").read_text()
    assert text.rstrip().endswith("detach device 0")
    d = diagnose(parse(text))
    assert d.pattern is HangPattern.IDLE and not d.hung


# ------------------------------------------------------------------------ pure helpers
def test_watcher_interval_follows_rtoptions() -> None:
    assert watcher_interval(None) is None
    assert watcher_interval("10") == 10.0
    assert watcher_interval("250ms") == 0.25
    assert watcher_interval("1ms") == 0.1  # floored: a hung run must not fill the disk
    assert watcher_interval("junk") == 0.1


def test_logs_dir_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert watcher_log_path({}) == tmp_path / "generated/watcher/watcher.log"
    assert watcher_log_path({"TT_METAL_LOGS_PATH": "/x/y/../logs/"}) == Path(
        "/x/logs/generated/watcher/watcher.log"
    )


def test_dprint_cores_forms() -> None:
    cfg = CbConfig()
    assert dprint_cores("1,2", cfg) == {(1, 2)}
    assert dprint_cores("(0,0),(3,4)", cfg) == {(0, 0), (3, 4)}
    assert dprint_cores("(0,0)-(1,1)", cfg) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert len(dprint_cores("all", cfg)) == 64 and dprint_cores(None, cfg) == set()


def test_the_model_is_deterministic_and_names_who_waits() -> None:
    cfg = CbConfig(reader_pages_per_block=31)
    a, b = simulate(cfg, cfg.cores), simulate(cfg, cfg.cores)
    assert a.deadlocked and a.steps == b.steps and len(a.hung_cores) == 64
    c = a.cores[0]
    assert (c.reader_done, c.compute_block, c.compute_phase, c.in_avail) == (True, 3, "wait", 28)
    ok = simulate(CbConfig(), CbConfig().cores)
    assert not ok.deadlocked and all(c.written == 128 for c in ok.cores)


def test_the_model_is_a_package_of_the_standard_library_only() -> None:
    """The look-alike ships the package whole as ttnn's ``_cbsim`` (tests/lookalike/generator.py):
    every module imports only the standard library and its siblings (relatively), so it runs
    there with no lnrepro installed."""
    import ast

    root = Path(__file__).resolve().parents[2] / "lnrepro" / "emulator" / "cbmodel"
    wrong = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            top = {n.split(".")[0] for n in names}
            wrong += [f"{path.name}: {t}" for t in top - set(sys.stdlib_module_names) - {"tomli"}]
    assert len(list(root.glob("*.py"))) > 1
    assert not wrong, wrong
