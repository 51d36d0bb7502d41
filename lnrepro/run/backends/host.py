"""What the backends that run a local process share: the host's fingerprint, execute, plan."""

from __future__ import annotations

import os
import platform
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lnrepro.doors import proc


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
        "os": _os_release(),
        "host": platform.node(),
        "host_kernel": platform.release(),
        "machine": platform.machine(),
        "driver": _first_line("/sys/module/tenstorrent/version"),
        "devices": [f"/dev/tenstorrent/{d}" for d in devices],
        "arch_name": os.environ.get("ARCH_NAME"),
    }


def _os_release() -> str | None:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


class LocalProcess:
    """For a backend whose test command runs here as is: ``execute``, ``plan``, ``fingerprint``
    in terms of its ``command``."""

    def command(self, gtest_filter: str, report: Path, attempt: int) -> list[str]:
        raise NotImplementedError

    def execute(
        self,
        gtest_filter: str,
        report: Path,
        attempt: int,
        on_output: Callable[[bytes], None],
        timeout: float | None,
    ) -> proc.ProcResult:
        return proc.stream(self.command(gtest_filter, report, attempt), on_output, timeout=timeout)

    def plan(self, gtest_filter: str, record_dir: Path) -> dict[str, list[str] | str]:
        return {
            "build": [],
            "test": shlex.join(self.command(gtest_filter, record_dir / "attempt-1.json", 1)),
        }

    def fingerprint(self) -> dict[str, Any]:
        return host_fingerprint()
