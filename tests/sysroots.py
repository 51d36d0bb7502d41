"""Builders of --sysroot fixtures: real hosts described as directories (no card needed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

SYSFS_RW = "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0"
SYSFS_RO = "sysfs /sys sysfs ro,nosuid,nodev,noexec,relatime 0 0"
HUGE_1G = "nodev /dev/hugepages-1G hugetlbfs rw,relatime,pagesize=1024M 0 0"
HUGE_2M = "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0"
WH, BH = "0x401e", "0xb140"


@dataclass
class Host:
    devices: int = 1
    pci: list[str] = field(default_factory=lambda: [WH])  # Tenstorrent device ids
    other_pci: int = 3
    driver: str | None = "2.0.0"
    hugepages: int | None = 2
    huge_supported: bool = True
    mounts: list[str] = field(default_factory=lambda: [SYSFS_RW, HUGE_1G])
    iommu_units: int = 0
    cmdline: str = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet"
    dev_kind: str = "file"  # device nodes as plain files (fine for --sysroot)

    def build(self, root: Path) -> Path:
        (root / "proc").mkdir(parents=True)
        (root / "proc" / "mounts").write_text("\n".join(self.mounts) + "\n")
        (root / "proc" / "cmdline").write_text(self.cmdline + "\n")
        pci = root / "sys" / "bus" / "pci" / "devices"
        pci.mkdir(parents=True)
        for i, dev in enumerate(self.pci):
            d = pci / f"0000:0{i + 1}:00.0"
            d.mkdir()
            (d / "vendor").write_text("0x1e52\n")
            (d / "device").write_text(dev + "\n")
        for i in range(self.other_pci):
            d = pci / f"0000:00:0{i}.0"
            d.mkdir()
            (d / "vendor").write_text("0x8086\n")
            (d / "device").write_text("0x1234\n")
        if self.driver is not None:
            m = root / "sys" / "module" / "tenstorrent"
            m.mkdir(parents=True)
            (m / "version").write_text(self.driver + "\n")
        if self.huge_supported:
            h = root / "sys" / "kernel" / "mm" / "hugepages" / "hugepages-1048576kB"
            h.mkdir(parents=True)
            (h / "nr_hugepages").write_text(f"{self.hugepages or 0}\n")
            (h / "free_hugepages").write_text(f"{self.hugepages or 0}\n")
        for i in range(self.iommu_units):
            (root / "sys" / "class" / "iommu" / f"dmar{i}").mkdir(parents=True)
        if self.devices:
            (root / "dev" / "tenstorrent").mkdir(parents=True)
            for i in range(self.devices):
                node = root / "dev" / "tenstorrent" / str(i)
                if self.dev_kind == "dir":
                    node.mkdir()
                else:
                    node.write_text("")
        return root


N150 = Host()
N300 = Host()  # one PCI function per card; the second chip sits behind it
FOUR_CARDS = Host(devices=4, pci=[WH] * 4, hugepages=8)
NO_HUGEPAGES = Host(hugepages=0, mounts=[SYSFS_RW])
NO_HUGEPAGES_IOMMU = Host(hugepages=0, mounts=[SYSFS_RW], iommu_units=2, cmdline="iommu=pt")
# seed 001: a container started with --device only: docker's read-only sysfs, no hugepage mount
DEVICE_ONLY_CONTAINER = Host(mounts=["overlay / overlay rw 0 0", SYSFS_RO])
NO_CARD = Host(devices=0, pci=[], driver=None, hugepages=0, mounts=[SYSFS_RW])
