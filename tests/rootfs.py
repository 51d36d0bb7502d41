"""Small images made here, with no registry: a directory tree sent to ``docker import``.

Used by the tests' fixtures and by scripts/bench_container.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
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
        subprocess.run(
            ["docker", "import", *flags, "-", name],
            stdin=tar.stdout,
            check=True,
            capture_output=True,
        )
    finally:
        if tar.stdout is not None:
            tar.stdout.close()
        tar.wait()
    return name


# What a debootstrapped image does not need: the .debs debootstrap downloaded (it leaves them in
# apt's cache), apt's package lists, documentation and translations. About a third of the
# toolchain image; every import, every send to another engine and every container start on an
# engine with the vfs driver copies the rest.
SLIM_AWAY = (
    "var/cache/apt/archives",
    "var/lib/apt/lists",
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
)


def have_image(name: str) -> bool:
    """Whether this machine's engine has the image ``name``."""
    return subprocess.run(["docker", "image", "inspect", name], capture_output=True).returncode == 0


DEBOOTSTRAP = ("debootstrap", "--variant=minbase", "bookworm")  # Debian's required packages
MIRROR = "http://deb.debian.org/debian"
BASE = (
    "lnrepro-test-bookworm:"
    + hashlib.sha256(repr((DEBOOTSTRAP, SLIM_AWAY)).encode()).hexdigest()[:12]
)


def debootstrap_base() -> str:
    """Debian bookworm's ``--variant=minbase`` (debootstrap into a temporary directory, slimmed,
    ``docker import``), made here as root with no registry: the base of the images the tests
    build. Reused while it exists."""
    if have_image(BASE):
        return BASE
    work = Path(tempfile.mkdtemp(prefix="lnrepro-rootfs-"))
    root = work / "rootfs"
    try:
        subprocess.run(
            [*DEBOOTSTRAP, str(root), MIRROR], check=True, capture_output=True, timeout=1500
        )
        for rel in SLIM_AWAY:
            shutil.rmtree(root / rel, ignore_errors=True)
            (root / rel).mkdir(parents=True, exist_ok=True)
        (root / "var/cache/apt/archives/partial").mkdir(parents=True, exist_ok=True)
        (root / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
        return docker_import(root, BASE)
    finally:
        # what debootstrap mounts in the root while it installs, if it was stopped in between
        for mount in ("proc", "sys", "dev/pts"):
            if (root / mount).is_mount():
                subprocess.run(["umount", "-l", str(root / mount)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


# apt in a build step, slimmed as SLIM_AWAY in the same layer (so never stored)
APT_INSTALL = (
    "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq"
    " --no-install-recommends {packages} >/dev/null"
    " && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb"
    " /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/*"
)


def debian_image(name: str, packages: Iterable[str], files: dict[str, str], *lines: str) -> str:
    """The image ``name``: :func:`debootstrap_base` with ``packages`` (apt from Debian's mirror,
    no recommends, as debootstrap's ``--include`` installs them), ``files`` (path in the image:
    text, made executable) and more Dockerfile ``lines``; ``docker build`` here, no registry.
    One apt run, where ``debootstrap --include`` resolved and configured packages one by one
    (about 20 core-s less on 2 cores). Reused while an image of that name exists."""
    if have_image(name):
        return name
    return docker_build(
        name, debootstrap_base(), APT_INSTALL.format(packages=" ".join(packages)), files, *lines
    )


def docker_build(name: str, base: str, run: str, files: dict[str, str], *lines: str) -> str:
    """``docker build`` of the image ``name``: ``base``, the ``RUN`` line ``run``, ``files`` (path
    in the image: text, made executable; one layer) and more Dockerfile ``lines``, on the host's
    network as debootstrap had (no bridge, the host's resolver)."""
    with tempfile.TemporaryDirectory(prefix="lnrepro-image-") as ctx:
        dockerfile = [f"FROM {base}", run]
        for path, text in files.items():
            f = Path(ctx, "root", path.lstrip("/"))
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
            f.chmod(0o755)
        if files:
            dockerfile.append("COPY root/ /")
        subprocess.run(
            ["docker", "build", "--network", "host", "-q", "-t", name, "-f", "-", ctx],
            input="\n".join([*dockerfile, *lines]).encode(),
            check=True,
            capture_output=True,
            timeout=1500,
        )
    return name


LOCK = "/tmp/lnrepro-test-{}.lock"  # one per image: who makes it (tests/prebuild.py, the fixtures)


@contextlib.contextmanager
def one_builder(what: str) -> Iterator[None]:
    """One process at a time makes an image; the others wait for it, then find it made."""
    import fcntl

    with open(LOCK.format(what), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
