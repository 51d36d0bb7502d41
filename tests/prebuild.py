"""The suite's debootstrapped images, made while other work runs, not when a test first asks.

A fresh machine has neither the look-alike's toolchain image nor the second engine's: a
debootstrapped base and apt, about a minute for the first and 20 s more for the second. Made by
the fixture that first needs it, each stalled the worker that runs the bisects (the longest
chain of the run) for that long. :func:`start` starts one
builder process per missing image, each in a process group of its own and holding that image's
lock (``tests.rootfs.one_builder``), so a fixture that needs the image waits for it and then
finds it made. A builder that fails leaves the work to the fixture, which reports the error in
the test that needed the image.

Two callers: ``scripts/test.sh`` (``python -m tests.prebuild``, as soon as the engine answers, so
the images are made while the virtualenv is installed and ruff and mypy run; it prints the
builders' process groups and ends them when it exits), and the pytest controller of a whole-suite
run (tests/conftest.py), for a run started without the script.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _images() -> dict[str, tuple[Callable[[], str], Callable[[], str]]]:
    """Each image's lock name: (its name, how to make it)."""
    from tests.engines import ensure_image, image_name
    from tests.lookalike.build import ensure_toolchain_image, toolchain_image_name

    return {
        "toolchain-image": (toolchain_image_name, ensure_toolchain_image),
        "engine-image": (image_name, ensure_image),
    }


def start() -> list[subprocess.Popen[bytes]]:
    """A builder for each image this machine lacks and no other session is making; each in a
    process group of its own (:func:`stop` ends it with everything it started)."""
    import fcntl

    from tests import rootfs

    started = []
    for what, (name, _) in _images().items():
        if rootfs.have_image(name()):
            continue
        fd = os.open(rootfs.LOCK.format(what), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another session is making it: its fixture will wait for that
            os.close(fd)
            continue
        try:  # the lock goes with the open file to the builder, which holds it until it is done
            started.append(
                subprocess.Popen(
                    [sys.executable, "-m", "tests.prebuild", "--build", what],
                    cwd=ROOT,
                    pass_fds=(fd,),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        finally:
            os.close(fd)
    return started


def stop(builders: list[subprocess.Popen[bytes]]) -> None:
    """End the builders still running (a run that ended early), with everything they started."""
    for p in builders:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def build(what: str) -> int:
    """A builder: make ``what``, holding its lock (an inherited open file) until it exits."""

    def ended(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # so the builder's temporary root is removed

    signal.signal(signal.SIGTERM, ended)
    _, make = _images()[what]
    make()
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--build"]:
        return build(argv[1])
    for p in start():  # the caller ends these groups when it is done (scripts/test.sh's trap)
        print(p.pid)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
