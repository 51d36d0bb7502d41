"""The docker runner: a fresh container of lnrepro's per command, on an engine that sees this
machine's paths (the checkout, the record directory and the ccache are bind-mounted)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lnrepro.doors import container, proc
from lnrepro.errors import EnvironmentProblem
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON
from lnrepro.run.runners.base import HereFiles, OnHang, Output, Place, TimeLimit


def default_ccache_dir() -> Path:
    """The docker runner's ccache: ``$CCACHE_DIR`` when the user set it (ccache's own variable,
    which the local runner's builds inherit, so both runners share one cache), else lnrepro's own
    under the XDG cache home (``~/.cache/lnrepro/ccache``)."""
    if os.environ.get("CCACHE_DIR"):  # ccache reads an empty value as unset
        return Path(os.environ["CCACHE_DIR"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg and Path(xdg).is_absolute() else Path("~/.cache").expanduser()
    return root / "lnrepro" / "ccache"


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


def invoking_ids() -> tuple[int, int]:
    """The invoking user's uid and gid (the user the containers run as)."""
    uid, gid = container.invoking_user().split(":")
    return int(uid), int(gid)


@dataclass(frozen=True)
class DockerRunner(HereFiles):
    image: str  # a ready image, or the tag lnrepro's image on ``base`` gets
    mount_set: str = "full"
    devices: tuple[str, ...] = ()
    device_group: str | None = None
    hugepage_dirs: tuple[str, ...] = ()
    ccache_dir: Path = field(default_factory=default_ccache_dir)
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
            if missing and (docker_host is None or container.is_local_engine(docker_host)):
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
        return cls(
            image,
            mount_set,
            devices,
            group,
            huge,
            warnings=tuple(warnings),
            base=base,
            docker_host=docker_host,
        )

    def spec(self, place: Place) -> container.ContainerSpec:
        # git in the container trusts the mounted checkout whoever owns it (the dev image's
        # safe.directory is root's own setting, and lnrepro runs as the invoking user)
        env = {**place.env, "CCACHE_DIR": str(self.ccache_dir), **container.GIT_TRUST_ALL}
        return container.run_spec(
            self.image,
            checkout=place.checkout,
            workdir=place.cwd,
            device_nodes=self.devices,
            hugepage_dirs=self.hugepage_dirs,
            extra_mounts=(*place.written, self.ccache_dir),
            ro_mounts=place.ro_mounts,
            env=tuple(env.items()),
            device_group=self.device_group,
            mount_set=self.mount_set,
        )

    def run(
        self, argv: list[str], on_output: Output, place: Place, limit: TimeLimit
    ) -> proc.ProcResult:
        if self.base is not None:
            from lnrepro.doors.images import ensure_build_image

            ensure_build_image(self.base, OutputEvents(on_output), host=self.docker_host)
        try:
            self.ccache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EnvironmentProblem(
                f"cannot make the ccache directory {self.ccache_dir}: {exc.strerror}",
                "set CCACHE_DIR to a directory you can write, or unset it",
            ) from None
        uid, gid = invoking_ids()
        if os.geteuid() == 0 and uid != 0:  # under sudo: lnrepro's own directories are the user's
            for d in (*place.written, self.ccache_dir):
                try:
                    os.chown(d, uid, gid)
                except OSError as exc:
                    raise EnvironmentProblem(
                        f"cannot give {d} to uid {uid}: {exc.strerror}", "run lnrepro as that user"
                    ) from None
        for w in self.warnings:
            on_output(f"lnrepro: warning: {w}\n".encode())
        with container.engine_errors(self.docker_host):  # the SDK's errors are OSErrors
            return container.stream(
                self.spec(place),
                argv,
                on_output,
                timeout=limit.seconds,
                host=self.docker_host,
                before_kill=exec_on_hang(limit.on_hang, place.cwd),
            )

    def shell_line(self, argv: list[str], place: Place) -> str:
        return self.spec(place).shell_line(argv)

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
        return {"image_id": image_id(self.image, self.docker_host)}


def exec_on_hang(on_hang: OnHang | None, cwd: Path) -> Callable[[Any], None] | None:
    """``on_hang`` as ``docker exec`` in the hung container (its user and environment)."""
    if on_hang is None:
        return None

    def before_kill(ct: Any) -> None:
        on_hang.begin()
        code, timed_out = container.exec_in(
            ct, on_hang.argv, on_hang.on_output, timeout=on_hang.timeout_s, workdir=str(cwd)
        )
        on_hang.done(code, timed_out)

    return before_kill


class OutputEvents(Events):
    """Image-build progress into the log of the command that needed the image."""

    def __init__(self, on_output: Output) -> None:
        self.on_output = on_output

    def build_started(self, what: str) -> None:
        self.on_output(f"lnrepro: building {what}\n".encode())

    def build_output(self, data: bytes) -> None:
        self.on_output(data)


def image_id(image: str, host: str | None = None) -> str | None:
    """The image's id when the engine answers and has it; None otherwise (never an error)."""
    if not host and not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return None
    try:  # docker's own errors, no docker SDK, an engine that does not answer: all the same here
        return str(container.client(host).images.get(image).id)
    except Exception:  # noqa: BLE001 - a fingerprint field; the run itself reports real errors
        return None
