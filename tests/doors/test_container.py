"""The pure builders of lnrepro's container: checked without a daemon."""

from __future__ import annotations

import os
from pathlib import Path

from lnrepro.doors import container
from lnrepro.doors.container import HUGEPAGE_MOUNT, Volume, invoking_user, run_spec


def test_tt_metal_mount_set() -> None:
    spec = run_spec(
        "img",
        device_nodes=["0", "1"],
        hugepage_dirs=[HUGEPAGE_MOUNT],
        checkout=Path("/src/tt-metal"),
        env=[
            ("TT_METAL_HOME", "/src/tt-metal"),
            ("PYTHONPATH", "/src/tt-metal"),
            ("ARCH_NAME", "wormhole_b0"),
        ],
        user="1000:1000",
        mount_set="tt-metal",
    )
    argv = spec.docker_argv(["true"])
    # the image's ENTRYPOINT is not run (tt-metal's dev image starts sshd there: root only)
    assert argv[:5] == ["docker", "run", "--rm", "--entrypoint", ""]
    assert argv[5:7] == ["--network", "host"]  # as run_docker_func.sh's --net host
    assert argv[7:9] == ["--device", "/dev/tenstorrent/0:/dev/tenstorrent/0"]
    # what tt-metal's scripts mount (run_docker_func.sh@0d59861eb2): hugepages-1G and the user
    # database read-only, neither /dev nor /sys
    assert f"{HUGEPAGE_MOUNT}:{HUGEPAGE_MOUNT}" in argv and "/sys:/sys" not in argv
    assert "/etc/passwd:/etc/passwd:ro" in argv and "/etc/group:/etc/group:ro" in argv
    assert "/src/tt-metal:/src/tt-metal" in argv  # the checkout at the same path
    assert argv[argv.index("-u") : argv.index("-u") + 2] == ["-u", "1000:1000"]
    assert "TT_METAL_HOME=/src/tt-metal" in argv and "ARCH_NAME=wormhole_b0" in argv
    assert "PYTHONPATH=/src/tt-metal" in argv
    assert "--privileged" not in argv and "/dev:/dev" not in argv
    kw = spec.sdk_kwargs()
    assert kw["devices"] == [
        "/dev/tenstorrent/0:/dev/tenstorrent/0:rwm",
        "/dev/tenstorrent/1:/dev/tenstorrent/1:rwm",
    ]
    assert kw["volumes"]["/etc/passwd"] == {"bind": "/etc/passwd", "mode": "ro"}
    assert kw["privileged"] is False and kw["entrypoint"] == ""
    assert kw["user"] == "1000:1000" and kw["working_dir"] == "/src/tt-metal"


def test_full_set_and_options() -> None:
    spec = run_spec("img", device_nodes=[], hugepage_dirs=[], privileged=True)
    assert spec.volumes[:2] == (Volume("/dev", "/dev"), Volume("/sys", "/sys")) and spec.privileged
    assert all(v.container != HUGEPAGE_MOUNT for v in spec.volumes)
    assert "'sh' '-c'" not in spec.shell_line(["sh", "-c", "echo a b"])  # shlex-quoted, not by hand
    assert spec.shell_line(["sh", "-c", "echo a b"]).endswith("img sh -c 'echo a b'")


def test_seed_broken_is_seed_001s_failing_setup() -> None:
    spec = run_spec(
        "img",
        device_nodes=["0"],
        hugepage_dirs=[HUGEPAGE_MOUNT],
        user="5:5",
        mount_set="seed-broken",
    )
    assert spec.docker_argv([]) == [
        "docker",
        "run",
        "--rm",
        "--entrypoint",
        "",
        "--network",
        "host",
        "--device",
        "/dev/tenstorrent/0:/dev/tenstorrent/0",
        "-u",
        "5:5",
        "img",
    ]


def test_invoking_user_prefers_sudo_caller(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("SUDO_UID", raising=False)
    monkeypatch.delenv("SUDO_GID", raising=False)
    assert invoking_user() == f"{os.getuid()}:{os.getgid()}"
    monkeypatch.setenv("SUDO_UID", "1234")
    monkeypatch.setenv("SUDO_GID", "99")
    assert invoking_user() == "1234:99"


def test_closing_an_ssh_connection_whose_ssh_has_died_is_quiet() -> None:
    """docker's ssh:// socket writes to its ssh process on close; when the card host has gone,
    so has that ssh, and every pooled connection's finalizer would print a BrokenPipe traceback
    (during a bisect, or as lnrepro exits). A real process that has exited stands in for it."""
    import subprocess

    from docker.transport import sshconn

    container._quiet_ssh_close()
    container._quiet_ssh_close()  # once only: not wrapped twice
    sock = sshconn.SSHSocket("root@card-host:22")
    sock.proc = subprocess.Popen(["true"], stdin=subprocess.PIPE)
    sock.proc.wait()
    sock.close()  # no BrokenPipeError
    assert sock.proc.returncode == 0
    assert sshconn.SSHSocket.close.lnrepro_quiet is True  # type: ignore[attr-defined]
