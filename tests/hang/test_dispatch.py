"""tt-triage around a hung attempt, on the look-alike: lnrepro runs the checkout's triage against
the still-hung device before its own timeout kills it, and tt-metal's own dispatch timeout
(``--dispatch-timeout``) runs it from inside the test; either way the attempt is a HANG whose
diagnosis is triage's (kernel, RISC, cores, top frame, CB state), and nothing is left running.

The look-alike's triage (tests/lookalike/tree/tools/) reads the hung device's state that the
hung process writes (docs/lookalike.md); lnrepro reads its output with the triage reader.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lnrepro.hang import dispatch as triage
from lnrepro.run.backends import Call
from tests.hang.triage.corpus import CALLSTACK_HEADER, CB_HEADER
from tests.lookalike import HANG_TEST, GroundTruth
from tests.run.test_pytest_and_hangs import lnrepro_docker as lnrepro

LNREPRO = [sys.executable, "-m", "lnrepro"]
CB = [sys.executable, "-m", "lnrepro.emulator.cbmodel"]
HERE = Path(__file__).resolve().parent
FRAMEWORK_SOURCE = HERE.parent / "lookalike" / "tree" / "tools" / "triage" / "triage.py"


# ------------------------------------------------------------------ pure: the command and the log
def test_triage_flags_are_the_ones_the_checkouts_usage_line_names() -> None:
    """The look-alike's triage.py carries the usage line of tt-metal's at 02c321d: all three
    flags; an older usage without them gets none (an unknown flag would stop triage)."""
    flags = triage.triage_flags(FRAMEWORK_SOURCE.read_text(encoding="utf-8"))
    assert flags == ["--disable-progress", "--skip-version-check", "--disable-colors"]
    older = '"""\nUsage:\n    triage [--verbosity=<v>] [--run=<script>]...\n\nOptions:\n"""'
    assert triage.triage_flags(older) == []
    assert triage.triage_flags(None) == []
    argv = triage.triage_argv("python3", flags)
    assert argv[:2] == ["python3", "tools/tt-triage.py"]
    env = triage.dispatch_env(0.5, argv)
    assert env["TT_METAL_OPERATION_TIMEOUT_SECONDS"] == "0.5"
    assert env["TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE"].startswith(
        "python3 tools/tt-triage.py"
    )
    assert "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE" not in triage.dispatch_env(2, None)


def test_the_triage_tt_metal_ran_is_cut_out_of_the_log() -> None:
    log = (
        "tests/x.py::test[8x8] Device 0: opened\n"
        "2026-11-27 12:00:00.000 | error    |           Metal | Timeout detected (m.cpp:1)\n"
        "2026-11-27 12:00:00.000 | info     |           Metal | Executing command: python3 "
        "tools/tt-triage.py (m.cpp:2)\n\ndump_callstacks.py:\n┏━━━┓\n│ x │\n└───┘\n"
        "FAILED\n=========== FAILURES ===========\n"
        "E   TIMEOUT: device timeout, potential hang detected, the device is unrecoverable\n"
    )
    assert triage.device_timeout_seen(log)
    cut = triage.triage_in_log(log)
    assert cut == "dump_callstacks.py:\n┏━━━┓\n│ x │\n└───┘\n"
    assert triage.triage_in_log("no command ran") is None
    assert not triage.device_timeout_seen("TIMEOUT: of a test runner")


# ------------------------------------------------------------------ the look-alike's binary
def test_the_cbmodel_binary_honours_tt_metals_dispatch_timeout(tmp_path: Path) -> None:
    """As metal_context.cpp (790b74b58a87): `Timeout detected`, `Executing command: <cmd>`, the
    command runs with the test's output, then the TIMEOUT error ends the binary (an uncaught
    TT_THROW: abort). Without the timeout the binary hangs (test_cbmodel.py)."""
    cfg = tmp_path / "cb.json"
    cfg.write_text(json.dumps({"reader_pages_per_block": 31}))
    env = {
        "PATH": os.environ.get("PATH", ""),
        "TT_METAL_OPERATION_TIMEOUT_SECONDS": "0.3",
        "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE": "echo triage-ran; exit 3",
    }
    p = subprocess.run(
        [*CB, f"--cb_config={cfg}", "--gtest_filter=*SingleCore"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = p.stdout
    assert p.returncode == -signal.SIGABRT, (p.returncode, out[-2000:])
    lines = out.splitlines()
    at = [i for i, ln in enumerate(lines) if "| error    |" in ln and ln.count("Timeout detected")]
    assert at, out[-2000:]
    assert "Executing command: echo triage-ran; exit 3" in lines[at[0] + 2]
    assert lines[at[0] + 3] == "triage-ran"
    assert "Timeout command 'echo triage-ran; exit 3' returned non-zero exit code: 3" in out
    assert out.rstrip().endswith(
        triage.DEVICE_TIMEOUT + ", potential hang detected, the device is unrecoverable"
    )
    state = json.loads((tmp_path / "generated" / "lookalike-device" / "device.json").read_text())
    waits = {r["wait"]["call"] for c in state["cores"] for r in c["riscs"] if r["wait"]}
    assert "cb_wait_front" in waits


# ------------------------------------------------------------------ end to end, in the container
def hung_run(tree: Path, tmp: Path, image: str, *extra: str) -> tuple[Any, dict[str, Any]]:
    tmp.mkdir(parents=True, exist_ok=True)
    p = lnrepro(
        "run",
        "--tt-metal",
        str(tree),
        "--image",
        image,
        "--record-dir",
        str(tmp / "runs"),
        "--pytest",
        HANG_TEST,
        *extra,
        cwd=tmp,
    )
    runs = sorted((tmp / "runs").iterdir())
    assert runs, p.stderr[-3000:]
    rec: dict[str, Any] = json.loads((runs[-1] / "record.json").read_text())
    return p, rec


@pytest.mark.docker
@pytest.mark.parametrize("how", ["lnrepro-timeout", "dispatch-timeout"])
def test_a_hung_lookalike_run_is_a_hang_with_triages_diagnosis(
    how: str,
    lookalike_builds: dict[str, Path],
    toolchain_image: str,
    fake_card_host: None,
    tmp_path: Path,
) -> None:
    from tests.leftovers import running_in

    tree = lookalike_builds["main"]
    extra = (
        ("--timeout", "6")
        if how == "lnrepro-timeout"
        else ("--timeout", "60", "--dispatch-timeout", "1")
    )
    p, rec = hung_run(tree, tmp_path, toolchain_image, *extra)
    if os.environ.get("LNREPRO_TEST_SHOW"):  # to look at what a person sees
        Path(os.environ["LNREPRO_TEST_SHOW"], f"{how}.out").write_text(p.stdout + p.stderr)
        for f in Path(rec["record_dir"]).glob("attempt-*.triage.txt"):
            Path(os.environ["LNREPRO_TEST_SHOW"], f"{how}.{f.name}").write_bytes(f.read_bytes())
    assert rec["verdict"] == "HANG", (rec["verdict"], p.stdout[-2000:], p.stderr[-2000:])
    [a] = rec["attempts"]
    assert a["timed_out"] is (how == "lnrepro-timeout")
    [t] = a["tests"]
    assert t["status"] == "TIMEOUT"
    out = Path(rec["record_dir"]) / a["extra_files"]["triage"]
    text = out.read_text(encoding="utf-8")
    assert "dump_callstacks.py:" in text and "dump_circular_buffers.py:" in text
    assert "cb_wait_front ()" in text and "layernorm_fused_rm.cpp" in text
    if how == "dispatch-timeout":
        log = (Path(rec["record_dir"]) / a["log"]).read_text(encoding="utf-8")
        assert "Timeout detected" in log and "Executing command: python3 tools/tt-triage.py" in log
    # triage's diagnosis, in the record: the kernel, the RISC, the cores, the top frame, the CBs
    hang = a["hang"]
    assert hang["source"]["format"] == "tt-triage", hang["source"]
    assert hang["pattern"] == "CONSUMER_STARVED"
    top = hang["groups"][0]
    assert top["kernel"].endswith("layernorm_fused_rm.cpp") and len(top["cores"]) == 64
    # the cause, as the watcher's rules rank it: compute's unpacker, not the writer downstream
    assert top["risc"] == "TRISC0" and top["waypoint"] == "CWFW"
    assert top["frames"][0]["function"] in ("cb_wait_front", "llk_wait_tiles")
    assert top["frames"][0]["pc"] is not None
    assert any(c["state"] in ("empty", "partial") for c in top["cbs"])
    assert hang["key"].startswith("CONSUMER_STARVED:") and "layernorm_fused_rm.cpp" in hang["key"]
    # ... on the console
    assert f"hang (attempt 1, {a['extra_files']['triage']}): CONSUMER_STARVED" in p.stdout
    assert "read: tt-triage" in p.stdout
    assert "to bisect this hang" in p.stdout and "--watcher" not in p.stdout.split("to bisect")[1]
    # ... and in the reports: the Markdown issue body and JUnit
    md = lnrepro("report", rec["record_dir"], "--format", "md", cwd=tmp_path).stdout
    assert "Hang, attempt 1 (tt-triage output " in md and a["extra_files"]["triage"] in md, md
    assert "CONSUMER_STARVED" in md and top["frames"][0]["function"] + " ()" in md
    xml = lnrepro("report", rec["record_dir"], "--format", "junit", cwd=tmp_path).stdout
    assert f"hang: {hang['key']}" in xml and "CB " in xml
    # nothing of the hung test is left running
    assert not running_in(tree, "test_layernorm_fused_rm")
    assert not running_in(tree, "tt-triage.py")


@pytest.mark.docker
def test_bisect_on_hang_finds_the_branch_commit_by_triages_signature_with_the_watcher_off(
    toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    """`--on-hang bad` without --watcher: the place of each hang is what tt-triage (run before
    each kill) reads on the hung device, so the flaky hangs at device open (eltwise's kernels)
    stay noise, even the one at the bad endpoint, and the culprit is the commit on the merged
    branch."""
    from tests.lookalike import Spec, generate
    from tests.run.test_pytest_and_hangs import flaky_seed

    small: GroundTruth = generate(tmp_path / "tt-metal", Spec(commits=40, tus=1))
    fp = small.first_parent
    at = fp.index(small.hang_merge or "")
    good, bad = fp[at - 4], fp[at + 3]
    rate = 0.25
    flake = f"TT_LOOKALIKE_FLAKE=hang={rate},seed={flaky_seed(small.path, good, bad, rate)}"
    p = lnrepro(
        "bisect",
        "--repo",
        small.path,
        "--good",
        good,
        "--bad",
        bad,
        "--runner",
        "docker",
        "--image",
        toolchain_image,
        "--record-dir",
        str(tmp_path / "runs"),
        "--json",
        "--pytest",
        HANG_TEST,
        "--on-hang",
        "bad",
        "--timeout",
        "6",
        "--env",
        flake,
        cwd=tmp_path,
        timeout=1500,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)
    r = doc["result"]
    assert r["first_bad"] == small.hang_culprit and r["first_bad"] not in fp
    key = r["signature"]["hang_key"]
    assert key == "CONSUMER_STARVED:layernorm_fused_rm.cpp:TRISC0:CWFW", key
    assert "eltwise" not in key and "binary" not in key
    first = doc["steps"][0]
    assert first["sha"] == bad and first["verdict"] == "HANG"
    assert "seen once" in first["reason"], first["reason"]
    # the flaky hangs at device open were set aside by their own place, never learned
    assert all(
        "binary" not in (s["reason"] or "")
        or "seen once" in s["reason"]
        or "elsewhere" in s["reason"]
        for s in doc["steps"]
    )


def same_primary(a: Any, b: Any) -> None:
    """Two diagnoses of one hang name the same cause: key, and the primary group's pattern,
    kernel, RISC, cores and wait."""
    assert a.key == b.key, (a.lines(), b.lines())
    g, h = a.primary, b.primary
    assert g is not None and h is not None
    assert (g.pattern, g.risc, g.role, g.kernel_name, g.wait) == (
        h.pattern,
        h.risc,
        h.role,
        h.kernel_name,
        h.wait,
    )
    assert g.kernel is not None and h.kernel is not None
    long, short = sorted((g.kernel.removeprefix("./"), h.kernel.removeprefix("./")), key=len)[::-1]
    assert long.endswith(short)
    assert {(c.device, c.x, c.y) for c in g.cores} == {(c.device, c.x, c.y) for c in h.cores}


@pytest.mark.docker
def test_a_hung_lookalike_run_gives_one_diagnosis_from_the_watcher_and_from_triage(
    lookalike_builds: dict[str, Path],
    toolchain_image: str,
    fake_card_host: None,
    tmp_path: Path,
) -> None:
    """The look-alike's hung ttnn test run once with the watcher on: the attempt keeps the
    watcher's log and tt-triage's output of the same hang, and both read to the same cause,
    compute's unpacker (TRISC0), with the writer downstream of it a consequence."""
    from lnrepro.hang.door import read_file

    p, rec = hung_run(
        lookalike_builds["main"], tmp_path, toolchain_image, "--timeout", "6", "--watcher", "1"
    )
    assert rec["verdict"] == "HANG", (p.stdout[-2000:], p.stderr[-2000:])
    [a] = rec["attempts"]
    where = Path(rec["record_dir"])
    watcher = read_file(where / a["extra_files"]["watcher"])
    triage = read_file(where / a["extra_files"]["triage"])
    assert watcher is not None and watcher.format.value == "watcher-log"
    assert triage is not None and triage.format.value == "tt-triage"
    same_primary(watcher.diagnosis, triage.diagnosis)
    assert triage.diagnosis.key == "CONSUMER_STARVED:layernorm_fused_rm.cpp:TRISC0:CWFW"
    assert len(triage.diagnosis.groups[0].cores) == 64
    assert a["hang"]["key"] == triage.diagnosis.key  # the record's (the watcher's) too
    for d in (watcher.diagnosis, triage.diagnosis):
        assert all(g.risc != "BRISC" for g in d.groups), d.lines()


# ------------------------------------------------------------------ the look-alike's two eras
@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> GroundTruth:
    from tests.lookalike import Spec, generate

    return generate(tmp_path_factory.mktemp("eras") / "tt-metal", Spec(commits=40, tus=1))


def checkout_at(t: GroundTruth, sha: str, where: Path) -> Path:
    where.mkdir(parents=True)
    data = subprocess.run(["git", "-C", t.path, "archive", sha], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=data.stdout, check=True)
    return where


def hang_with_command(tree: Path, command: str, **more: str) -> str:
    """The cbmodel binary hung in the tree (the reader one page short), tt-metal's timeout
    running ``command`` there: the output. ``more``: further environment (the watcher)."""
    cfg = tree / "cb.json"
    cfg.write_text(json.dumps({"reader_pages_per_block": 31, "grid": [2, 2]}))
    env = {
        "PATH": os.environ.get("PATH", ""),
        "TT_METAL_OPERATION_TIMEOUT_SECONDS": "0.2",
        "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE": command,
        **more,
    }
    p = subprocess.run(
        [*CB, f"--cb_config={cfg}", "--gtest_filter=*Rm"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == -signal.SIGABRT, p.stdout[-3000:] + p.stderr[-2000:]
    return p.stdout


def test_the_framework_eras_triage_prints_the_hung_models_state_as_the_real_scripts(
    history: GroundTruth, tmp_path: Path
) -> None:
    """tools/tt-triage.py (the framework: triage.py 02c321d, dump_callstacks d0f77e9,
    callstack_provider 91083879, dump_circular_buffers b98e5c6): the writer on BRISC waits in
    cb_wait_front at the line of its source that calls it, compute's unpacker (TRISC0) in
    llk_wait_tiles under cb_wait_front, the reader returned to firmware; CB 0 partly filled."""
    tree = checkout_at(history, history.main, tmp_path / "main")
    assert not (tree / "scripts" / "debugging_scripts" / "tt-triage.py").exists()
    out = hang_with_command(tree, f"{sys.executable} tools/tt-triage.py --disable-progress")
    text = out.split("Executing command:", 1)[1]
    lines = text.splitlines()
    at = lines.index("dump_callstacks.py:")
    assert lines[at - 1] == "" and lines[at + 1].startswith("┏━")
    header = [c.strip() for c in lines[at + 2].strip("┃").split("┃")]
    assert header == CALLSTACK_HEADER  # the real columns (tests/hang/triage/corpus.py)
    assert lines[at + 3].startswith("┡━")
    rows = [
        [c.strip() for c in ln.strip("│").split("│")]
        for ln in lines[at + 4 :]
        if ln.startswith("│")
    ]
    first = rows[0][:9]
    assert first == [
        "0",
        "1-1 (0,0)",
        "brisc",
        "4",
        "writer_layernorm_fused_rm",
        "0",
        "GO",
        "False",
        "CWFW",
    ], rows[0]
    assert rows[0][10] == ""  # the callstack cell's first line is empty
    writer = "ttnn/cpp/ttnn/operations/normalization/layernorm_fused_rm/device/kernels/dataflow/writer_layernorm_fused_rm.cpp"
    call_line = next(
        n
        for n, ln in enumerate((tree / writer).read_text().splitlines(), 1)
        if "cb_wait_front(" in ln
    )
    assert rows[1][10].startswith("#0 0x0000") and rows[1][10].endswith(
        "in cb_wait_front () at ./tt_metal/hw/inc/dataflow_api.h 412:12"
    )
    assert rows[2][10] == f"#1 kernel_main () at ./{writer} {call_line}:9"
    trisc0 = next(i for i, r in enumerate(rows) if r[2] == "trisc0")
    assert rows[trisc0 + 1][10].endswith(
        "in llk_wait_tiles () at ./tt_metal/hw/ckernels/wormhole_b0/metal/llk_io/llk_io_unpack.h 34:9"
    )
    ncrisc = next(r for r in rows if r[2] == "ncrisc")
    assert ncrisc[8] == "W"
    assert "main () at ./tt_metal/hw/firmware/src/tt-1xx/ncrisc.cc" in text
    cbs = text[text.index("dump_circular_buffers.py:") :].splitlines()
    head = [c.strip() for c in cbs[2].strip("┃").split("┃")]
    assert head == CB_HEADER
    cb_rows = [[c.strip() for c in ln.strip("│").split("│")] for ln in cbs if ln.startswith("│")]
    cb0 = next(r for r in cb_rows if r[2] == "trisc0" and r[3] == "0")
    assert cb0[5] == "partial" and int(cb0[12]) - int(cb0[13]) == int(cb0[14]) == 28
    assert len({r[1] for r in cb_rows}) == 4  # the op's 2x2 cores; idle cores have no kernel


def test_the_one_script_era_at_an_older_commit(history: GroundTruth, tmp_path: Path) -> None:
    """scripts/debugging_scripts/tt-triage.py (90b63baa50e2) before the framework: titles, and
    with -vv the running ops per core and RISC in a tabulate table, frames in extra rows."""
    old = history.eras["triage-one-script"]
    assert old and history.eras["triage-framework"]
    tree = checkout_at(history, old, tmp_path / "old")
    assert not (tree / "tools" / "tt-triage.py").exists()
    out = hang_with_command(tree, f"{sys.executable} scripts/debugging_scripts/tt-triage.py -vv")
    text = out.split("Executing command:", 1)[1]
    lines = text.splitlines()
    assert lines[1] == "= Checking device 0" and "DONE: OK" in lines
    at = next(i for i, ln in enumerate(lines) if "Kernel ID:Name" in ln and "Proc" in ln)
    assert lines[at - 1].startswith("╭") and lines[at + 1].startswith("├")
    header = [c.strip() for c in lines[at].strip("│").split("│")]
    assert header == [
        "Loc",
        "Proc",
        "RD PTR",
        "Base",
        "Offset",
        "Kernel ID:Name",
        "PC",
        "Kernel Callstack",
        "Kernel Path",
    ]
    rows = [
        [c.strip() for c in ln.strip("│").split("│")]
        for ln in lines[at + 2 :]
        if ln.startswith("│")
    ]
    brisc = next(i for i, r in enumerate(rows) if r[:2] == ["0,0", "BRISC"])
    assert rows[brisc][5] == "4:writer_layernorm_fused_rm"
    assert "in cb_wait_front () at " in rows[brisc + 1][7] and rows[brisc + 1][0] == ""
    assert any(r[5] == "0:" for r in rows)  # a RISC with no kernel


# ------------------------------------------------------------------ one hang, two readers
@pytest.mark.parametrize("era", ["triage-framework", "triage-one-script"])
def test_the_watcher_and_triage_give_the_same_hang_the_same_diagnosis(
    era: str, history: GroundTruth, tmp_path: Path
) -> None:
    """One hung look-alike run read twice: the watcher's log (on while it hangs) and the triage
    tt-metal's dispatch timeout ran on the same hung device. Compute's unpacker (TRISC0) waits
    on CB 0, partly filled, while the reader is done; the writer (BRISC) waits downstream of
    it. Both readers name the unpacker: the same key, and the same primary group (kernel,
    RISC, cores, wait); triage's writer is a consequence, not a group. Before the shared rule
    triage's key was ...:writer_layernorm_fused_rm.cpp:BRISC:CWFW."""
    from lnrepro.hang.door import read_paste, read_triage

    old = era == "triage-one-script"
    sha = history.eras[era] if old else history.main
    tree = checkout_at(history, sha, tmp_path / "tree")
    script = "scripts/debugging_scripts/tt-triage.py -vv" if old else "tools/tt-triage.py"
    out = hang_with_command(tree, f"{sys.executable} {script}", TT_METAL_WATCHER="0.05")
    triage = read_triage(out.split("Executing command:", 1)[1])
    log = (tree / "generated" / "watcher" / "watcher.log").read_text(encoding="utf-8")
    reading = read_paste(log)
    assert triage is not None and reading is not None
    watcher = reading.diagnosis
    assert watcher.source is not None and watcher.source.format.value == "watcher-log"
    assert triage.source is not None and triage.source.format.value == "tt-triage"
    assert triage.key == "CONSUMER_STARVED:layernorm_fused_rm.cpp:TRISC0:CWFW", triage.lines()
    same_primary(triage, watcher)
    t = triage.primary
    assert t is not None and len(t.cores) == 4
    # the writer waits too, in both: a peer of the cause, never a group of its own
    for d in (triage, watcher):
        assert all(g.risc != "BRISC" for g in d.groups), d.lines()
        g = d.primary
        assert g is not None and any(p.risc == "BRISC" and p.state == "waiting" for p in g.peers)
        assert g.sentence.endswith(
            "the writer (BRISC) waits too, downstream of it: a consequence, not the cause"
        )
    if not old:  # the CB table: the partly filled CB 0 the unpacker waits on leads
        c = t.cbs[0]
        assert (c.cb, c.risc, c.state, c.received, c.acked) == (0, "TRISC0", "partial", 124, 96)
    else:  # no dump_circular_buffers in that era: said, not guessed
        assert not t.cbs
        assert any("dump_circular_buffers" in u for u in triage.unknowns), triage.unknowns


# ------------------------------------------------------------------ the backend, on this host
def fake_checkout(root: Path, usage: str = "[--disable-progress] [--skip-version-check]") -> Path:
    """A checkout whose tools/tt-triage.py prints its argv, cwd, an environment variable and
    whether the hung test (its pid in a file) still runs."""
    (root / "tools" / "triage").mkdir(parents=True)
    (root / "tools" / "triage" / "triage.py").write_text(
        f'"""\nUsage:\n    triage {usage}\n\n"""\n'
    )
    (root / "tools" / "tt-triage.py").write_text(
        "import os, sys, pathlib\n"
        "pid = int(pathlib.Path('hung.pid').read_text())\n"
        "alive = os.path.exists(f'/proc/{pid}')\n"
        "print('triage', sys.argv[1:], os.getcwd(), os.environ.get('LNREPRO_PROBE'), alive)\n"
    )
    return root


def test_the_backend_runs_triage_against_the_hung_test_before_the_kill(tmp_path: Path) -> None:
    from lnrepro.model.requests import TtMetalSpec
    from lnrepro.run.backends.ttmetal import TtMetalBackend
    from lnrepro.run.config import PROFILES

    tree = fake_checkout(tmp_path / "tt-metal")
    rec = tmp_path / "rec"
    rec.mkdir()
    hung = [
        sys.executable,
        "-c",
        "import os, time, pathlib; "
        "pathlib.Path('hung.pid').write_text(str(os.getpid())); print('hangs', flush=True); "
        "time.sleep(60)",
    ]
    spec = TtMetalSpec(
        checkout=tree, runner="local", env={"LNREPRO_PROBE": "same-env"}, python=sys.executable
    )
    out: list[bytes] = []
    res = TtMetalBackend(spec, PROFILES["in-tree"], env=tuple(spec.env.items())).execute(
        Call(argv=hung, record_dir=rec, attempt=1, on_output=out.append, timeout=1.5)
    )
    assert res.timed_out and res.exit_code == 124
    text = (rec / "attempt-1.triage.txt").read_text()
    # the usage line's flags only; the checkout as cwd; the test's environment; still hung
    assert text.strip() == (
        f"triage ['--disable-progress', '--skip-version-check'] {tree} same-env True"
    )
    log = b"".join(out).decode()
    assert log.index("hangs") < log.index("running tt-triage against the hung device")
    assert "tt-triage exited 0; its output is in attempt-1.triage.txt" in log
    pid = int((tree / "hung.pid").read_text())
    assert not Path(f"/proc/{pid}").exists()  # killed after triage

    # --no-triage: nothing runs, nothing is written
    (rec / "attempt-1.triage.txt").unlink()
    off = TtMetalSpec(checkout=tree, runner="local", python=sys.executable, triage=False)
    res = TtMetalBackend(off, PROFILES["in-tree"]).execute(
        Call(argv=hung, record_dir=rec, attempt=1, on_output=out.append, timeout=1.0)
    )
    assert res.timed_out and not (rec / "attempt-1.triage.txt").exists()
    # --dispatch-timeout: tt-metal's variables, the command the same
    env = TtMetalBackend(replace_spec(spec, 2.5), PROFILES["in-tree"]).test_env(rec)
    assert env["TT_METAL_OPERATION_TIMEOUT_SECONDS"] == "2.5"
    assert env["TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE"] == (
        f"{sys.executable} tools/tt-triage.py --disable-progress --skip-version-check"
    )


def replace_spec(spec: Any, seconds: float) -> Any:
    import msgspec

    return msgspec.structs.replace(spec, dispatch_timeout_s=seconds)


def test_a_gtest_binary_stopped_by_tt_metals_timeout_is_a_hang_not_a_crash(tmp_path: Path) -> None:
    """A googletest binary that tt-metal's dispatch timeout ends (the TIMEOUT TT_THROW uncaught:
    abort, exit 134) is a HANG, its test TIMEOUT; what the timeout command printed is kept as the
    attempt's triage output."""
    cfg = tmp_path / "cb.json"
    cfg.write_text(json.dumps({"reader_pages_per_block": 31}))
    binary = tmp_path / "cbmodel_tests"
    binary.write_text(
        f'#!/bin/sh\nexec {sys.executable} -m lnrepro.emulator.cbmodel --cb_config={cfg} "$@"\n'
    )
    binary.chmod(0o755)
    env = {
        **os.environ,
        "TT_METAL_OPERATION_TIMEOUT_SECONDS": "0.3",
        "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE": "echo dump_callstacks.py:; echo pass",
    }
    p = subprocess.run(
        [
            *LNREPRO,
            "run",
            "--backend",
            "local",
            "--binary",
            str(binary),
            "--filter",
            "*SingleCore",
            "--timeout",
            "60",
            "--json",
            "--record-dir",
            str(tmp_path / "runs"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    # as it runs, the test is shown ended by a timeout, never as a crash
    # (the line's layout is the console's: "TIMEOUT  Name" or "TIMEOUT Suite.Name")
    assert re.search(r"^TIMEOUT +(\w+\.)?LayerNormFusedRm_SingleCore$", p.stderr, re.M), p.stderr
    assert "CRASHED" not in p.stderr
    doc = json.loads(p.stdout)
    assert doc["verdict"] == "HANG", doc["verdict"]
    rec = json.loads((Path(doc["record_dir"]) / "record.json").read_text())
    [a] = rec["attempts"]
    assert not a["timed_out"] and a["exit_code"] == 134
    [t] = a["tests"]
    assert t["status"] == "TIMEOUT" and "dispatch timeout" in t["crash"]["reason"]
    triaged = Path(doc["record_dir"]) / a["extra_files"]["triage"]
    assert triaged.read_text() == "dump_callstacks.py:\npass\n"


def test_a_triage_that_hangs_too_is_stopped_at_its_own_limit(tmp_path: Path) -> None:
    from lnrepro.model.requests import TtMetalSpec
    from lnrepro.run.backends.ttmetal import TtMetalBackend
    from lnrepro.run.config import PROFILES

    tree = fake_checkout(tmp_path / "tt-metal")
    (tree / "tools" / "tt-triage.py").write_text(
        "import time\nprint('reading the device', flush=True)\ntime.sleep(60)\n"
    )
    rec = tmp_path / "rec"
    rec.mkdir()
    spec = TtMetalSpec(checkout=tree, runner="local", python=sys.executable)
    backend = TtMetalBackend(spec, PROFILES["in-tree"], triage_timeout_s=0.5)
    out: list[bytes] = []
    hung = [sys.executable, "-c", "import time; time.sleep(60)"]
    res = backend.execute(
        Call(argv=hung, record_dir=rec, attempt=1, on_output=out.append, timeout=0.5)
    )
    assert res.timed_out and res.seconds < 20
    assert (rec / "attempt-1.triage.txt").read_text() == "reading the device\n"
    assert "tt-triage ran past its 0.5 s limit" in b"".join(out).decode()
    from tests.leftovers import running_in

    assert not running_in(tree, "tt-triage.py") and not running_in(tree, "time.sleep(60)")
