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
from typing import Any, Protocol

from lnrepro.doors import container, proc
from lnrepro.errors import EnvironmentProblem
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON


def default_ccache_dir() -> Path:
    """The docker runner's ccache: ``$CCACHE_DIR`` when the user set it (ccache's own variable,
    which the local runner's builds inherit, so both runners share one cache), else lnrepro's own
    under the XDG cache home (``~/.cache/lnrepro/ccache``)."""
    if os.environ.get("CCACHE_DIR"):  # ccache reads an empty value as unset
        return Path(os.environ["CCACHE_DIR"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg and Path(xdg).is_absolute() else Path("~/.cache").expanduser()
    return root / "lnrepro" / "ccache"


@dataclass(frozen=True)
class OnHang:
    """A command to run where a timed-out command still hangs, before it is killed: tt-triage
    against the still-hung device, in the same container and environment, with its own time
    limit. ``begin`` is called at the timeout, before it runs; ``done`` gets its exit status
    (None: unknown) and whether its own limit ran out."""

    argv: tuple[str, ...]
    timeout_s: float
    on_output: Callable[[bytes], None]
    begin: Callable[[], None]
    done: Callable[[int | None, bool], None]


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
        on_hang: OnHang | None = None,
    ) -> proc.ProcResult:
        """``mounts``: the checkout first, then directories written to; ``ro_mounts``: read
        only (a worktree's git directories); ``on_hang`` runs at the timeout, before the kill."""
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

    # the checkout as the commands see it (build trees, caches): here, or on a remote engine
    def read_text(self, checkout: Path, rel: str) -> str | None: ...

    def write_text(self, checkout: Path, rel: str, text: str) -> None: ...

    def exists(self, checkout: Path, rel: str) -> bool: ...

    def outputs_digest(self, checkout: Path, roots: list[str]) -> tuple[str, int]:
        """:func:`lnrepro.run.inputs.outputs_digest` of the build trees the commands made."""
        ...


class _HereFiles:
    """The checkout the commands see is this machine's (this host, or bind-mounted)."""

    def read_text(self, checkout: Path, rel: str) -> str | None:
        try:
            return (checkout / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def write_text(self, checkout: Path, rel: str, text: str) -> None:
        import contextlib

        from lnrepro.doors.fsio import atomic_write_text

        with contextlib.suppress(OSError):
            atomic_write_text(checkout / rel, text)

    def exists(self, checkout: Path, rel: str) -> bool:
        return (checkout / rel).exists()

    def outputs_digest(self, checkout: Path, roots: list[str]) -> tuple[str, int]:
        from lnrepro.run import inputs as inp

        return inp.outputs_digest([checkout / r for r in roots], checkout)


@dataclass(frozen=True)
class LocalRunner(_HereFiles):
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
        on_hang: OnHang | None = None,
    ) -> proc.ProcResult:
        full = {**os.environ, **env}

        def before_kill() -> None:
            assert on_hang is not None
            on_hang.begin()
            res = proc.stream(
                list(on_hang.argv), on_hang.on_output, timeout=on_hang.timeout_s, cwd=cwd, env=full
            )
            on_hang.done(None if res.timed_out else res.exit_code, res.timed_out)

        return proc.stream(
            argv,
            on_output,
            timeout=timeout,
            cwd=cwd,
            env=full,
            before_kill=before_kill if on_hang is not None else None,
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
class DockerRunner(_HereFiles):
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
        on_hang: OnHang | None = None,
    ) -> proc.ProcResult:
        if self.base is not None:
            from lnrepro.doors.images import ensure_build_image

            ensure_build_image(self.base, _OutputEvents(on_output), host=self.docker_host)
        try:
            self.ccache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EnvironmentProblem(
                f"cannot make the ccache directory {self.ccache_dir}: {exc.strerror}",
                "set CCACHE_DIR to a directory you can write, or unset it",
            ) from None
        uid, gid = (int(x) for x in container.invoking_user().split(":"))
        if os.geteuid() == 0 and uid != 0:  # under sudo: lnrepro's own directories are the user's
            for d in (*mounts[1:], self.ccache_dir):
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
                self.spec(cwd=cwd, env=env, mounts=mounts, ro_mounts=ro_mounts),
                argv,
                on_output,
                timeout=timeout,
                host=self.docker_host,
                before_kill=_exec_on_hang(on_hang, cwd),
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


def _exec_on_hang(on_hang: OnHang | None, cwd: Path) -> Callable[[Any], None] | None:
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


# ------------------------------------------------------------------ an engine that cannot see here
HOST_DEV = "/lnrepro-host-dev"  # the engine machine's /dev, read-only, in the probe container
REMOTE_HOME = "/tmp"  # HOME there: the engine machine's /etc/passwd does not know this user
_shipped: dict[tuple[str, str], dict[str, str]] = {}  # (engine, volume) -> its manifest, known here
_machines: dict[str, tuple[tuple[str, ...], str | None, tuple[str, ...]]] = {}


def volume_name(kind: str, host: str | None, path: Path | str) -> str:
    """A volume per engine and path on this machine (each job's worktree has its own)."""
    import hashlib
    import socket

    key = f"{socket.gethostname()}\0{host or ''}\0{path}"
    return f"lnrepro-{kind}-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _dir_entry(path: Path) -> bytes:
    """A tar that makes ``path`` (put into its parent) the invoking user's directory."""
    import io
    import tarfile
    import time

    uid, gid = (int(x) for x in container.invoking_user().split(":"))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        ti = tarfile.TarInfo(path.name)
        ti.type, ti.mode, ti.mtime, ti.uid, ti.gid = tarfile.DIRTYPE, 0o755, time.time(), uid, gid
        tf.addfile(ti)
    return buf.getvalue()


def _file_entry(name: str, data: bytes) -> bytes:
    import io
    import tarfile
    import time

    uid, gid = (int(x) for x in container.invoking_user().split(":"))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        ti = tarfile.TarInfo(name)
        ti.size, ti.mode, ti.mtime, ti.uid, ti.gid = len(data), 0o644, time.time(), uid, gid
        tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


@dataclass(frozen=True)
class RemoteDockerRunner:
    """A Docker engine that shares no path with this machine (``--docker-context``: a card host).

    Everything goes through the Docker API. The image is sent there when it lacks it (``docker
    save`` here, ``load`` there) or lnrepro's image is built there; the checkout lives in a named
    volume on that engine, at the same path as here, its build directories included, and each
    step ships only the files that changed (:mod:`lnrepro.run.ship`); ccache is a named volume
    there too. Both persist across steps and runs. A run's record directory is an anonymous
    volume of each command's container, copied back here when the command ends (the kernel
    cache left there). Devices and hugepage mounts are the engine machine's, found by a probe
    container that reads its /dev.
    """

    docker: DockerRunner  # the image, mount set and --device; its paths are the engine's
    name: str = "docker"

    @property
    def host(self) -> str | None:
        return self.docker.docker_host

    def _tree(self, checkout: Path) -> container.NamedVolume:
        return container.NamedVolume(volume_name("tree", self.host, checkout), str(checkout))

    def _ccache(self) -> container.NamedVolume:
        return container.NamedVolume(
            volume_name("ccache", self.host, "ccache"), str(self.docker.ccache_dir)
        )

    def spec(
        self,
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        ro_mounts: tuple[Path, ...] = (),
        machine: tuple[tuple[str, ...], str | None, tuple[str, ...]] | None = None,
    ) -> container.ContainerSpec:
        """The container: the engine machine's devices and mounts (``machine``, as probed), the
        tree and ccache volumes, the record directories as anonymous volumes; a worktree's git
        directories are not there (the tree is shipped without git metadata)."""
        d = self.docker
        devices, group, huge = machine or (d.devices, d.device_group, d.hugepage_dirs)
        binds: list[container.Volume] = []
        if d.mount_set == "full":
            binds += [container.Volume("/dev", "/dev"), container.Volume("/sys", "/sys")]
            binds += [container.Volume(h, h) for h in huge]
        elif d.mount_set == "tt-metal":
            binds += [container.Volume(h, h) for h in huge if h == container.HUGEPAGE_MOUNT]
        checkout = mounts[0] if mounts else cwd
        env = {"HOME": REMOTE_HOME, **env, "CCACHE_DIR": str(d.ccache_dir)}
        return container.ContainerSpec(
            d.image,
            tuple(f"/dev/tenstorrent/{n}" for n in devices),
            tuple(binds),
            container.invoking_user(),
            tuple(env.items()),
            str(cwd),
            group_add=(group,) if group else (),
            named_volumes=(self._tree(checkout), self._ccache()),
            scratch=tuple(str(m) for m in mounts[1:]),
            local_binds=False,
        )

    # ------------------------------------------------------------------ the engine
    def _image(self, on_output: Callable[[bytes], None]) -> None:
        if self.docker.base is not None:
            from lnrepro.doors.images import ensure_build_image

            ensure_build_image(self.docker.base, _OutputEvents(on_output), host=self.host)
        else:
            container.ensure_image(self.host, self.docker.image, on_output)

    def _machine(self) -> tuple[tuple[str, ...], str | None, tuple[str, ...]]:
        """The engine machine's /dev/tenstorrent nodes (and their group) and hugepage mounts,
        read once per engine by a container that sees its /dev; ``--device`` narrows them."""
        key = self.host or ""
        if key not in _machines:
            probe = container.ContainerSpec(
                self.docker.image,
                volumes=(container.Volume("/dev", HOST_DEV, True),),
                user=container.invoking_user(),
                local_binds=False,
            )
            out: list[bytes] = []
            container.stream(
                probe,
                [
                    "find",
                    f"{HOST_DEV}/tenstorrent",
                    *(HOST_DEV + h[len("/dev") :] for h in container.HUGEPAGE_DIRS),
                    "-maxdepth",
                    "1",
                    "-printf",
                    "%y %G %p\\n",
                ],
                out.append,
                timeout=60,
                host=self.host,
            )
            nodes: list[str] = []
            group, huge = None, []
            for line in b"".join(out).decode("utf-8", "replace").splitlines():
                kind, gid, path = ([*line.split(" ", 2), "", ""])[:3]
                if kind == "c" and path.startswith(f"{HOST_DEV}/tenstorrent/"):
                    nodes.append(path.rsplit("/", 1)[1])
                    group = gid
                elif kind == "d" and "/dev" + path[len(HOST_DEV) :] in container.HUGEPAGE_DIRS:
                    huge.append("/dev" + path[len(HOST_DEV) :])
            _machines[key] = (tuple(sorted(nodes, key=lambda n: (len(n), n))), group, tuple(huge))
        nodes_t, group, huge_t = _machines[key]
        if self.docker.devices:
            nodes_t = tuple(n for n in nodes_t if n in self.docker.devices) or self.docker.devices
        return nodes_t, group, huge_t

    def _ship(self, checkout: Path, on_output: Callable[[bytes], None]) -> None:
        """The checkout's files on the engine as they are here: only what changed is sent."""
        from lnrepro.run import ship

        tree = self._tree(checkout)
        container.ensure_volume(self.host, tree.name, {"io.lnrepro.path": str(checkout)})
        manifest, subst = ship.local_manifest(checkout)
        key = (self.host or "", tree.name)
        if _shipped.get(key) == manifest:
            return
        spec = container.ContainerSpec(
            self.docker.image,
            user=container.invoking_user(),
            workdir=str(checkout),
            named_volumes=(tree,),
            local_binds=False,
        )
        old = _shipped.get(key)
        if old is None:
            with container.parked(self.host, spec) as ct:
                old = ship.parse_manifest(container.read_file(ct, f"{checkout}/{ship.MANIFEST}"))
        t = ship.diff(old, manifest)
        if t.empty:  # what this process did not know, the engine's tree already had
            _shipped[key] = manifest
            return
        uid, gid = (int(x) for x in container.invoking_user().split(":"))
        data = ship.archive(checkout, checkout.name, t, manifest, subst, (uid, gid))
        on_output(
            f"lnrepro: shipping {len(t.send)} changed file(s) "
            f"({ship.sizes(checkout, t.send) / 1e6:.1f} MB) to {tree.name} on the engine at "
            f"{self.host}; {len(t.delete)} to delete there\n".encode()
        )
        with container.parked(self.host, spec) as ct, container.patient(ct.client):
            ct.put_archive(str(checkout.parent), data)
        for argv in ship.deletions(t.delete):
            res = container.stream(spec, argv, on_output, timeout=600, host=self.host)
            if res.exit_code != 0:
                raise EnvironmentProblem(
                    f"deleting {len(t.delete)} file(s) in {tree.name} on the engine at {self.host} "
                    f"failed (exit {res.exit_code})",
                    f"remove the volume there (docker volume rm {tree.name}); the next step ships "
                    "the whole tree",
                )
        _shipped[key] = manifest

    # ------------------------------------------------------------------ Runner
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
        on_hang: OnHang | None = None,
    ) -> proc.ProcResult:
        with container.engine_errors(self.host):
            return self._run(
                argv, on_output, cwd=cwd, env=env, mounts=mounts, timeout=timeout, on_hang=on_hang
            )

    def _run(
        self,
        argv: list[str],
        on_output: Callable[[bytes], None],
        *,
        cwd: Path,
        env: dict[str, str],
        mounts: tuple[Path, ...],
        timeout: float | None,
        on_hang: OnHang | None = None,
    ) -> proc.ProcResult:
        self._image(on_output)
        machine = self._machine()
        checkout = mounts[0] if mounts else cwd
        self._ship(checkout, on_output)
        cc = self._ccache()
        container.ensure_volume(self.host, cc.name, {"io.lnrepro.path": cc.container})
        scratch = [Path(m) for m in mounts[1:]]
        if not machine[0]:
            on_output(
                b"lnrepro: warning: no /dev/tenstorrent device on the engine's machine: "
                b"builds work; tests will fail for the environment\n"
            )

        def before(ct: object) -> None:  # the directories written to are the invoking user's
            for d in (*scratch, Path(cc.container)):
                ct.put_archive(str(d.parent), _dir_entry(d))  # type: ignore[attr-defined]

        def after(ct: Any) -> None:  # the record's files come back here
            with container.patient(ct.client):
                for d in scratch:
                    container.fetch_dir(ct, str(d), d, skip=("kernel-cache",))

        return container.stream(
            self.spec(cwd=cwd, env=env, mounts=mounts, machine=machine),
            argv,
            on_output,
            timeout=timeout,
            host=self.host,
            before_start=before,
            after_exit=after,
            before_kill=_exec_on_hang(on_hang, cwd),
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
        spec = self.spec(cwd=cwd, env=env, mounts=mounts, ro_mounts=ro_mounts)
        return f"DOCKER_HOST={shlex.quote(self.host or '')} {spec.shell_line(argv)}"

    def describe(self) -> dict[str, JSON]:
        """The engine machine's devices and mounts are found when the first command runs
        (``devices``: only what ``--device`` asked for)."""
        return {
            **self.docker.describe(),
            "remote": True,
            "hugepage_mounts": [],
            "warnings": [],
            "devices": [f"/dev/tenstorrent/{d}" for d in self.docker.devices],
            "ccache_volume": self._ccache().name,
        }

    def fingerprint(self) -> dict[str, JSON]:
        return self.docker.fingerprint()

    # ------------------------------------------------------------------ the tree there
    def _parked(self, checkout: Path) -> Any:
        spec = container.ContainerSpec(
            self.docker.image,
            user=container.invoking_user(),
            named_volumes=(self._tree(checkout),),
            local_binds=False,
        )
        return container.parked(self.host, spec)

    def _there(self, checkout: Path) -> bool:
        """The tree's volume is on the engine (before the first command, nothing is)."""
        return container.volume_exists(self.host, self._tree(checkout).name)

    def read_text(self, checkout: Path, rel: str) -> str | None:
        with container.engine_errors(self.host):
            if not self._there(checkout):
                return None
            with self._parked(checkout) as ct:
                data = container.read_file(ct, str(checkout / rel))
        return data.decode("utf-8", "replace") if data is not None else None

    def write_text(self, checkout: Path, rel: str, text: str) -> None:
        target = checkout / rel
        with container.engine_errors(self.host), self._parked(checkout) as ct:
            ct.put_archive(str(target.parent), _file_entry(target.name, text.encode()))

    def exists(self, checkout: Path, rel: str) -> bool:
        with container.engine_errors(self.host):
            if not self._there(checkout):
                return False
            with self._parked(checkout) as ct:
                return bool(container.exists(ct, str(checkout / rel)))

    def outputs_digest(self, checkout: Path, roots: list[str]) -> tuple[str, int]:
        """As :func:`lnrepro.run.inputs.outputs_digest`, hashed there (``sha256sum``), the
        bookkeeping left out by the same rules."""
        with container.engine_errors(self.host):
            return self._outputs_digest(checkout, roots)

    def _outputs_digest(self, checkout: Path, roots: list[str]) -> tuple[str, int]:
        import hashlib

        from lnrepro.run import inputs as inp

        spec = container.ContainerSpec(
            self.docker.image,
            user=container.invoking_user(),
            workdir=str(checkout),
            named_volumes=(self._tree(checkout),),
            local_binds=False,
        )
        h = hashlib.sha256()
        count = 0
        for root in roots:
            if not self.exists(checkout, root):
                h.update(f"absent:{root}\0".encode())
                continue
            out: list[bytes] = []
            prune = [x for d in sorted(inp.BOOKKEEPING_DIRS) for x in ("-name", d, "-o")][:-1]
            res = container.stream(
                spec,
                [
                    "find",
                    root,
                    "-type",
                    "d",
                    "(",
                    *prune,
                    ")",
                    "-prune",
                    "-o",
                    "-type",
                    "f",
                    "-exec",
                    "sha256sum",
                    "--",
                    "{}",
                    "+",
                    "-o",
                    "-type",
                    "l",
                    "-printf",
                    "link:%l  %p\\n",
                ],
                out.append,
                timeout=1800,
                host=self.host,
            )
            if res.exit_code != 0:
                raise EnvironmentProblem(
                    f"hashing {root} on the engine at {self.host} failed (exit {res.exit_code})",
                    "check that engine's disk",
                )
            found = []
            for line in b"".join(out).decode("utf-8", "surrogateescape").splitlines():
                digest, _, path = line.partition("  ")
                rel = Path(path).relative_to(root) if path.startswith(root) else Path(path)
                if path and not inp.is_bookkeeping(rel):
                    found.append((path, digest))
            for path, digest in sorted(found):
                h.update(os.fsencode(path) + b"\0" + digest.encode() + b"\0")
                count += 1
        return h.hexdigest(), count
