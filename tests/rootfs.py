"""Small images made here, with no registry: a directory tree sent to ``docker import``.

Used by the tests' fixtures and by scripts/bench_container.py.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path


def busybox() -> Path | None:
    """This machine's static busybox (busybox-static), or None."""
    found = shutil.which("busybox") or "/bin/busybox"
    return Path(found) if Path(found).exists() else None


def busybox_root(root: Path, applets: Iterable[str]) -> Path:
    """``root`` with ``/bin/busybox`` and a link to it for each applet."""
    bb = busybox()
    if bb is None:
        raise FileNotFoundError("busybox-static is not installed")
    (root / "bin").mkdir(parents=True, exist_ok=True)
    shutil.copy(bb, root / "bin" / "busybox")
    for applet in applets:
        (root / "bin" / applet).symlink_to("busybox")
    return root


def docker_import(root: Path, name: str, *changes: str) -> str:
    """``root`` as the image ``name`` (each of ``changes`` a Dockerfile line, e.g. ``ENV …``)."""
    flags = [f for c in changes for f in ("--change", c)]
    tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
    try:
        subprocess.run(["docker", "import", *flags, "-", name], stdin=tar.stdout, check=True,
                       capture_output=True)  # fmt: skip
    finally:
        if tar.stdout is not None:
            tar.stdout.close()
        tar.wait()
    return name
