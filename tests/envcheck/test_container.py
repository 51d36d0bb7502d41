"""env-check against a real Docker engine, with images made here (no registry)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lnrepro.doors import container
from lnrepro.envcheck import container_facts
from lnrepro.envcheck.checks import Context, Status, evaluate
from tests.conftest import docker_ok, need, run_gently
from tests.leftovers import left

pytestmark = pytest.mark.docker


def judge(spec: container.ContainerSpec) -> dict[str, Status]:
    facts = container_facts(spec)
    return {r.id: r.status for r in evaluate(facts, Context(mode="container"), scope="facts")}


def test_lnrepro_container_vs_seed_001_device_only(busybox_image: str) -> None:
    good = container.run_spec(busybox_image, device_nodes=[], hugepage_dirs=[], mount_set="full")
    bad = container.run_spec(
        busybox_image, device_nodes=[], hugepage_dirs=[], mount_set="seed-broken"
    )
    g, b = judge(good), judge(bad)
    assert g["sysfs"] is Status.OK
    assert b["sysfs"] is Status.FAIL  # docker's own read-only sysfs: the seed's trap


def test_container_runs_as_the_invoking_user(busybox_image: str) -> None:
    spec = container.ContainerSpec(busybox_image, user="4321:4321")
    code, out = container.run(spec, ["id", "-u"])
    assert code == 0 and out.strip() == "4321"
    # and a failing command's output is not lost
    code, out = container.run(spec, ["sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"])
    assert code == 3 and "to-stdout" in out and "to-stderr" in out


def test_cli_container_mode(busybox_image: str) -> None:
    p = run_gently(
        [
            sys.executable,
            "-m",
            "lnrepro",
            "env-check",
            "--container",
            "--image",
            busybox_image,
            "--json",
        ],
        timeout=120,
    )
    doc = json.loads(p.stdout)
    assert doc["container"]["command"].startswith("docker run --rm")
    assert (
        "-v /sys:/sys" in doc["container"]["command"]
        and "--privileged" not in doc["container"]["command"]
    )
    inside = {c["id"]: c for c in doc["container"]["checks"]}
    assert inside["sysfs"]["status"] == "ok" and inside["docker"]["detail"] == "judged on the host"
    assert p.returncode == (1 if not doc["ok"] else 0)
    assert not left(p.owner), "every container lnrepro started was removed"


def test_missing_image_is_a_one_line_error() -> None:
    need(docker_ok(), "no Docker engine answers")
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "lnrepro",
            "env-check",
            "--container",
            "--image",
            "lnrepro-absent:0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 5 and "not on this machine" in p.stderr and "Traceback" not in p.stderr


@pytest.fixture
def good_host(fake_card_host: None) -> Iterator[None]:
    """This machine as a good card host for real: the fake card host (a char device, hugetlbfs of
    1 GiB pages at /dev/hugepages-1G; tests/conftest.py) with two 1 GiB hugepages reserved."""
    need(docker_ok(), "no Docker engine answers")
    nr = Path("/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages")
    need(nr.exists(), "this kernel/CPU has no 1 GiB hugepages")
    old = nr.read_text().strip()
    try:
        nr.write_text("2\n")
        yield
    finally:
        nr.write_text(old + "\n")


def test_good_host_made_real(good_host: None, busybox_image: str) -> None:
    from lnrepro.envcheck import check_host

    host = {r.id: r for r in check_host().results}
    assert host["hugepages-mount"].status is Status.OK
    assert "/dev/tenstorrent/0" in host["device"].detail
    # no Tenstorrent PCI function backs the node: env-check says so instead of passing
    assert host["device"].status is Status.FAIL and "0 Tenstorrent PCI" in host["device"].detail
    good = container.run_spec(
        busybox_image,
        device_nodes=["0"],
        hugepage_dirs=[container.HUGEPAGE_MOUNT],
        mount_set="full",
    )
    bad = container.run_spec(
        busybox_image,
        device_nodes=["0"],
        hugepage_dirs=[container.HUGEPAGE_MOUNT],
        mount_set="seed-broken",
    )
    g, b = container_facts(good), container_facts(bad)
    assert [d.name for d in g.devices] == ["0"] and g.devices[0].kind == "c"
    assert [d.name for d in b.devices] == ["0"]
    gj = {r.id: r.status for r in evaluate(g, Context(mode="container"), scope="facts")}
    bj = {r.id: r.status for r in evaluate(b, Context(mode="container"), scope="facts")}
    assert gj["hugepages-mount"] is Status.OK and bj["hugepages-mount"] is Status.FAIL
    assert gj["sysfs"] is Status.OK and bj["sysfs"] is Status.FAIL
