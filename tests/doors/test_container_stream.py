"""``container.stream`` on a real engine, where what goes wrong is the caller's own sink."""

from __future__ import annotations

import os
import time

import pytest

from lnrepro.doors import container
from lnrepro.errors import DiskFull


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


@pytest.mark.docker
def test_a_signal_while_the_engine_creates_the_container_leaves_none(
    busybox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM during env-check left its container once (a flaky CI failure): the engine had made
    it, and lnrepro was still waiting for the answer that names it when Terminated came."""
    from docker.errors import NotFound
    from docker.models.containers import ContainerCollection

    from lnrepro.errors import Terminated

    real = ContainerCollection.create
    made: list[str] = []

    def made_then_terminated(self: ContainerCollection, *a: object, **k: object) -> object:
        made.append(real(self, *a, **k).id)  # the engine made it ...
        raise Terminated(15)  # ... and the signal came before its answer was read

    monkeypatch.setattr(ContainerCollection, "create", made_then_terminated)
    spec = container.ContainerSpec(busybox_image, user=f"{os.getuid()}:{os.getgid()}")
    with pytest.raises(Terminated):
        container.stream(spec, ["true"], lambda _: None, timeout=60)
    monkeypatch.undo()
    assert made
    with pytest.raises(NotFound):
        container.client(None).containers.get(made[0])
