"""The pure builders of how lnrepro starts a container: tests check them without a daemon.

:func:`run_spec` is *the* container lnrepro uses for tt-metal (``env-check --container``, the
docker runner of ``run`` and ``bisect``): every Tenstorrent device node, the 1 GiB hugetlbfs
mount, ``/etc/passwd`` and ``/etc/group`` read-only (so the invoking user has a name and a HOME,
as tt-metal's scripts/docker/run_docker_func.sh mounts them), the checkout at the same path, the
invoking user's uid:gid plus the device's group, and TT_METAL_HOME / ARCH_NAME / PYTHONPATH; by
default also the host's ``/dev`` and ``/sys`` (seed 001: tests fail without sysfs). The image's
ENTRYPOINT is not run: tt-metal's dev image starts sshd there under ``set -e``
(dockerfile/entrypoint.sh@47ad2f56a9), which only root may, so it would end every container of a
user's before the command. Never ``--privileged`` unless asked.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_IMAGE = "ghcr.io/tenstorrent/tt-metal/tt-metalium/ubuntu-22.04-dev-amd64:latest"
HUGEPAGE_MOUNT = "/dev/hugepages-1G"
LABEL = "io.lnrepro"  # every container lnrepro starts carries it: findable, removable
OWNER = "io.lnrepro.owner"  # which lnrepro started it: host/boot id/pid namespace/pid/start time
MADE = "io.lnrepro.made"  # one create request's token: finds a container whose handle never came
USER_DB = ("/etc/passwd", "/etc/group")  # mounted read-only: the invoking user has a name and HOME
# git trusts every directory (safe.directory=*), for this process only: a checkout owned by
# another uid than the container's user is otherwise "dubious" and git refuses to describe it
GIT_TRUST_ALL = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "safe.directory",
    "GIT_CONFIG_VALUE_0": "*",
}
MOUNT_SETS = ("full", "tt-metal", "seed-broken")  # "full" is the default
HUGEPAGE_DIRS = (HUGEPAGE_MOUNT, "/dev/hugepages")


@dataclass(frozen=True)
class Volume:
    host: str
    container: str
    read_only: bool = False


@dataclass(frozen=True)
class NamedVolume:
    """A volume that lives on the engine (``docker volume create``), mounted at ``container``."""

    name: str
    container: str


@dataclass(frozen=True)
class ContainerSpec:
    image: str
    devices: tuple[str, ...] = ()
    volumes: tuple[Volume, ...] = ()  # bind mounts: paths of the engine's machine
    user: str | None = None
    environment: tuple[tuple[str, str], ...] = ()
    workdir: str | None = None
    privileged: bool = False
    group_add: tuple[str, ...] = ()  # e.g. the group that owns /dev/tenstorrent/*
    keep_entrypoint: bool = False  # run the image's ENTRYPOINT (lnrepro clears it)
    named_volumes: tuple[NamedVolume, ...] = ()
    scratch: tuple[str, ...] = ()  # anonymous volumes, removed with the container
    # the binds are this machine's paths (the engine sees them); False for a remote engine,
    # whose binds name its own machine's paths (/dev, /sys), which this one cannot check
    local_binds: bool = True
    # the host's, as tt-metal's own containers (run_spec says why); None: the engine's default
    network: str | None = "host"

    def docker_argv(self, command: Sequence[str]) -> list[str]:
        """The equivalent ``docker run`` command line, for people to read and rerun."""
        argv = ["docker", "run", "--rm"]
        if not self.keep_entrypoint:
            argv += ["--entrypoint", ""]
        if self.network:
            argv += ["--network", self.network]
        for d in self.devices:
            argv += ["--device", f"{d}:{d}"]
        for v in self.volumes:
            argv += ["-v", f"{v.host}:{v.container}" + (":ro" if v.read_only else "")]
        for n in self.named_volumes:
            argv += ["-v", f"{n.name}:{n.container}"]
        for t in self.scratch:
            argv += ["--mount", f"type=volume,dst={t}"]
        if self.user:
            argv += ["-u", self.user]
        for g in self.group_add:
            argv += ["--group-add", g]
        for k, val in self.environment:
            argv += ["-e", f"{k}={val}"]
        if self.workdir:
            argv += ["-w", self.workdir]
        if self.privileged:
            argv.append("--privileged")
        return [*argv, self.image, *command]

    def shell_line(self, command: Sequence[str]) -> str:
        return shlex.join(self.docker_argv(command))

    def sdk_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``client.containers.run`` / ``create``."""
        kw: dict[str, Any] = {
            "devices": [f"{d}:{d}:rwm" for d in self.devices],
            "volumes": {
                **{
                    v.host: {"bind": v.container, "mode": "ro" if v.read_only else "rw"}
                    for v in self.volumes
                },
                **{n.name: {"bind": n.container, "mode": "rw"} for n in self.named_volumes},
            },
            "environment": dict(self.environment),
            "privileged": self.privileged,
            "labels": {LABEL: "1"},
        }
        if not self.keep_entrypoint:
            kw["entrypoint"] = ""  # the engine then runs the command itself
        if self.network:
            kw["network_mode"] = self.network
        if self.user:
            kw["user"] = self.user
        if self.workdir:
            kw["working_dir"] = self.workdir
        if self.group_add:
            kw["group_add"] = list(self.group_add)
        if self.scratch:
            from docker.types import Mount

            kw["mounts"] = [Mount(target=t, source=None, type="volume") for t in self.scratch]
        return kw


def invoking_user() -> str:
    """uid:gid of the person running lnrepro (under sudo, the one who called sudo)."""
    uid = os.environ.get("SUDO_UID") or str(os.getuid())
    gid = os.environ.get("SUDO_GID") or str(os.getgid())
    return f"{uid}:{gid}"


def run_spec(
    image: str,
    *,
    device_nodes: Sequence[str],
    hugepage_dirs: Sequence[str],
    checkout: Path | None = None,
    workdir: Path | None = None,
    extra_mounts: Sequence[Path] = (),
    ro_mounts: Sequence[Path] = (),
    env: Sequence[tuple[str, str]] = (),
    device_group: str | None = None,
    mount_set: str = "full",
    user: str | None = None,
    privileged: bool = False,
) -> ContainerSpec:
    """*The* container lnrepro starts for tt-metal: ``run``, ``bisect`` and ``env-check --container``.

    Mount sets, by name:

    ``full``         seed 001's working set: every ``/dev/tenstorrent/N`` as a device, the host's
                     ``/dev`` and ``/sys``, the hugepage mounts that exist, ``/etc/passwd`` and
                     ``/etc/group`` read-only;
    ``tt-metal``     the set tt-metal's own scripts use (scripts/docker/run_docker_func.sh at
                     0d59861eb2, .github/workflows/bisect-dispatch.yaml at 00b0fa3f57): the
                     devices, ``/dev/hugepages-1G``, ``/etc/passwd`` and ``/etc/group`` read-only,
                     the device group added; neither ``/dev`` nor ``/sys``;
    ``seed-broken``  seed 001's failing set: ``--device`` only.

    All of them mount the checkout (and any extra directories) at the same path, ``ro_mounts``
    read-only (a worktree's git directories), run as the invoking user plus the device's group,
    and pass the environment; never ``--privileged`` unless asked. They share the host's network,
    as tt-metal's own containers do (scripts/docker/run_docker_func.sh at 0d59861eb2 and
    .github/actions/docker-run/action.yml at 03a1367a55 both pass ``--net host``): a build
    fetches its dependencies through the host's own network settings, and a container starts
    without a bridge to set up (half the engine's work per container, scripts/bench_container.py).
    """
    if mount_set not in MOUNT_SETS:
        raise ValueError(f"mount set {mount_set!r}")
    devices = tuple(f"/dev/tenstorrent/{n}" for n in device_nodes)
    volumes: list[Volume] = []
    if mount_set == "full":
        volumes += [Volume("/dev", "/dev"), Volume("/sys", "/sys")]
        volumes += [Volume(d, d) for d in hugepage_dirs]
    if mount_set == "tt-metal":
        volumes += [Volume(d, d) for d in hugepage_dirs if d == HUGEPAGE_MOUNT]
    if mount_set in ("full", "tt-metal"):
        volumes += [Volume(f, f, read_only=True) for f in USER_DB if Path(f).exists()]
    for p in (*((checkout,) if checkout else ()), *extra_mounts):
        if not any(Path(v.host) == p for v in volumes):
            volumes.append(Volume(str(p), str(p)))
    for p in ro_mounts:
        if not any(Path(v.host) == p for v in volumes):
            volumes.append(Volume(str(p), str(p), read_only=True))
    return ContainerSpec(
        image,
        devices=devices,
        volumes=tuple(volumes),
        user=user or invoking_user(),
        environment=tuple(env),
        workdir=str(workdir) if workdir else (str(checkout) if checkout else None),
        privileged=privileged,
        group_add=(device_group,) if device_group else (),
    )


def missing_bind_sources(spec: ContainerSpec) -> list[str]:
    """Host paths the spec would bind that do not exist (Docker would create them as root)."""
    return [v.host for v in spec.volumes if not Path(v.host).exists()]
