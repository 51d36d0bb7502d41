"""Small images made here, with no registry: a directory tree sent to ``docker import``.

Used by the tests' fixtures and by scripts/bench_container.py.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator
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


# What a debootstrapped image does not need: the .debs debootstrap downloaded (it leaves them in
# apt's cache), apt's package lists, documentation and translations. About a third of the
# toolchain image; every import, every send to another engine and every container start on an
# engine with the vfs driver copies the rest.
SLIM_AWAY = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
             "usr/share/info", "usr/share/locale")  # fmt: skip


def have_image(name: str) -> bool:
    """Whether this machine's engine has the image ``name``."""
    return subprocess.run(["docker", "image", "inspect", name], capture_output=True).returncode == 0


def debootstrap_image(
    name: str, packages: Iterable[str], prepare: Callable[[Path], None], *changes: str
) -> str:
    """A Debian bookworm image (``--variant=minbase`` plus ``packages``) made here as root, with no
    registry: debootstrap into a temporary directory, ``prepare(root)``, slim, ``docker import``.
    Reused while an image of that name exists."""
    if have_image(name):
        return name
    work = Path(tempfile.mkdtemp(prefix="lnrepro-rootfs-"))
    try:
        root = work / "rootfs"
        subprocess.run(
            ["debootstrap", "--variant=minbase", "--include=" + ",".join(packages), "bookworm",
             str(root), "http://deb.debian.org/debian"],
            check=True, capture_output=True, timeout=1500,
        )  # fmt: skip
        prepare(root)
        for rel in SLIM_AWAY:
            shutil.rmtree(root / rel, ignore_errors=True)
            (root / rel).mkdir(parents=True, exist_ok=True)
        (root / "var/cache/apt/archives/partial").mkdir(parents=True, exist_ok=True)
        (root / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
        return docker_import(root, name, *changes)
    finally:
        # what debootstrap mounts in the root while it installs, if it was stopped in between
        for mount in ("proc", "sys", "dev/pts"):
            if (root / mount).is_mount():
                subprocess.run(["umount", "-l", str(root / mount)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


LOCK = "/tmp/lnrepro-test-{}.lock"  # one per image: who makes it (tests/prebuild.py, the fixtures)


@contextlib.contextmanager
def one_builder(what: str) -> Iterator[None]:
    """One process at a time makes an image; the others wait for it, then find it made."""
    import fcntl

    with open(LOCK.format(what), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
