"""`--resume` after `kill -9` (or SIGTERM) continues with every option the bisect was started with.

The bug this guards against: a resumed bisect read only `--command` from its state and took the
rest from the new command line, so every step after a resume ran once, with the default timeout,
on the default runner. Here the first command carries every option; after kill -9 a bare
`--resume` must run each later step with the same repeat, timeout, runner, image, environment,
filter and picks, on both jobs, and under the same search (a fixed repeat or `--confidence`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_gently
from tests.leftovers import left, owner
from tests.lookalike import GroundTruth, Spec, generate

pytestmark = pytest.mark.docker
LNREPRO = [sys.executable, "-m", "lnrepro"]
ENV = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}
FILTER = "*Deterministic_2048Features"


def step_records(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        json.loads((Path(s["record"]) / "record.json").read_text())
        for s in doc["steps"]
        if s.get("record")
    ]


@pytest.mark.parametrize(
    ("search", "sig"),
    [("repeat", signal.SIGKILL), ("confidence", signal.SIGTERM)],
    ids=["repeat-kill-9", "confidence-sigterm"],
)
def test_resume_after_kill_9_keeps_every_option(
    search: str, sig: signal.Signals, toolchain_image: str, fake_card_host: None, tmp_path: Path
) -> None:
    t: GroundTruth = generate(tmp_path / "tt-metal", Spec(commits=40, tus=1))
    repo = Path(t.path)
    state = repo / ".git" / "lnrepro" / "bisect.json"
    how = ["--repeat", "2"] if search == "repeat" else ["--confidence", "0.9"]
    # two jobs on a host with one card: one Docker context (engine) per job, both this engine
    cfg = tmp_path / "docker-config"
    env = {**os.environ, **ENV, "DOCKER_CONFIG": str(cfg)}
    for name, host in {
        "lnrepro-a": "unix:///var/run/docker.sock",
        "lnrepro-b": "unix:///run/docker.sock",
    }.items():
        subprocess.run(
            ["docker", "context", "create", name, "--docker", f"host={host}"],
            check=True,
            env=env,
            capture_output=True,
        )
    args = [
        "bisect",
        "--repo",
        t.path,
        "--good",
        t.good,
        "--bad",
        t.bad,
        "--pick",
        t.bugrepro,
        "--runner",
        "docker",
        "--image",
        toolchain_image,
        "--timeout",
        "77",
        "--env",
        "LNREPRO_PROBE=kept",
        "--filter",
        FILTER,
        "--jobs",
        "2",
        *how,
        "--docker-context",
        "lnrepro-a",
        "--docker-context",
        "lnrepro-b",
        "--record-dir",
        str(tmp_path / "runs"),
    ]
    proc = subprocess.Popen(
        [*LNREPRO, *args],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    first = owner(proc)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if (
            state.exists()
            and len([s for s in json.loads(state.read_text())["steps"] if s.get("record")]) >= 2
        ):
            break
        time.sleep(0.1)
    assert proc.poll() is None, "the bisect ended before it could be killed"
    proc.send_signal(sig)
    code = proc.wait(timeout=60)
    killed = json.loads(state.read_text())
    assert killed["result"] is None
    before = len(killed["steps"])
    if sig is signal.SIGTERM:  # handled: both jobs' containers are stopped and removed
        assert code == 143 and not left(first)
    # kill -9 is the one signal lnrepro cannot handle: the jobs' containers outlive it, until the
    # next lnrepro on that engine finds their owner gone (below)

    p = run_gently(
        [*LNREPRO, "bisect", "--repo", t.path, "--resume", "--json"],
        cwd=tmp_path,
        timeout=1500,
        env=env,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert not left(first, p.owner), "a killed bisect's container outlived the resume"
    doc = json.loads(p.stdout)
    r = doc["result"]
    assert r["first_bad"] == t.culprit
    assert r["search"] == ("git" if search == "repeat" else "bayesian")  # confidence
    if search == "confidence":
        assert r["wanted_confidence"] == 0.9 and r["confidence"] >= 0.9
    after = {"steps": doc["steps"][before:]}
    records = step_records(after)
    assert records, "no step ran after the resume"
    for rec in records:
        req = rec["request"]
        assert req["tests"]["repeat"] == (2 if search == "repeat" else 1)  # repeat
        assert req["tests"]["timeout_s"] == 77  # timeout
        assert req["backend"]["runner"] == "docker"  # runner
        assert req["backend"]["image"] == toolchain_image  # image
        assert req["backend"]["env"].get("LNREPRO_PROBE") == "kept"  # env
        assert req["tests"]["filter"] == FILTER  # filter
        if not rec["attempts"]:  # built to the same inputs as a commit already run: not run again
            assert "same inputs as" in json.dumps(rec), rec.get("why")
            continue
        # picks: the BugRepro test exists only with the picked commit applied, and it ran
        names = {x["name"] for a in rec["attempts"] for x in a["tests"]}
        assert any("BugRepro_Deterministic_2048Features" in n for n in names), names
    assert doc["request"]["picks"] == [t.bugrepro] and doc["request"]["jobs"] == 2
    assert doc["request"]["contexts"] == ["lnrepro-a", "lnrepro-b"]
    jobs = {s["job"] for s in doc["steps"][before:]}
    assert jobs == {0, 1} or len(doc["steps"][before:]) == 1  # jobs
