"""Each check, good and bad, over --sysroot fixtures describing real hosts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lnrepro.envcheck import check_sysroot
from lnrepro.envcheck.checks import CHECK_IDS, Status
from lnrepro.envcheck.facts import parse_probe
from tests import sysroots as S
from tests.conftest import card_host_held_still


def statuses(host: S.Host, tmp: Path, **kw: object) -> dict[str, Status]:
    report = check_sysroot(host.build(tmp / "root"), **kw)  # type: ignore[arg-type]
    return {r.id: r.status for r in report.results}


def results(host: S.Host, tmp: Path, **kw: object):  # type: ignore[no-untyped-def]
    return {r.id: r for r in check_sysroot(host.build(tmp / "root"), **kw).results}  # type: ignore[arg-type]


def test_n150_is_ready(tmp_path: Path) -> None:
    s = statuses(S.N150, tmp_path)
    for cid in ("device", "driver", "hugepages-count", "hugepages-mount", "iommu", "sysfs"):
        assert s[cid] is Status.OK, cid
    assert s["docker"] is Status.SKIP and s["tt-smi"] is Status.SKIP  # about this machine, not DIR


def test_four_cards(tmp_path: Path) -> None:
    r = results(S.FOUR_CARDS, tmp_path)
    assert r["device"].status is Status.OK and "4 device(s)" in r["device"].detail
    assert r["hugepages-count"].status is Status.OK
    r = results(S.Host(devices=4, pci=[S.WH] * 4, hugepages=4), tmp_path / "b")
    assert (
        r["hugepages-count"].status is Status.WARN and "2 per device" in r["hugepages-count"].detail
    )
    r = results(S.Host(devices=4, pci=[S.WH] * 4, hugepages=3), tmp_path / "c")
    assert r["hugepages-count"].status is Status.FAIL and "echo 8" in r["hugepages-count"].command


def test_no_hugepages_fails_unless_the_iommu_is_on(tmp_path: Path) -> None:
    s = statuses(S.NO_HUGEPAGES, tmp_path)
    assert s["hugepages-count"] is Status.FAIL and s["hugepages-mount"] is Status.FAIL
    r = results(S.NO_HUGEPAGES_IOMMU, tmp_path / "b")
    assert r["hugepages-count"].status is Status.OK and r["hugepages-mount"].status is Status.OK
    assert r["iommu"].status is Status.OK and "iommu=pt" in r["iommu"].detail


def test_wrong_hugepage_size(tmp_path: Path) -> None:
    host = S.Host(mounts=[S.SYSFS_RW, "nodev /dev/hugepages-1G hugetlbfs rw,pagesize=2M 0 0"])
    r = results(host, tmp_path)
    assert (
        r["hugepages-mount"].status is Status.FAIL and "pagesize=2M" in r["hugepages-mount"].detail
    )


def test_seed_001_device_only_container(tmp_path: Path) -> None:
    r = results(S.DEVICE_ONLY_CONTAINER, tmp_path)
    assert r["sysfs"].status is Status.FAIL and "read-only" in r["sysfs"].detail
    assert "-v /sys:/sys" in r["sysfs"].fix
    assert (
        r["hugepages-mount"].status is Status.FAIL
        and "-v /dev/hugepages-1G" in r["hugepages-mount"].fix
    )
    assert r["device"].status is Status.OK


def test_empty_sysfs_stand_in(tmp_path: Path) -> None:
    host = S.Host(pci=[], other_pci=0, driver=None)
    r = results(host, tmp_path)
    assert r["sysfs"].status is Status.FAIL and "no PCI devices" in r["sysfs"].detail
    assert r["driver"].status is Status.SKIP  # no host sysfs: not a second failure


def test_no_card_skips_what_cannot_apply(tmp_path: Path) -> None:
    r = results(S.NO_CARD, tmp_path)
    assert r["device"].status is Status.FAIL and "install a card" in r["device"].fix
    for cid in ("driver", "hugepages-count", "arch"):
        assert r[cid].status is Status.SKIP, cid


def test_driver_not_loaded_and_too_old(tmp_path: Path) -> None:
    r = results(S.Host(devices=0, driver=None), tmp_path)
    assert r["device"].status is Status.FAIL and "driver is not loaded" in r["device"].detail
    assert r["driver"].status is Status.FAIL and "modprobe" in r["driver"].command
    r = results(S.Host(driver="1.29"), tmp_path / "b")
    assert r["driver"].status is Status.FAIL and "older than 1.33" in r["driver"].detail
    r = results(S.Host(driver="1.29"), tmp_path / "c", min_driver="1.20")
    assert r["driver"].status is Status.OK


def test_device_count_must_match_pci(tmp_path: Path) -> None:
    r = results(S.Host(devices=2, pci=[S.WH]), tmp_path)
    assert r["device"].status is Status.FAIL and "1 Tenstorrent PCI" in r["device"].detail


def test_device_node_that_is_not_a_device(tmp_path: Path) -> None:
    r = results(S.Host(dev_kind="dir"), tmp_path)
    assert r["device"].status is Status.FAIL and "not a character device" in r["device"].detail


def test_arch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARCH_NAME", raising=False)
    r = results(S.N150, tmp_path)
    assert r["arch"].status is Status.WARN and "ARCH_NAME=wormhole_b0" in r["arch"].fix
    monkeypatch.setenv("ARCH_NAME", "blackhole")
    r = results(S.N150, tmp_path / "b")
    assert r["arch"].status is Status.FAIL
    monkeypatch.setenv("ARCH_NAME", "wormhole_b0")
    assert results(S.N150, tmp_path / "c")["arch"].status is Status.OK


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def make_checkout(root: Path, pointer: bool, submodule: bool) -> Path:
    repo = root / "tt-metal"
    (repo / "tt_metal").mkdir(parents=True)
    (repo / "tt-train").mkdir()
    (repo / "build_metal.sh").write_text("#!/bin/sh\n")
    (repo / "tt_metal" / "kernel.cpp").write_text("int x;\n")
    if pointer:
        (repo / "data.bin").write_text(
            "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 123456\n"
        )
    git(repo.parent, "init", "-q", str(repo))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    if submodule:
        dep = root / "dep"
        dep.mkdir()
        git(dep, "init", "-q")
        (dep / "f").write_text("x\n")
        git(dep, "add", "-A")
        git(dep, "commit", "-qm", "dep")
        git(
            repo,
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            str(dep),
            "third_party/dep",
        )
        git(repo, "commit", "-qm", "sub")
        git(repo, "submodule", "deinit", "-q", "-f", "third_party/dep")  # left uninitialised
    return repo


def test_checkout_checks(tmp_path: Path) -> None:
    good = make_checkout(tmp_path / "a", pointer=False, submodule=False)
    r = results(S.N150, tmp_path / "ra", tt_metal=good)
    assert r["tt-metal-home"].status is Status.OK
    assert r["lfs"].status is Status.OK and r["submodules"].status is Status.OK
    bad = make_checkout(tmp_path / "b", pointer=True, submodule=True)
    r = results(S.N150, tmp_path / "rb", tt_metal=bad)
    assert (
        r["lfs"].status is Status.FAIL
        and "data.bin" in r["lfs"].detail
        and "git lfs pull" in r["lfs"].fix
    )
    assert r["submodules"].status is Status.FAIL and "uninitialised" in r["submodules"].detail
    r = results(S.N150, tmp_path / "rc", tt_metal=tmp_path / "nowhere")
    assert r["tt-metal-home"].status is Status.FAIL and r["lfs"].status is Status.SKIP
    (tmp_path / "plain").mkdir()
    r = results(S.N150, tmp_path / "rd", tt_metal=tmp_path / "plain")
    assert r["tt-metal-home"].status is Status.FAIL


def test_probe_parser_ignores_garbage() -> None:
    f = parse_probe("probe\t1\ngarbage\ndev\t0 c 1\ndev\t1 c 1 1\npci_total\tnan\nmount\tshort\n")
    assert f.probed and [d.name for d in f.devices] == ["1"] and f.pci_total == 0 and not f.mounts


def test_cli_json_and_exit_codes(tmp_path: Path) -> None:
    root = S.DEVICE_ONLY_CONTAINER.build(tmp_path / "root")
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", "env-check", "--sysroot", str(root), "--json"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    assert [c["id"] for c in doc["checks"]] == list(CHECK_IDS)
    assert all(set(c) == {"id", "status", "detail", "fix", "command"} for c in doc["checks"])
    assert doc["summary"]["fail"] >= 2 and doc["ok"] is False
    root = S.N150.build(tmp_path / "good")
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", "env-check", "--sysroot", str(root)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "ARCH_NAME": "wormhole_b0"},
    )
    assert p.returncode == 0, p.stdout
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", "env-check", "--sysroot", str(tmp_path / "none")],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 4 and "not a directory" in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "lnrepro", "env-check", "--sysroot", str(root), "--container"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2


def test_this_machine_is_judged_truthfully() -> None:
    """No card here: the device check fails, the run exits 1, every check has a verdict. While a
    test in another worker holds the fake card host (a device node with no card behind it), the
    machine is judged as it is then, and the state cannot change mid-check."""
    with card_host_held_still() as faked:
        p = subprocess.run(
            [sys.executable, "-m", "lnrepro", "env-check", "--json"], capture_output=True, text=True
        )
        no_node = not Path("/dev/tenstorrent").exists()
    doc = json.loads(p.stdout)
    by = {c["id"]: c for c in doc["checks"]}
    if faked:  # a node, but no PCI function and no driver behind it
        assert p.returncode == 1
        assert by["device"]["status"] == "fail"
        assert "0 Tenstorrent PCI function(s)" in by["device"]["detail"]
        assert by["driver"]["status"] == "fail"
    elif no_node:
        assert p.returncode == 1
        assert by["device"]["status"] == "fail"
        assert by["driver"]["status"] == "skip"
    assert all(c["detail"] for c in doc["checks"])
    assert all(c["fix"] for c in doc["checks"] if c["status"] == "fail")


def test_device_must_be_readable_and_writable_and_driver_minimum_is_inclusive() -> None:
    from lnrepro.envcheck.checks import Context, check_device, check_driver
    from lnrepro.envcheck.facts import parse_probe

    def facts(r: str, w: str, version: str = "1.33") -> Any:
        lines = {
            "probe": "1",
            "dev_dir": "1",
            "sys_dir": "1",
            "module_loaded": "1",
            "module_version": version,
            "dev": f"0 c {r} {w}",
            "pci": "0000:01:00.0 0x401e",
            "pci_total": "4",
        }
        return parse_probe("".join(f"{k}\t{v}\n" for k, v in lines.items()))

    ctx = Context(mode="host")
    assert check_device(facts("1", "1"), ctx).status is Status.OK
    for r, w in (("1", "0"), ("0", "1"), ("0", "0")):
        assert check_device(facts(r, w), ctx).status is Status.FAIL, (r, w)
    assert check_driver(facts("1", "1", "1.33"), ctx).status is Status.OK  # exactly the minimum
    assert check_driver(facts("1", "1", "1.32.9"), ctx).status is Status.FAIL
