"""lnrepro's containers for tt-metal share the host's network, as tt-metal's own do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lnrepro.doors import container
from lnrepro.run.runners.base import Place, TimeLimit
from lnrepro.run.runners.docker import DockerRunner


def test_every_mount_set_asks_for_the_hosts_network() -> None:
    """tt-metal's scripts/docker/run_docker_func.sh (0d59861eb2) and its CI's docker-run action
    (03a1367a55) pass ``--net host``; the mount sets differ only in what they mount."""
    for mount_set in container.MOUNT_SETS:
        spec = container.run_spec(
            "img",
            device_nodes=["0"],
            hugepage_dirs=[],
            checkout=Path("/src/tt-metal"),
            mount_set=mount_set,
        )
        argv = spec.docker_argv(["true"])
        assert argv[argv.index("--network") + 1] == "host", mount_set
        assert spec.sdk_kwargs()["network_mode"] == "host", mount_set
    helper = container.ContainerSpec("img")  # a card host's probe, ship and parked containers
    assert helper.sdk_kwargs()["network_mode"] == "host"
    bridge = container.ContainerSpec("img", network=None)  # the engine's default
    assert "--network" not in bridge.docker_argv([]) and "network_mode" not in bridge.sdk_kwargs()


@pytest.mark.docker
def test_the_docker_runners_container_is_in_the_hosts_network_namespace(
    busybox_image: str, tmp_path: Path
) -> None:
    """What the engine makes of it: the container's network namespace is this machine's."""
    out: list[bytes] = []
    res = DockerRunner(busybox_image).run(
        ["ls", "-l", "/proc/self/ns/net"],
        out.append,
        Place(tmp_path, {}, (tmp_path,)),
        TimeLimit(60),
    )
    assert res.exit_code == 0, b"".join(out)
    assert os.readlink("/proc/self/ns/net") in b"".join(out).decode(), b"".join(out)
