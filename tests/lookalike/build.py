"""Build and run a look-alike checkout the way a tt-metal developer would."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BuildResult:
    returncode: int
    seconds: float
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def build(
    checkout: Path,
    *flags: str,
    env: dict[str, str] | None = None,
    timeout: float = 900,
) -> BuildResult:
    """``./build_metal.sh FLAGS`` (default: --debug --build-tt-train --build-tests)."""
    argv = [
        str(checkout / "build_metal.sh"),
        *(flags or ("--debug", "--build-tt-train", "--build-tests")),
    ]
    start = time.monotonic()
    res = subprocess.run(
        argv,
        cwd=checkout,
        env={**os.environ, **(env or {})},
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    out = (res.stdout + res.stderr).decode(errors="replace")
    return BuildResult(res.returncode, time.monotonic() - start, out)


def device_env(
    root: Path, checkout: Path, *, hugepages: bool = True, device: bool = True
) -> dict[str, str]:
    """Environment under which the look-alike sees a card: a device node and a hugepage mount
    made of plain files under ``root`` (so no root or real card is needed), its own JIT cache."""
    dev = root / "dev-tenstorrent"
    dev.mkdir(parents=True, exist_ok=True)
    node = dev / "0"
    if device:
        node.touch()
    elif node.exists():
        node.unlink()
    mounts = root / "mounts"
    hp = "/dev/hugepages-1G"
    mounts.write_text(
        "proc /proc proc rw 0 0\n"
        + (f"hugetlbfs {hp} hugetlbfs rw,pagesize=1G 0 0\n" if hugepages else "")
    )
    return {
        "TT_METAL_HOME": str(checkout),
        "ARCH_NAME": "wormhole_b0",
        "TT_METAL_CACHE": str(root / "tt-metal-cache"),
        "TT_LOOKALIKE_DEV_ROOT": str(dev),
        "TT_LOOKALIKE_PROC_MOUNTS": str(mounts),
        "TT_LOOKALIKE_HUGEPAGE_DIR": hp,
    }


def run_tests(
    binary: Path, *args: str, env: dict[str, str], timeout: float = 300
) -> tuple[int, str]:
    res = subprocess.run(
        [str(binary), *args],
        env={**os.environ, **env},
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    code = 128 - res.returncode if res.returncode < 0 else res.returncode  # as a shell reports it
    return code, (res.stdout + res.stderr).decode(errors="replace")


TOOLCHAIN_PACKAGES = ("g++", "make", "cmake", "ninja-build", "libgtest-dev", "ccache")


def toolchain_image_name() -> str:
    import hashlib

    tag = "bookworm-v1:" + ",".join(TOOLCHAIN_PACKAGES)
    return "lnrepro-test-toolchain:" + hashlib.sha256(tag.encode()).hexdigest()[:12]


def ensure_toolchain_image() -> str:
    """A Debian bookworm image with the look-alike's toolchain (debootstrap + docker import, as
    root, no registry); reused while an image of that name exists."""
    import shutil
    import tempfile

    name = toolchain_image_name()
    if subprocess.run(["docker", "image", "inspect", name], capture_output=True).returncode == 0:
        return name
    work = Path(tempfile.mkdtemp(prefix="lnrepro-toolchain-"))
    try:
        root = work / "rootfs"
        subprocess.run(
            ["debootstrap", "--variant=minbase", "--include=" + ",".join(TOOLCHAIN_PACKAGES),
             "bookworm", str(root), "http://deb.debian.org/debian"],
            check=True, capture_output=True, timeout=1500,
        )  # fmt: skip
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(
            ["docker", "import", "-", name], stdin=tar.stdout, check=True, capture_output=True
        )
        tar.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return name
