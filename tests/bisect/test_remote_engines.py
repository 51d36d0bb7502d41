"""A bisect over this machine's engine and a card host's that cannot see this machine's paths.

The card host is a second Docker engine in a container (tests/engines.py), reached through a
Docker context on the loopback. Everything it needs goes there through the Docker API: the image
(sent from here), the sources (shipped into a volume there), the build tree and ccache (volumes
there); the records come back the same way. Job 0 runs on this machine's engine ("default", with
bind mounts), job 1 on the card host.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lnrepro.doors.container import LABEL
from tests.conftest import run_gently
from tests.engines import Engine, running
from tests.leftovers import left, owner
from tests.lookalike import GroundTruth, Spec, generate

pytestmark = pytest.mark.docker
LNREPRO = [sys.executable, "-m", "lnrepro"]
FILTER = "*Deterministic_2048Features"
GIT_ENV = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "protocol.file.allow",
    "GIT_CONFIG_VALUE_0": "always",
}


@pytest.fixture(scope="module")
def card_host(engine_image: str) -> Iterator[Engine]:
    """One card host for the module, as one serves bisect after bisect: the second test finds
    the image and the ccache volume the first left there, then takes the host down (it is last)."""
    with running(engine_image) as eng:
        yield eng


def ours(host: str | None = None) -> set[str]:
    """lnrepro's containers on an engine (this machine's by default): on the card host, only
    this module's tests run any (its engine is theirs alone)."""
    argv = ["docker", *(["-H", host] if host else []), "ps", "-aq", "--filter", f"label={LABEL}"]
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    return set(out.stdout.split())


def setup(tmp_path: Path, eng: Engine, image: str) -> tuple[GroundTruth, dict[str, str], list[str]]:
    t = generate(tmp_path / "tt-metal", Spec(commits=40, tus=1))
    env = {**os.environ, **GIT_ENV, "DOCKER_CONFIG": str(tmp_path / "docker-config")}
    subprocess.run(
        ["docker", "context", "create", "card-host", "--docker", f"host={eng.tcp}"],
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
        image,
        "--filter",
        FILTER,
        "--timeout",
        "120",
        "--jobs",
        "2",
        "--docker-context",
        "default",
        "--docker-context",
        "card-host",
        "--record-dir",
        str(tmp_path / "runs"),
    ]
    return t, env, args


def state_of(t: GroundTruth) -> dict[str, Any] | None:
    path = Path(t.path) / ".git" / "lnrepro" / "bisect.json"
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
        return doc
    except (OSError, ValueError):
        return None


def wait_for(
    cond: Any, proc: subprocess.Popen[bytes], what: str, limit: float = 600, err: Path | None = None
) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = err.read_text(errors="replace")[-3000:] if err else ""
            raise AssertionError(f"the bisect ended ({proc.returncode}) before {what}:\n{said}")
        if cond():
            return
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.timeout(1200)  # real builds on two engines, one of them in a container
def test_two_engines_find_the_culprit_stop_cleanly_and_resume(
    toolchain_image: str, fake_card_host: None, card_host: Engine, tmp_path: Path
) -> None:
    t, env, args = setup(tmp_path, card_host, toolchain_image)
    # the card host sees none of this machine's paths: a bind mount of the repository is empty
    err = tmp_path / "bisect.stderr"
    with err.open("wb") as to:
        proc = subprocess.Popen(
            [*LNREPRO, *args], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=to
        )
    first = owner(proc)

    def remote_step_done_and_busy() -> bool:
        doc = state_of(t)
        done = doc is not None and any(s["job"] == 1 and s.get("record") for s in doc["steps"])
        return done and bool(ours(card_host.tcp))

    # SIGTERM while a container runs on the card host, after it has finished a step
    wait_for(remote_step_done_and_busy, proc, "a second step on the card host", 900, err)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 143
    assert not left(first) and not ours(card_host.tcp), "a container outlived the bisect"
    empty = card_host.docker("run", "--rm", "-v", f"{t.path}:/x", toolchain_image, "ls", "-A", "/x")
    assert empty.stdout.strip() == "", "the card host can see this machine's files"

    before = len((state_of(t) or {"steps": []})["steps"])
    p = run_gently(
        [*LNREPRO, "bisect", "--repo", t.path, "--resume", "--json"],
        cwd=tmp_path,
        timeout=1500,
        env=env,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout)
    assert doc["result"]["first_bad"] == t.culprit
    assert doc["request"]["contexts"] == ["default", "card-host"]
    assert not doc["lost"]
    resumed = doc["steps"][before:]
    assert resumed, "no step ran after the resume"

    remote = [s for s in doc["steps"] if s["job"] == 1 and s.get("record")]
    assert remote, "the card host took no step"
    for s in remote:
        rec = json.loads((Path(s["record"]) / "record.json").read_text())
        assert rec["backend"]["remote"] is True and rec["backend"]["docker_host"] == card_host.tcp
        if not rec["attempts"]:  # built to the same inputs as a commit already run: not run again
            assert "same inputs as" in json.dumps(rec), rec.get("why")
            continue
        # the picked BugRepro test was shipped with the sources, and its report came back
        names = {x["name"] for a in rec["attempts"] for x in a["tests"]}
        assert any("BugRepro_Deterministic_2048Features" in n for n in names), names
        log = (Path(s["record"]) / "build.log").read_text()
        if rec["build"] and rec["build"]["ok"] and "Version:" in log:
            assert "Cannot parse tag" not in log  # git archive's placeholders carried it there
    logs = "".join((Path(s["record"]) / "build.log").read_text() for s in remote)
    assert "shipping" in logs and "-- Version: " in logs
    local = [s for s in doc["steps"] if s["job"] == 0 and s.get("record")]
    assert local, "this machine's engine took no step"
    rec0 = json.loads((Path(local[0]["record"]) / "record.json").read_text())
    assert not rec0["backend"].get("remote")
    # the tree and ccache live on the card host, as volumes
    vols = card_host.docker("volume", "ls", "-q", "--filter", f"label={LABEL}").stdout.split()
    assert any(v.startswith("lnrepro-tree-") for v in vols)
    assert any(v.startswith("lnrepro-ccache-") for v in vols)
    assert not left(first, p.owner) and not ours(card_host.tcp)


@pytest.mark.timeout(1200)  # real builds on two engines, one of them in a container
def test_a_card_host_that_goes_down_is_noise_on_its_job(
    toolchain_image: str, fake_card_host: None, card_host: Engine, tmp_path: Path
) -> None:
    t, env, args = setup(tmp_path, card_host, toolchain_image)
    proc = subprocess.Popen(
        [*LNREPRO, *args, "--json"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = owner(proc)
    # the card host goes down while it runs a container of lnrepro's
    wait_for(lambda: bool(ours(card_host.tcp)), proc, "a container on the card host", limit=600)
    card_host.stop()
    out, err = proc.communicate(timeout=1500)
    assert proc.returncode == 0, err[-3000:]
    doc = json.loads(out)
    assert doc["result"]["first_bad"] == t.culprit  # job 0 went on and found it
    assert [x["job"] for x in doc["lost"]] == [1]
    assert "stopped answering" in doc["lost"][0]["why"]
    # the commit job 1 was testing was not judged: no step on job 1 names it
    lost = doc["lost"][0]["commit"]
    assert not any(s["job"] == 1 and s["sha"] == lost for s in doc["steps"])
    assert not left(first)
