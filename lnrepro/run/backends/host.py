"""What the backends that run a local process share: the host's fingerprint, execute, plan."""

from __future__ import annotations

import os
import platform
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from lnrepro.doors import proc
from lnrepro.model.jsonio import JSON
from lnrepro.run.backends import Call


def _first_line(path: str) -> str | None:
    try:
        return Path(path).read_text().splitlines()[0].strip()
    except (OSError, IndexError):
        return None


def host_fingerprint() -> dict[str, JSON]:
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
    """For a backend whose test program runs here as is, with nothing to build."""

    def prepare_attempt(
        self, record_dir: Path, attempt: int, on_output: Callable[[bytes], None]
    ) -> str | None:
        return None

    def execute(self, call: Call) -> proc.ProcResult:
        env = {**os.environ, **call.extra_env} if call.extra_env else None
        return proc.stream(call.argv, call.on_output, timeout=call.timeout, env=env)

    def python(self, attempt: int) -> str:
        return sys.executable

    def shell_line(self, argv: list[str], record_dir: Path) -> str:
        return shlex.join(argv)

    def build_lines(self, record_dir: Path) -> list[str]:
        return []

    def fingerprint(self) -> dict[str, JSON]:
        return host_fingerprint()
