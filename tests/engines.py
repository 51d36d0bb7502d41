"""A second Docker engine that cannot see this machine's paths: a card host, for real, on one machine.

The engine runs in a container of this machine's engine (Debian bookworm's docker.io, installed on
the look-alike's toolchain image, no registry). ``--privileged`` is refused on these machines, so
it gets every capability but CAP_SYS_RESOURCE, no seccomp or AppArmor profile, the host's cgroup
namespace and a tmpfs for /var/lib/docker (../shared/formats/second-engine.md). It looks like a
card host: its entry script makes /dev/tenstorrent/0 (a character device: /dev/null's numbers) and
mounts hugetlbfs at /dev/hugepages-1G before it starts dockerd. A bind mount of this machine's
path gives an empty directory there, as on a real remote host.

It is reached through a Docker context on the loopback (``tcp://127.0.0.1:PORT``), or over SSH
(``ssh://root@127.0.0.1:PORT``): sshd runs beside dockerd, and the docker CLI there answers the
SDK's ``docker system dial-stdio``.
"""

from __future__ import annotations

import contextlib
import hashlib
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass

from tests.rootfs import APT_INSTALL

PACKAGES = ("docker.io", "iptables", "ca-certificates", "procps", "openssh-server")
ENTRY = """#!/bin/sh
# A card host: a device node and a 1G hugepage mount as tt-metal's hosts have, sshd, then dockerd.
set -e
mkdir -p /dev/tenstorrent /dev/hugepages-1G /run/sshd
[ -e /dev/tenstorrent/0 ] || mknod -m 666 /dev/tenstorrent/0 c 1 3
mountpoint -q /dev/hugepages-1G || mount -t hugetlbfs -o pagesize=1G nodev /dev/hugepages-1G \
  || mount -t hugetlbfs nodev /dev/hugepages-1G || true
if [ -s /root/.ssh/authorized_keys ]; then /usr/sbin/sshd -p 22; fi
# overlay2 on the tmpfs when this kernel mounts it here (a container starts at once), else vfs
# (every container start copies the whole image: about 3 s for the toolchain image)
p=/var/lib/docker/probe driver=vfs
mkdir -p $p/l $p/u $p/w $p/m
if mount -t overlay overlay -o lowerdir=$p/l,upperdir=$p/u,workdir=$p/w $p/m 2>/dev/null; then
  umount $p/m && driver=overlay2
fi
rm -rf $p
# --tls=false: without it, dockerd on a plain TCP socket waits 15 s on purpose before it serves
exec dockerd -H tcp://0.0.0.0:2375 -H unix:///var/run/docker.sock --storage-driver $driver \
  --iptables=false --bridge=none --tls=false
"""
# the flags that work where --privileged is refused (../shared/formats/second-engine.md)
RUN_FLAGS = (
    "--cap-add",
    "ALL",
    "--cap-drop",
    "SYS_RESOURCE",
    "--security-opt",
    "seccomp=unconfined",
    "--security-opt",
    "apparmor=unconfined",
    "--security-opt",
    "systempaths=unconfined",
    "--cgroupns",
    "host",
    "-v",
    "/sys/fs/cgroup:/sys/fs/cgroup",
    "--tmpfs",
    "/var/lib/docker:exec",
)


def image_name() -> str:
    from tests.lookalike.build import toolchain_image_name

    key = f"on {toolchain_image_name()}:" + ",".join(PACKAGES) + ENTRY + RUN + "".join(LINES)
    return "lnrepro-test-engine:" + hashlib.sha256(key.encode()).hexdigest()[:12]


# The engine's packages on the toolchain image (made anyway, and its lock taken after this one's,
# never before): about 20 core-s of apt, where a debootstrap of its own took 34 s and a second import.
RUN = APT_INSTALL.format(packages=" ".join(PACKAGES)) + " && ssh-keygen -A"
LINES = ("ENTRYPOINT []", 'CMD ["/usr/local/bin/card-host.sh"]')


def ensure_image() -> str:
    """The engine's image, made once per machine: the toolchain image (tests/lookalike/build.py)
    with Debian's docker.io, sshd and the card host's entry script (``docker build``, apt from
    Debian's mirror, no registry)."""
    from tests.lookalike.build import ensure_toolchain_image
    from tests.rootfs import docker_build, have_image, one_builder

    name = image_name()
    if have_image(name):
        return name
    with one_builder("toolchain-image"):
        base = ensure_toolchain_image()
    return docker_build(name, base, RUN, {"/usr/local/bin/card-host.sh": ENTRY}, *LINES)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Engine:
    name: str  # its container on this machine's engine
    tcp: str  # tcp://127.0.0.1:PORT
    ssh_port: int

    def docker(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["docker", "-H", self.tcp, *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=300,
        )

    def stop(self) -> None:
        """The card host goes down: its engine, its containers and volumes (tmpfs) with it."""
        subprocess.run(["docker", "rm", "-f", self.name], capture_output=True, check=False)


def start(image: str, authorized_key: str | None = None) -> Engine:
    """A fresh engine, answering on the loopback within a minute."""
    port, ssh_port = free_port(), free_port()
    name = f"lnrepro-test-engine-{port}"
    subprocess.run(
        [
            "docker",
            "run",
            "-d",
            "--name",
            name,
            *RUN_FLAGS,
            "-p",
            f"127.0.0.1:{port}:2375",
            "-p",
            f"127.0.0.1:{ssh_port}:22",
            image,
        ],
        check=True,
        capture_output=True,
    )
    if authorized_key:  # before sshd starts would be tidier; sshd reads it per connection
        subprocess.run(
            [
                "docker",
                "exec",
                "-i",
                name,
                "sh",
                "-c",
                "mkdir -p /root/.ssh && cat > /root/.ssh/authorized_keys && "
                "chmod 600 /root/.ssh/authorized_keys && /usr/sbin/sshd -p 22",
            ],
            input=authorized_key.encode(),
            check=True,
            capture_output=True,
        )
    eng = Engine(name, f"tcp://127.0.0.1:{port}", ssh_port)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if eng.docker("info", check=False).returncode == 0:
            return eng
        time.sleep(0.5)
    logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True).stderr
    eng.stop()
    raise RuntimeError(f"the second engine did not answer within 60 s: {logs[-2000:]}")


@contextlib.contextmanager
def running(image: str, authorized_key: str | None = None) -> Iterator[Engine]:
    eng = start(image, authorized_key)
    try:
        yield eng
    finally:
        eng.stop()
