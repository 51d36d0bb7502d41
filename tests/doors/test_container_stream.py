"""``container.stream`` on a real engine, where what goes wrong is the caller's own sink."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lnrepro.doors import container
from lnrepro.errors import DiskFull
from tests.leftovers import left, owner

LNREPRO = [sys.executable, "-m", "lnrepro"]


@pytest.mark.docker
def test_a_sink_that_fails_stops_the_container_and_its_error_reaches_the_caller(
    busybox_image: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """The log's disk is full while a container builds: the error is the caller's to report (one
    line, from the caller's thread, not a thread's traceback), and the container is not waited
    for."""
    spec = container.ContainerSpec(busybox_image, user=f"{os.getuid()}:{os.getgid()}")

    def sink(data: bytes) -> None:
        raise DiskFull("no space left on the device writing build.log", "free space")

    begin = time.monotonic()
    with pytest.raises(DiskFull, match=r"writing build\.log"):
        container.stream(spec, ["sh", "-c", "echo started; sleep 120"], sink, timeout=300)
    assert time.monotonic() - begin < 60  # killed, not waited out (120 s)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception in thread" not in err, err


class SlowCreates:
    """A Unix-socket proxy in front of this machine's engine that holds each container-create
    request for ``delay`` seconds before passing it on: an engine that takes that long to create
    (a loaded 2-core machine's took over 10 s to answer). A request cut off on lnrepro's side still
    reaches the engine, as it would have once sent."""

    def __init__(self, path: Path, delay: float, engine: str = "/var/run/docker.sock") -> None:
        self.path, self.delay, self.engine = path, delay, engine
        self.holding = threading.Event()  # a create request is held now
        self.answered = threading.Event()  # the engine answered a held create
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(str(path))
        self.server.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX)
            engine.connect(self.engine)
            held = threading.Event()
            threading.Thread(
                target=self._pump, args=(client, engine, held, True), daemon=True
            ).start()
            threading.Thread(
                target=self._pump, args=(engine, client, held, False), daemon=True
            ).start()

    def _pump(
        self, src: socket.socket, dst: socket.socket, held: threading.Event, up: bool
    ) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if (
                    up
                    and data.startswith(b"POST ")
                    and b"/containers/create" in data.split(b"\r\n")[0]
                ):
                    self.holding.set()
                    time.sleep(self.delay)
                    held.set()
                elif not up and held.is_set():
                    self.answered.set()
                with contextlib.suppress(OSError):  # lnrepro may be gone: the engine goes on
                    dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.server.close()


@pytest.mark.docker
def test_a_signal_while_the_engine_creates_the_container_leaves_none(
    busybox_image: str, tmp_path: Path
) -> None:
    """SIGTERM during env-check left its container (flaky CI failures): the signal cut off the
    create request, lnrepro looked for the container by its token before the engine had made it,
    and the engine made it after lnrepro had gone. The signal now waits for the engine's answer,
    and the container is removed."""
    proxy = SlowCreates(tmp_path / "engine.sock", delay=2.0)
    env = {**os.environ, "DOCKER_HOST": f"unix://{proxy.path}"}
    p = subprocess.Popen(
        [*LNREPRO, "env-check", "--container", "--image", busybox_image],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        its = owner(p)
        assert proxy.holding.wait(60), "no create request came"
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 143 and "Traceback" not in err, err
        assert proxy.answered.wait(30), "the engine never answered the create"
        assert not left(its)
    finally:
        if p.poll() is None:  # a failed check: lnrepro is stopped as a user would
            p.terminate()
            p.wait(timeout=60)
        proxy.close()
