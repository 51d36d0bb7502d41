"""Checks as data: each has a stable id, a scope, and a judge returning status, detail, fix.

Ids are a public interface (users script against ``--json``); never rename one. A check that
cannot apply (no device, so no driver to version) is SKIP with the reason, never FAIL twice.

Scopes: ``facts`` checks judge what the probe saw, so they run for the host, a ``--sysroot``
and a container alike; ``host`` checks (Docker, the checkout's git state, disk, tools) are
about the machine lnrepro runs on and are judged once.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from lnrepro.envcheck.facts import Facts

# PCI device id -> ARCH_NAME (ids from tt-kmd / UMD)
ARCH_BY_DEVICE_ID = {"0xfaca": "grayskull", "0x401e": "wormhole_b0", "0xb140": "blackhole"}
DEFAULT_MIN_DRIVER = "1.33"  # tt-metal's install docs (v0.59-v0.60): TT-KMD v1.33 or above
HUGEPAGE_MOUNT = "/dev/hugepages-1G"
DISK_FAIL_GB = 20.0
DISK_WARN_GB = 50.0  # a Debug build of tt-metal with tt-train and tests takes tens of GB


class Status(str, Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


@dataclass(frozen=True)
class Result:
    id: str
    status: Status
    detail: str
    fix: str = ""  # what to do, in words (container advice included)
    command: str = ""  # the fix's command on this machine, one line of valid shell, if it has one


@dataclass
class Context:
    """What the judges need beyond the probe's facts."""

    mode: str = "host"  # host | sysroot | container
    tt_metal: Path | None = None  # the checkout, on this machine
    arch_name: str | None = None  # ARCH_NAME as lnrepro would pass it
    min_driver: str = DEFAULT_MIN_DRIVER
    docker: Callable[[], tuple[bool, str, str]] | None = None  # -> (ok, detail, fix)
    disk_path: Path = field(default_factory=Path.cwd)


Judge = Callable[[Facts, Context], Result]


@dataclass(frozen=True)
class Check:
    id: str
    scope: str  # "facts" | "host"
    title: str
    judge: Judge


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for p in text.strip().lstrip("v").split("."):
        digits = "".join(ch for ch in p if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def _devices_ok(f: Facts, ctx: Context) -> list[str]:
    kinds = ("c", "f") if ctx.mode == "sysroot" else ("c",)
    return [d.name for d in f.devices if d.kind in kinds]


# ------------------------------------------------------------------- judges
def check_device(f: Facts, ctx: Context) -> Result:
    i = "device"
    nodes = _devices_ok(f, ctx)
    pci = len(f.pci)
    if not f.devices and not pci:
        return Result(
            i,
            Status.FAIL,
            "no /dev/tenstorrent devices and no Tenstorrent PCI function (vendor 0x1e52)",
            "install a card and tt-kmd; inside a container, pass --device /dev/tenstorrent/N (lnrepro does)",
        )
    if not f.devices:
        return Result(
            i,
            Status.FAIL,
            f"{pci} Tenstorrent PCI function(s) but no /dev/tenstorrent node: the driver is not loaded",
            "install tt-kmd and load it; in a container, pass --device /dev/tenstorrent/N",
            "sudo modprobe tenstorrent",
        )
    bad = [d.name for d in f.devices if d.name not in nodes]
    if bad:
        return Result(
            i,
            Status.FAIL,
            f"/dev/tenstorrent/{bad[0]} is not a character device",
            "remove the stray file and reload the driver",
            "sudo modprobe -r tenstorrent && sudo modprobe tenstorrent",
        )
    closed = [d.name for d in f.devices if not (d.readable and d.writable)]
    if closed:
        return Result(
            i,
            Status.FAIL,
            f"/dev/tenstorrent/{closed[0]} is not readable and writable by uid {f.uid}",
            "install tt-kmd's udev rules or add your user to the group owning /dev/tenstorrent/*",
        )
    listed = ", ".join(f"/dev/tenstorrent/{n}" for n in nodes)
    if f.pci_total and pci != len(nodes):
        return Result(
            i,
            Status.FAIL,
            f"{len(nodes)} device node(s) ({listed}) but {pci} Tenstorrent PCI function(s) in /sys",
            "reset or re-seat the card (tt-smi -r), reload tt-kmd; in a container mount the host's /sys (-v /sys:/sys)",
        )
    return Result(
        i,
        Status.OK,
        f"{len(nodes)} device(s): {listed}" + (f", {pci} PCI function(s)" if pci else ""),
    )


def check_driver(f: Facts, ctx: Context) -> Result:
    i = "driver"
    if not f.devices and not f.pci:
        return Result(i, Status.SKIP, "no device, so no driver to check")
    if not f.module_loaded:
        if f.devices and not f.pci_total:
            return Result(
                i, Status.SKIP, "/sys shows no modules here (no host sysfs): see the sysfs check"
            )
        return Result(
            i,
            Status.FAIL,
            "tt-kmd (module tenstorrent) is not loaded",
            "install tt-kmd (dkms) and load it",
            "sudo modprobe tenstorrent",
        )
    if not f.module_version:
        return Result(
            i,
            Status.WARN,
            "tt-kmd is loaded but /sys/module/tenstorrent/version is unreadable",
            "check /sys permissions",
        )
    if _version(f.module_version) < _version(ctx.min_driver):
        return Result(
            i,
            Status.FAIL,
            f"tt-kmd {f.module_version} is older than {ctx.min_driver}",
            f"upgrade tt-kmd to {ctx.min_driver} or newer (or pass --min-driver if you know better)",
        )
    return Result(i, Status.OK, f"tt-kmd {f.module_version} (>= {ctx.min_driver})")


def iommu_on(f: Facts) -> bool:
    return f.iommu_class > 0 or f.iommu_groups > 0


def check_hugepages_count(f: Facts, ctx: Context) -> Result:
    i = "hugepages-count"
    n = len(_devices_ok(f, ctx)) or len(f.pci)
    if n == 0:
        return Result(i, Status.SKIP, "no device to reserve hugepages for")
    have = f.hugepages_1g or 0
    if not f.hugepages_1g_supported:
        if iommu_on(f):
            return Result(
                i,
                Status.OK,
                "no 1 GiB hugepage support, but the IOMMU is on: hugepages are optional",
            )
        return Result(
            i,
            Status.FAIL,
            "this kernel/CPU offers no 1 GiB hugepages and the IOMMU is off",
            "enable the IOMMU (iommu=pt) or use a CPU with pdpe1gb",
        )
    if have >= 2 * n:
        return Result(i, Status.OK, f"{have} x 1 GiB reserved for {n} device(s)")
    if iommu_on(f):
        return Result(
            i,
            Status.OK,
            f"{have} x 1 GiB reserved for {n} device(s); the IOMMU is on, so that is optional",
        )
    fix = f"reserve {2 * n} (or hugepages=... on the kernel command line)"
    cmd = f"echo {2 * n} | sudo tee /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"
    if have >= n:
        return Result(
            i,
            Status.WARN,
            f"{have} x 1 GiB reserved for {n} device(s); setups use 2 per device",
            fix,
            cmd,
        )
    return Result(
        i,
        Status.FAIL,
        f"{have} x 1 GiB reserved for {n} device(s): fewer than one per device",
        fix,
        cmd,
    )


def check_hugepages_mount(f: Facts, ctx: Context) -> Result:
    i = "hugepages-mount"
    m = f.mount_at(HUGEPAGE_MOUNT)
    fix = (
        f"mount hugetlbfs with 1 GiB pages at {HUGEPAGE_MOUNT}; "
        f"in a container: -v {HUGEPAGE_MOUNT}:{HUGEPAGE_MOUNT} (lnrepro does)"
    )
    cmd = (
        f"sudo mkdir -p {HUGEPAGE_MOUNT} && "
        f"sudo mount -t hugetlbfs -o pagesize=1G nodev {HUGEPAGE_MOUNT}"
    )
    if not f.mounts_readable:
        return Result(i, Status.FAIL, "/proc/mounts is unreadable", "run where /proc is mounted")
    if m is None:
        if iommu_on(f):
            return Result(
                i, Status.OK, f"nothing mounted at {HUGEPAGE_MOUNT}, but the IOMMU is on: optional"
            )
        return Result(
            i,
            Status.FAIL,
            f"no hugetlbfs mounted at {HUGEPAGE_MOUNT} (tt-metal: 'no huge page mount found')",
            fix,
            cmd,
        )
    if m.fstype != "hugetlbfs":
        return Result(i, Status.FAIL, f"{HUGEPAGE_MOUNT} is {m.fstype}, not hugetlbfs", fix, cmd)
    size = m.option("pagesize")
    if size not in ("1G", "1024M", "1048576k", "1048576K"):
        return Result(
            i,
            Status.FAIL,
            f"hugetlbfs at {HUGEPAGE_MOUNT} has pagesize={size or 'default (2M)'}, not 1G",
            fix,
            cmd,
        )
    return Result(i, Status.OK, f"hugetlbfs pagesize=1G at {HUGEPAGE_MOUNT}")


def check_iommu(f: Facts, ctx: Context) -> Result:
    i = "iommu"
    words = f.cmdline.split()
    mode = next((w for w in words if w.startswith(("iommu=", "intel_iommu=", "amd_iommu="))), "")
    if iommu_on(f):
        return Result(
            i,
            Status.OK,
            f"on ({f.iommu_class} IOMMU unit(s)){', ' + mode if mode else ''}: "
            "with a recent tt-kmd, 1 GiB hugepages are optional",
        )
    return Result(
        i, Status.OK, "off: tt-metal needs 1 GiB hugepages (see hugepages-count, hugepages-mount)"
    )


def check_sysfs(f: Facts, ctx: Context) -> Result:
    i = "sysfs"
    fix = "mount the host's sysfs read-write: -v /sys:/sys (lnrepro does); seed 001's tests failed without it"
    if not f.sys_dir:
        return Result(i, Status.FAIL, "/sys is absent", fix)
    m = f.mount_at("/sys")
    if m is not None and m.fstype != "sysfs":
        return Result(i, Status.FAIL, f"/sys is {m.fstype}, not sysfs", fix)
    if m is not None and "ro" in m.options:
        return Result(
            i, Status.FAIL, "/sys is read-only: a container's stand-in, not the host's sysfs", fix
        )
    if f.pci_total == 0:
        return Result(i, Status.FAIL, "/sys shows no PCI devices: empty or a stand-in", fix)
    return Result(i, Status.OK, f"read-write sysfs, {f.pci_total} PCI function(s) visible")


def check_arch(f: Facts, ctx: Context) -> Result:
    i = "arch"
    arch = (f.env_arch_name if ctx.mode == "container" else ctx.arch_name) or ""
    found = sorted({ARCH_BY_DEVICE_ID.get(dev, f"unknown device {dev}") for _, dev in f.pci})
    if not found:
        if arch:
            return Result(i, Status.SKIP, f"ARCH_NAME={arch}; no device to compare it with")
        return Result(i, Status.SKIP, "ARCH_NAME unset and no device to infer it from")
    if len(found) > 1:
        return Result(
            i,
            Status.WARN,
            f"mixed devices: {', '.join(found)}",
            "run on a host with one architecture",
        )
    want = found[0]
    if not arch:
        return Result(
            i,
            Status.WARN,
            f"ARCH_NAME is unset; the device is {want}",
            f"set ARCH_NAME={want}",
            f"export ARCH_NAME={want}",
        )
    if arch != want:
        return Result(
            i,
            Status.FAIL,
            f"ARCH_NAME={arch} but the device is {want}",
            f"set ARCH_NAME={want}",
            f"export ARCH_NAME={want}",
        )
    return Result(i, Status.OK, f"ARCH_NAME={arch} matches the device")


def check_tt_metal_home(f: Facts, ctx: Context) -> Result:
    i = "tt-metal-home"
    home = (
        f.env_tt_metal_home
        if ctx.mode == "container"
        else (str(ctx.tt_metal) if ctx.tt_metal else "")
    )
    if not home:
        return Result(
            i,
            Status.WARN,
            "no tt-metal checkout given: TT_METAL_HOME is unset",
            "export TT_METAL_HOME=/path/to/tt-metal or pass --tt-metal PATH (the emulator needs none)",
        )
    where = "in the container" if ctx.mode == "container" else ""
    if "." not in f.home_entries:
        return Result(
            i,
            Status.FAIL,
            f"{home} does not exist {where}".strip(),
            "clone tt-metal there, or point TT_METAL_HOME/--tt-metal at your clone; in a container, mount it at the same path",
        )
    missing = [e for e in ("build_metal.sh", "tt_metal", "tt-train") if e not in f.home_entries]
    if ".git" not in f.home_entries:
        return Result(
            i,
            Status.FAIL,
            f"{home} is not a git work tree",
            "point it at the root of a tt-metal clone",
        )
    if missing:
        return Result(
            i,
            Status.FAIL,
            f"{home} lacks {', '.join(missing)}: not the root of a tt-metal clone",
            "point TT_METAL_HOME/--tt-metal at the directory holding build_metal.sh",
        )
    return Result(i, Status.OK, f"{home}: a tt-metal work tree")


def _of_checkout(i: str) -> Callable[[Callable[[str, Path], Result]], Judge]:
    """A judge (id ``i``) of the tt-metal checkout's own files, given the work tree; SKIP where
    there is none."""

    def wrap(judge: Callable[[str, Path], Result]) -> Judge:
        def run(f: Facts, ctx: Context) -> Result:
            from lnrepro.doors.gitops import is_work_tree

            if ctx.tt_metal is None or not is_work_tree(ctx.tt_metal):
                return Result(i, Status.SKIP, "no tt-metal checkout to check")
            return judge(i, ctx.tt_metal)

        return run

    return wrap


@_of_checkout("submodules")
def check_submodules(i: str, repo: Path) -> Result:
    from lnrepro.doors.gitops import submodules
    from lnrepro.errors import GitError

    try:
        subs = submodules(repo)
    except GitError as exc:
        return Result(i, Status.FAIL, exc.message, exc.fix or "")
    bad = [s for s in subs if s.state != "ok"]
    if bad:
        return Result(
            i,
            Status.FAIL,
            f"{len(bad)} of {len(subs)} submodule(s) not ready, e.g. {bad[0].path} ({bad[0].state})",
            "git submodule sync --recursive && git submodule update --init --recursive",
        )
    return Result(i, Status.OK, f"{len(subs)} submodule(s) initialised at their recorded commits")


@_of_checkout("tests")
def check_tests(i: str, repo: Path) -> Result:
    """The tests a default run asks for, read from the checkout's test file before any build."""
    from lnrepro.doors.fsio import read_tree
    from lnrepro.model.checkout import TEST_FILE
    from lnrepro.model.requests import DEFAULT_FILTER
    from lnrepro.model.tests_known import missing_note, missing_patterns

    facts = read_tree(repo)
    if not facts.test_file_present:
        return Result(
            i,
            Status.WARN,
            f"{TEST_FILE} is not in this checkout: no LayerNorm backward test to run",
            "check out a commit that has tt-train's LayerNorm backward tests",
        )
    missing = missing_patterns(DEFAULT_FILTER, list(facts.tests))
    note = missing_note(missing)
    if note is not None:
        return Result(i, Status.WARN, note.split("; ", 1)[0], note.split("; ", 1)[-1])
    return Result(
        i, Status.OK, f"{len(facts.tests)} LayerNorm backward tests, the BugRepro ones included"
    )


@_of_checkout("lfs")
def check_lfs(i: str, repo: Path) -> Result:
    from lnrepro.doors.gitops import lfs_pointers

    pointers = lfs_pointers(repo)
    if pointers:
        return Result(
            i,
            Status.FAIL,
            f"{len(pointers)} git-LFS pointer file(s) not pulled, e.g. {pointers[0]}",
            "git lfs install && git lfs pull && git submodule foreach --recursive git lfs pull",
        )
    return Result(i, Status.OK, "no un-pulled git-LFS pointer files")


def check_disk(f: Facts, ctx: Context) -> Result:
    i = "disk"
    if ctx.mode == "sysroot" and not (ctx.tt_metal and ctx.tt_metal.exists()):
        return Result(i, Status.SKIP, "not measured for --sysroot (it describes another machine)")
    path = ctx.tt_metal if ctx.tt_metal and ctx.tt_metal.exists() else ctx.disk_path
    try:
        free = shutil.disk_usage(path).free / 2**30
    except OSError as exc:
        return Result(i, Status.WARN, f"cannot measure free space at {path}: {exc.strerror}")
    text = f"{free:.0f} GiB free at {path}"
    fix = "free space (old build_* directories, ~/.cache/tt-metal-cache) or build elsewhere with --build-dir"
    if free < DISK_FAIL_GB:
        return Result(
            i, Status.FAIL, text + f" (a debug build needs > {DISK_FAIL_GB:.0f} GiB)", fix
        )
    if free < DISK_WARN_GB:
        return Result(
            i,
            Status.WARN,
            text + f" (tight: a debug build with tests can use {DISK_WARN_GB:.0f} GiB)",
            fix,
        )
    return Result(i, Status.OK, text)


def check_docker(f: Facts, ctx: Context) -> Result:
    i = "docker"
    if ctx.docker is None:
        return Result(i, Status.SKIP, "not applicable to --sysroot (it describes another machine)")
    ok, detail, fix = ctx.docker()
    return Result(i, Status.OK if ok else Status.FAIL, detail, fix)


def check_tt_smi(f: Facts, ctx: Context) -> Result:
    i = "tt-smi"
    if ctx.mode == "sysroot":
        return Result(i, Status.SKIP, "not applicable to --sysroot")
    path = shutil.which("tt-smi")
    if path:
        return Result(i, Status.OK, f"{path} (resets a wedged card: tt-smi -r)")
    if not f.devices and not f.pci:
        return Result(i, Status.SKIP, "no device to reset")
    return Result(
        i,
        Status.WARN,
        "tt-smi not found: a hung card cannot be reset between attempts",
        "install tt-smi",
        "pip install tt-smi",
    )


CHECKS: tuple[Check, ...] = (
    Check("docker", "host", "Docker engine", check_docker),
    Check("device", "facts", "Tenstorrent devices", check_device),
    Check("driver", "facts", "tt-kmd driver", check_driver),
    Check("hugepages-count", "facts", "1 GiB hugepages reserved", check_hugepages_count),
    Check("hugepages-mount", "facts", "hugetlbfs mount", check_hugepages_mount),
    Check("iommu", "facts", "IOMMU", check_iommu),
    Check("sysfs", "facts", "host sysfs", check_sysfs),
    Check("arch", "facts", "ARCH_NAME", check_arch),
    Check("tt-metal-home", "facts", "tt-metal checkout", check_tt_metal_home),
    Check("submodules", "host", "git submodules", check_submodules),
    Check("lfs", "host", "git-LFS files", check_lfs),
    Check("tests", "host", "the requested tests", check_tests),
    Check("disk", "host", "free disk", check_disk),
    Check("tt-smi", "host", "tt-smi", check_tt_smi),
)
CHECK_IDS = tuple(c.id for c in CHECKS)


def evaluate(facts: Facts, ctx: Context, scope: str | None = None) -> list[Result]:
    return [c.judge(facts, ctx) for c in CHECKS if scope is None or c.scope == scope]
