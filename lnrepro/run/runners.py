"""Runners: where a tt-metal backend's commands run. ``local`` is this host (or the container
lnrepro itself runs in); ``docker`` is a fresh container of lnrepro's per command.

The docker runner starts a container per command — each build step and each test attempt — so a
hang or crash takes nothing else with it, and the timeout is the container's. The checkout, the
run's record directory and a persistent ccache directory are mounted at the same path, so paths in
logs and reports mean the same inside and out; files are written as the invoking user.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from lnrepro.doors import container, proc
from lnrepro.errors import EnvironmentProblem
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON

CCACHE_DIR = Path("~/.cache/lnrepro/ccache")


class Runner(Protocol):
    """Where commands run. ``shell_line`` is what a person would type to do the same."""

    @property
    def name(self) -> str: ...

    def run(
        self,
        argv: list[str],
        on_output: Callable[[bytes], None],
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        ro_mounts: tuple[Path, ...] = (),
        timeout: float | None,
    ) -> proc.ProcResult:
        """``mounts``: the checkout first, then directories written to; ``ro_mounts``: read
        only (a worktree's git directories)."""
        ...

    def shell_line(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        ro_mounts: tuple[Path, ...] = (),
    ) -> str: ...

    def describe(self) -> dict[str, JSON]: ...

    def fingerprint(self) -> dict[str, JSON]:
        """What the results depend on beyond describe() (e.g. the image's id)."""
        ...


@dataclass(frozen=True)
class LocalRunner:
    """This host (or the container lnrepro itself runs in)."""

    name: str = "local"

    def run(
        self,
        argv: list[str],
        on_output: Callable[[bytes], None],
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        ro_mounts: tuple[Path, ...] = (),
        timeout: float | None,
    ) -> proc.ProcResult:
        return proc.stream(argv, on_output, timeout=timeout, cwd=cwd, env={**os.environ, **env})

    def shell_line(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        ro_mounts: tuple[Path, ...] = (),
    ) -> str:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        return f"cd {shlex.quote(str(cwd))} && env {exports} {shlex.join(argv)}"

    def describe(self) -> dict[str, JSON]:
        return {"runner": self.name}

    def fingerprint(self) -> dict[str, JSON]:
        return {}


def host_devices() -> tuple[tuple[str, ...], str | None]:
    """Names of /dev/tenstorrent/* character devices, and the group that owns them."""
    root = Path("/dev/tenstorrent")
    names: list[str] = []
    group = None
    try:
        for p in sorted(root.iterdir(), key=lambda p: (len(p.name), p.name)):
            st = p.stat()
            if stat.S_ISCHR(st.st_mode):
                names.append(p.name)
                group = str(st.st_gid)
    except OSError:
        pass
    return tuple(names), group


@dataclass(frozen=True)
class DockerRunner:
    image: str  # a ready image, or the tag lnrepro's image on ``base`` gets
    mount_set: str = "full"
    devices: tuple[str, ...] = ()
    device_group: str | None = None
    hugepage_dirs: tuple[str, ...] = ()
    ccache_dir: Path = field(default_factory=lambda: CCACHE_DIR.expanduser())
    warnings: tuple[str, ...] = ()
    base: str | None = None  # build lnrepro's image (docker/Dockerfile) on this base first
    name: str = "docker"
    docker_host: str | None = None  # another engine (a Docker context's); None: the default

    @classmethod
    def for_host(
        cls,
        *,
        image: str | None,
        base: str | None = None,
        mount_set: str = "full",
        require_device: bool = False,
        docker_host: str | None = None,
        only_devices: tuple[str, ...] | None = None,
    ) -> DockerRunner:
        """The runner for this host: its devices and hugepage mounts, as they are now.

        ``image`` is used as it is; without it lnrepro's image is built on ``base`` (tt-metal's
        dev image by default) the first time a command runs.
        """
        if mount_set not in container.MOUNT_SETS:
            raise EnvironmentProblem(
                f"unknown mount set {mount_set!r}", f"use one of {', '.join(container.MOUNT_SETS)}"
            )
        devices, group = host_devices()
        if only_devices is not None:  # bisect --jobs: one device per job
            missing = [d for d in only_devices if d not in devices]
            if missing and docker_host is None:
                raise EnvironmentProblem(
                    f"no /dev/tenstorrent/{missing[0]} on this host",
                    f"use one of: {', '.join(devices) or 'none found'} (lnrepro env-check lists them)",
                )
            devices = tuple(only_devices)
        warnings = []
        if not devices:
            if require_device:
                raise EnvironmentProblem(
                    "no /dev/tenstorrent device on this host",
                    "install the card and tt-kmd (lnrepro env-check says what is missing), "
                    "or drop --require-device",
                )
            warnings.append(
                "no /dev/tenstorrent device: the container starts without a card "
                "(builds work; tests will fail for the environment)"
            )
        huge = tuple(d for d in container.HUGEPAGE_DIRS if Path(d).is_dir())
        if image is None:
            from lnrepro.doors.images import build_tag

            base = base or container.DEFAULT_IMAGE
            image = build_tag(base)
        else:
            base = None
        return cls(image, mount_set, devices, group, huge, warnings=tuple(warnings), base=base,
                   docker_host=docker_host)  # fmt: skip

    def spec(
        self,
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        ro_mounts: tuple[Path, ...] = (),
    ) -> container.ContainerSpec:
        # git in the container trusts the mounted checkout whoever owns it (the dev image's
        # safe.directory is root's own setting, and lnrepro runs as the invoking user)
        env = {**env, "CCACHE_DIR": str(self.ccache_dir), **container.GIT_TRUST_ALL}
        return container.run_spec(
            self.image,
            checkout=mounts[0] if mounts else cwd,
            workdir=cwd,
            device_nodes=self.devices,
            hugepage_dirs=self.hugepage_dirs,
            extra_mounts=(*mounts[1:], self.ccache_dir),
            ro_mounts=ro_mounts,
            env=tuple(env.items()),
            device_group=self.device_group,
            mount_set=self.mount_set,
        )

    def run(
        self,
        argv: list[str],
        on_output: Callable[[bytes], None],
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        ro_mounts: tuple[Path, ...] = (),
        timeout: float | None,
    ) -> proc.ProcResult:
        if self.base is not None:
            from lnrepro.doors.images import ensure_build_image

            ensure_build_image(self.base, _OutputEvents(on_output), host=self.docker_host)
        self.ccache_dir.mkdir(parents=True, exist_ok=True)
        uid, gid = (int(x) for x in container.invoking_user().split(":"))
        if os.geteuid() == 0 and uid != 0:  # under sudo: lnrepro's own directories are the user's
            for d in (*mounts[1:], self.ccache_dir):
                os.chown(d, uid, gid)
        for w in self.warnings:
            on_output(f"lnrepro: warning: {w}\n".encode())
        return container.stream(
            self.spec(cwd=cwd, env=env, mounts=mounts, ro_mounts=ro_mounts),
            argv,
            on_output,
            timeout=timeout,
            host=self.docker_host,
        )

    def shell_line(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        ro_mounts: tuple[Path, ...] = (),
    ) -> str:
        return self.spec(cwd=cwd, env=env, mounts=mounts, ro_mounts=ro_mounts).shell_line(argv)

    def describe(self) -> dict[str, JSON]:
        return {
            "runner": self.name,
            "docker_host": self.docker_host,
            "image": self.image,
            "base_image": self.base,
            "mount_set": self.mount_set,
            "devices": [f"/dev/tenstorrent/{d}" for d in self.devices],
            "hugepage_mounts": list(self.hugepage_dirs),
            "user": container.invoking_user(),
            "ccache_dir": str(self.ccache_dir),
            "warnings": list(self.warnings),
        }

    def fingerprint(self) -> dict[str, JSON]:
        """Beyond describe(), the image id: the engine is asked once per run."""
        return {"image_id": _image_id(self.image, self.docker_host)}


class _OutputEvents(Events):
    """Image-build progress into the log of the command that needed the image."""

    def __init__(self, on_output: Callable[[bytes], None]) -> None:
        self.on_output = on_output

    def build_started(self, what: str) -> None:
        self.on_output(f"lnrepro: building {what}\n".encode())

    def build_output(self, data: bytes) -> None:
        self.on_output(data)


def _image_id(image: str, host: str | None = None) -> str | None:
    """The image's id when the engine answers and has it; None otherwise (never an error)."""
    if not host and not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return None
    try:
        from docker.errors import DockerException

        try:
            return str(container.client(host).images.get(image).id)
        except DockerException:
            return None
    except Exception:  # noqa: BLE001 - a fingerprint field; the run itself reports real errors
        return None
