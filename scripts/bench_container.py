"""What one container costs: lnrepro starts one per build command and per test attempt.

Runs ``true`` in ``--count`` containers through lnrepro's own door (``container.stream``), once
per network setting, and prints a Markdown table: wall seconds per container, and the whole
machine's busy core-seconds per container (``/proc/stat``: the engine, containerd, runc and this
process together). The image is made here from a static busybox (``docker import``), or given
with ``--image``. Run it on an idle machine; the engine must answer. Usage:

    python scripts/bench_container.py [--count 30] [--image IMAGE]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lnrepro.doors import container
from tests import rootfs

# (label, ContainerSpec.network): the engine's default bridge, and ContainerSpec's own default
SETTINGS = (("bridge (the engine's default)", None), ("host (lnrepro's, as tt-metal's)", "host"))


def busy_ticks() -> int:
    with open("/proc/stat", encoding="ascii") as fh:
        v = [int(x) for x in fh.readline().split()[1:]]
    return sum(v) - v[3] - v[4]  # all but idle and iowait


def busybox_image() -> str:
    if rootfs.busybox() is None:
        sys.exit("bench_container: no busybox to make an image of (apt install busybox-static)")
    with tempfile.TemporaryDirectory() as d:
        root = rootfs.busybox_root(Path(d), ("true",))
        return rootfs.docker_import(root, f"lnrepro-bench-busybox:{uuid.uuid4().hex[:8]}")


def measure(image: str, network: str | None, count: int) -> tuple[float, float]:
    spec = container.ContainerSpec(image, user=f"{os.getuid()}:{os.getgid()}", network=network)
    container.stream(spec, ["true"], lambda _: None, timeout=60)  # warm: the image's layers
    hz = os.sysconf("SC_CLK_TCK")
    b0, t0 = busy_ticks(), time.monotonic()
    for _ in range(count):
        res = container.stream(spec, ["true"], lambda _: None, timeout=60)
        if res.exit_code != 0:
            sys.exit(f"bench_container: the container exited {res.exit_code}")
    wall, busy = time.monotonic() - t0, (busy_ticks() - b0) / hz
    return wall / count, busy / count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--image", help="an image with `true` (default: one made from busybox)")
    ns = ap.parse_args()
    made = ns.image is None
    image = ns.image or busybox_image()
    try:
        rows = [(label, *measure(image, net, ns.count)) for label, net in SETTINGS]
    finally:
        if made:
            subprocess.run(["docker", "rmi", "-f", image], capture_output=True, check=False)
    engine = subprocess.run(
        ["docker", "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    print(
        f"{ns.count} containers running `true` per setting, through container.stream; "
        f"{os.cpu_count()} cores, {platform.machine()}, Docker engine {engine or '?'}.\n"
    )
    print("| network | wall s per container | busy core-s per container |")
    print("|---|---:|---:|")
    for label, wall, busy in rows:
        print(f"| {label} | {wall:.3f} | {busy:.3f} |")


if __name__ == "__main__":
    main()
