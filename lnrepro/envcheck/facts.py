"""Raw facts about a machine, as printed by ``probe.sh``, and how to collect them.

The probe runs the same way everywhere: on this host (root ``/``), on a ``--sysroot`` fixture
directory, and inside a container (started by :mod:`lnrepro.doors.container`). Only the judging of
facts happens in Python (:mod:`lnrepro.envcheck.checks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from lnrepro.doors import proc
from lnrepro.errors import EnvironmentProblem


@dataclass(frozen=True)
class DeviceNode:
    name: str
    kind: str  # "c" character device, "f" plain file (fixtures), "o" other
    readable: bool
    writable: bool


@dataclass(frozen=True)
class Mount:
    source: str
    target: str
    fstype: str
    options: tuple[str, ...]

    def option(self, name: str) -> str | None:
        options = (o.partition("=") for o in self.options)
        return next((value or key for key, _, value in options if key == name), None)


@dataclass
class Facts:
    probed: bool = False
    uid: int | None = None
    gid: int | None = None
    dev_dir: bool = False
    devices: list[DeviceNode] = field(default_factory=list)
    pci: list[tuple[str, str]] = field(
        default_factory=list
    )  # (address, device id) of vendor 0x1e52
    pci_total: int = 0
    sys_dir: bool = False
    module_loaded: bool = False
    module_version: str = ""
    hugepages_1g_supported: bool = False
    hugepages_1g: int | None = None
    hugepages_1g_free: int | None = None
    mounts: list[Mount] = field(default_factory=list)
    mounts_readable: bool = False
    cmdline: str = ""
    iommu_class: int = 0
    iommu_groups: int = 0
    env_arch_name: str = ""
    env_tt_metal_home: str = ""
    home_entries: set[str] = field(default_factory=set)

    def mount_at(self, target: str) -> Mount | None:
        found = [m for m in self.mounts if m.target == target]
        return found[-1] if found else None  # the last mount on a path is the visible one


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.lstrip("-").isdigit() else None


def parse_probe(text: str) -> Facts:
    """Facts from probe output; unknown keys and malformed lines are ignored."""
    f = Facts()
    for line in text.splitlines():
        key, sep, value = line.partition("\t")
        if not sep:
            continue
        if key == "probe":
            f.probed = True
        elif key in ("uid", "gid", "hugepages_1g", "hugepages_1g_free"):
            setattr(f, key, _int(value))
        elif key in ("pci_total", "iommu_class", "iommu_groups"):
            setattr(f, key, _int(value) or 0)
        elif key in (
            "dev_dir",
            "sys_dir",
            "module_loaded",
            "hugepages_1g_supported",
            "mounts_readable",
        ):
            setattr(f, key, value.strip() == "1")
        elif key in ("module_version", "cmdline", "env_arch_name", "env_tt_metal_home"):
            setattr(f, key, value.strip())
        elif key == "dev":
            parts = value.split()
            if len(parts) == 4:
                f.devices.append(DeviceNode(parts[0], parts[1], parts[2] == "1", parts[3] == "1"))
        elif key == "pci":
            parts = value.split()
            if len(parts) == 2:
                f.pci.append((parts[0], parts[1].lower()))
        elif key == "mount":
            parts = value.split()
            if len(parts) >= 4:
                f.mounts.append(Mount(parts[0], parts[1], parts[2], tuple(parts[3].split(","))))
        elif key == "home_entry":
            f.home_entries.add(value.strip())
    f.devices.sort(key=lambda d: (len(d.name), d.name))
    return f


def probe_script() -> str:
    return resources.files("lnrepro.envcheck").joinpath("probe.sh").read_text(encoding="utf-8")


def collect(root: Path | None, env: dict[str, str]) -> Facts:
    """Run the probe here against ``root`` (None: this machine's ``/``)."""
    code, out = proc.capture(
        ["sh", "-c", probe_script(), "probe", str(root) if root else ""], env=env, timeout=30
    )
    facts = parse_probe(out)
    if code != 0 or not facts.probed:
        raise EnvironmentProblem(
            f"the env-check probe failed (exit {code}): {out.strip()[:200]}",
            "check that /bin/sh works",
        )
    return facts
