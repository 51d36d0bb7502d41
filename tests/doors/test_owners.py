"""Containers whose lnrepro was killed: the next lnrepro on that engine removes them.

A real engine and real processes: a container labelled with a process that has exited is swept
on the next container lnrepro starts; one whose owner runs, and one owned by another machine,
are left alone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from lnrepro.doors import container

pytestmark = pytest.mark.docker


def start(image: str, owner: str) -> str:
    out = subprocess.run(
        [
            "docker",
            "run",
            "-d",
            "--label",
            f"{container.LABEL}=1",
            "--label",
            f"{container.OWNER}={owner}",
            image,
            "sleep",
            "600",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def exists(cid: str) -> bool:
    return subprocess.run(["docker", "inspect", cid], capture_output=True).returncode == 0


@pytest.fixture
def started() -> Iterator[list[str]]:
    ids: list[str] = []
    yield ids
    subprocess.run(["docker", "rm", "-f", *ids], capture_output=True)


def test_a_dead_owners_containers_go_at_the_next_start(
    busybox_image: str, started: list[str]
) -> None:
    gone = subprocess.Popen(["sleep", "60"])
    dead = container.owner_label(gone.pid)
    gone.kill()
    gone.wait()
    assert container.owner_gone(dead) and not container.owner_gone(container.owner_label())
    started += [
        start(busybox_image, dead),
        start(busybox_image, container.owner_label()),  # this process: alive
        start(busybox_image, "another-machine/boot/1/1/1"),  # not this machine's to judge
        start(busybox_image, dead.replace(dead.split("/")[1], "an-earlier-boot")),
        # an lnrepro in a container on the host's network: this host's name, other pids
        start(busybox_image, dead.replace(f"/{dead.split('/')[2]}/", "/4026500000/")),
    ]
    stale, alive, foreign, rebooted, elsewhere = started
    container._swept.clear()
    spec = container.ContainerSpec(busybox_image)
    code, _ = container.run(spec, ["true"])
    assert code == 0
    assert not exists(stale) and not exists(rebooted)
    assert exists(alive) and exists(foreign) and exists(elsewhere)
    # the container it started carried its owner, and is gone with it
    ours = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={container.OWNER}={container.owner_label()}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert ours == [alive[:12]]
