"""What a run's results depend on, read from this machine (no process is started)."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any


def _first_line(path: str) -> str | None:
    try:
        return Path(path).read_text().splitlines()[0].strip()
    except (OSError, IndexError):
        return None


def host_fingerprint() -> dict[str, Any]:
    from lnrepro import __version__

    dev = Path("/dev/tenstorrent")
    try:
        devices = sorted(p.name for p in dev.iterdir()) if dev.is_dir() else []
    except OSError:
        devices = []
    return {
        "lnrepro": __version__,
        "host": platform.node(),
        "host_kernel": platform.release(),
        "machine": platform.machine(),
        "driver": _first_line("/sys/module/tenstorrent/version"),
        "devices": [f"/dev/tenstorrent/{d}" for d in devices],
        "arch_name": os.environ.get("ARCH_NAME"),
    }
