"""The one door for Docker, and the pure builders of how lnrepro starts a container.

:func:`run_spec` is *the* container lnrepro uses for tt-metal (``env-check --container``, the
docker runner of ``run`` and ``bisect``): every Tenstorrent device node, the 1 GiB hugetlbfs
mount, ``/etc/passwd`` and ``/etc/group`` read-only (so the invoking user has a name and a HOME,
as tt-metal's scripts/docker/run_docker_func.sh mounts them), the checkout at the same path, the
invoking user's uid:gid plus the device's group, and TT_METAL_HOME / ARCH_NAME / PYTHONPATH; by
default also the host's ``/dev`` and ``/sys`` (seed 001: tests fail without sysfs). The image's
ENTRYPOINT is not run: tt-metal's dev image starts sshd there under ``set -e``
(dockerfile/entrypoint.sh@47ad2f56a9), which only root may, so it would end every container of a
user's before the command. Never ``--privileged`` unless asked. The builders are pure: tests
check them without a daemon.

The SDK is driven as its authors advise: ``detach=True``, then ``wait`` and ``logs``, and the
container removed in every case (timeout and Ctrl-C included); ``containers.run`` without
detach would lose a failing command's stdout.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import threading
import time
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lnrepro.doors.proc import ProcResult
from lnrepro.errors import (
    CommandTimeout,
    DockerUnavailable,
    EngineLost,
    EnvironmentProblem,
    InputError,
    Stopped,
    UsageError,
)

DEFAULT_IMAGE = "ghcr.io/tenstorrent/tt-metal/tt-metalium/ubuntu-22.04-dev-amd64:latest"
HUGEPAGE_MOUNT = "/dev/hugepages-1G"
LABEL = "io.lnrepro"  # every container lnrepro starts carries it: findable, removable
OWNER = "io.lnrepro.owner"  # which lnrepro started it: host/boot id/pid namespace/pid/start time
MADE = "io.lnrepro.made"  # one create request's token: finds a container whose handle never came
USER_DB = ("/etc/passwd", "/etc/group")  # mounted read-only: the invoking user has a name and HOME
# git trusts every directory (safe.directory=*), for this process only: a checkout owned by
# another uid than the container's user is otherwise "dubious" and git refuses to describe it
GIT_TRUST_ALL = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory",
                 "GIT_CONFIG_VALUE_0": "*"}  # fmt: skip


class _Deferred(types.ModuleType):
    """A module that stands in for another until one of its attributes is asked for."""

    def __getattr__(self, name: str) -> Any:
        import importlib
        import sys

        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


def _lazy_paramiko() -> None:
    """The Docker SDK imports paramiko (~0.09 s) whenever it is imported, for ssh:// engines,
    which lnrepro reaches through the ``ssh`` command (``use_ssh_client``) instead: paramiko
    stands deferred, loaded only if something uses it. Before any SDK import, so this module is
    imported before the SDK everywhere (lnrepro/doors/images.py)."""
    import importlib.util
    import sys

    if "paramiko" in sys.modules or "docker" in sys.modules:
        return
    spec = importlib.util.find_spec("paramiko")
    if spec is None:
        return  # the SDK then goes without ssh://, and says so
    stub = _Deferred("paramiko")
    stub.__spec__ = spec  # what `import paramiko` looks at: no load for that
    sys.modules["paramiko"] = stub


_lazy_paramiko()

_sdk_lock = threading.Lock()


def load_sdk() -> None:
    """Import the Docker SDK whole, once, before threads use it: two bisect jobs importing its
    parts at once met its circular imports half done (``cannot import name 'DockerClient' from
    partially initialized module 'docker.client'``, a CI-style run of two jobs)."""
    with _sdk_lock:
        import docker.errors  # docker itself first, whole
        import docker.types  # noqa: F401


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


MOUNT_SETS = ("full", "tt-metal", "seed-broken")  # "full" is the default
HUGEPAGE_DIRS = (HUGEPAGE_MOUNT, "/dev/hugepages")


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
        devices,
        tuple(volumes),
        user or invoking_user(),
        tuple(env),
        str(workdir) if workdir else (str(checkout) if checkout else None),
        privileged,
        (device_group,) if device_group else (),
    )


# ------------------------------------------------------------------ the door
_clients: dict[tuple[object, ...], Any] = {}  # one per thread and engine, closed at exit
_clients_closed_at_exit = threading.Event()
_ENGINE_ENV = ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH")


def _close_quietly(c: Any) -> None:
    with contextlib.suppress(Exception):
        c.close()


def _quiet_ssh_close() -> None:
    """docker's ssh:// transport (``use_ssh_client``) makes a pool, and an ``ssh`` process, per
    request, and its socket's ``close`` writes to that ssh: once the engine's machine has gone,
    every pool's finalizer — during the run or at the interpreter's exit — prints a BrokenPipe
    traceback. Closing such a socket is made quiet (its ssh is ended all the same); docker 7.2's
    ``docker/transport/sshconn.py`` ``SSHSocket.close``."""
    from docker.transport import sshconn

    original = sshconn.SSHSocket.close
    if getattr(original, "lnrepro_quiet", False):
        return

    def close(self: Any) -> None:
        try:
            original(self)
        except OSError:
            with contextlib.suppress(Exception):
                self.proc.terminate()

    close.lnrepro_quiet = True  # type: ignore[attr-defined]
    sshconn.SSHSocket.close = close


def _close_clients() -> None:
    """Close every client before the interpreter's own finalizers run."""
    for c in list(_clients.values()):
        _close_quietly(c)
    _clients.clear()


# How long one API request may wait for the engine's answer: the SDK's own default (the docker
# CLI has none). An engine on a loaded 2-core machine took over 10 s to answer one request while
# it was fine, and a request that times out loses the step. A dead engine refuses at once.
REQUEST_TIMEOUT_S = 60.0


def client(host: str | None = None) -> Any:
    """A connected Docker client (``host``: another engine, e.g. a context's), or a one-line
    error that says how to get one. Reused per thread and engine while it answers (an ssh://
    engine is a new ssh process per client)."""
    from docker.client import DockerClient, from_env
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    key = (threading.get_ident(), host, *(os.environ.get(k) for k in _ENGINE_ENV))
    known = _clients.pop(key, None)
    if known is not None:
        try:
            known.ping()
            _clients[key] = known
            return known
        except (DockerException, RequestException):
            _close_quietly(known)
    try:
        if host and host.startswith("ssh://"):
            _quiet_ssh_close()
            # through the ssh command, as the docker CLI does: the user's ~/.ssh/config, agent and
            # known hosts apply; the engine's machine answers `docker system dial-stdio`
            c = DockerClient(base_url=host, timeout=REQUEST_TIMEOUT_S, use_ssh_client=True)
        else:
            c = (DockerClient(base_url=host, timeout=REQUEST_TIMEOUT_S) if host
                 else from_env(timeout=REQUEST_TIMEOUT_S))  # fmt: skip
        try:
            c.ping()
        except BaseException:
            _close_quietly(c)  # an ssh:// client's ssh process goes with it
            raise
        if not _clients_closed_at_exit.is_set():
            import atexit

            _clients_closed_at_exit.set()
            atexit.register(_close_clients)  # after the SDK's own: so it runs before them
        _clients[key] = c
        return c
    except DockerException as exc:
        text = str(exc)
        if "Permission denied" in text or "PermissionError" in text:
            raise DockerUnavailable(
                "permission denied on the Docker socket",
                "add yourself to the docker group (sudo usermod -aG docker $USER) and log in again",
            ) from None
        raise DockerUnavailable(
            "no Docker engine answers ("
            + (text.split("(")[-1].rstrip(")") if "(" in text else text)[:120]
            + ")",
            "start it: sudo systemctl start docker (or run dockerd), or set DOCKER_HOST",
        ) from None


def engine_status() -> tuple[bool, str, str]:
    """(ok, detail, fix) for env-check's docker check."""
    try:
        c = client()
        v = c.version()
    except DockerUnavailable as exc:
        return False, exc.message, exc.fix or ""
    return True, f"Docker {v.get('Version', '?')} (API {v.get('ApiVersion', '?')}) reachable", ""


def missing_bind_sources(spec: ContainerSpec) -> list[str]:
    """Host paths the spec would bind that do not exist (Docker would create them as root)."""
    return [v.host for v in spec.volumes if not Path(v.host).exists()]


def context_host(name: str) -> str:
    """The engine address of a Docker context (``docker context create``), read from its
    metadata as the docker CLI writes it; ``default`` is $DOCKER_HOST or the local socket."""
    import hashlib
    import json

    if name == "default":
        return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    conf = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker")
    meta = conf / "contexts" / "meta" / hashlib.sha256(name.encode()).hexdigest() / "meta.json"
    try:
        host = json.loads(meta.read_text())["Endpoints"]["docker"]["Host"]
    except (OSError, ValueError, KeyError, TypeError):
        raise UsageError(
            f"no Docker context named {name!r} (looked in {meta.parent.parent})",
            f"create it: docker context create {name} --docker host=ssh://USER@HOST",
        ) from None
    return str(host)


_same_engine: dict[str, bool] = {}


def is_local_engine(host: str) -> bool:
    """True when ``host`` is this machine's own engine under another address (a context made for
    the local socket): the same engine ID as the default one, so this machine's paths bind. Any
    doubt (either engine not answering) is False: the engine is then treated as another
    machine's, which works everywhere, only slower."""
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    if host not in _same_engine:
        try:
            _same_engine[host] = str(client(host).info().get("ID") or "-") == str(
                client().info().get("ID") or "+"
            )
        except (DockerUnavailable, DockerException, RequestException):
            _same_engine[host] = False
    return _same_engine[host]


_live_containers: dict[str, Any] = {}  # started and not yet removed (any thread)
_closed = threading.Event()  # set by remove_all_live(close=True): no new container may start


def remove_all_live(close: bool = False) -> int:
    """Remove every container lnrepro is running now, in any thread (a stopped --jobs bisect);
    ``close``: and start none until :func:`reopen`."""
    if close:
        _closed.set()
    items = list(_live_containers.items())
    if not items:
        return 0
    from docker.errors import DockerException

    for cid, c in items:
        with contextlib.suppress(DockerException, Exception):
            c.remove(force=True, v=True)
        _live_containers.pop(cid, None)
    return len(items)


def reopen() -> None:
    _closed.clear()


# ------------------------------------------------------------------ owners
# A container outlives an lnrepro that was killed (SIGKILL, a lost terminal, a crashed machine's
# engine coming back): nothing in-process can remove it then. Each container names its owner,
# and the next lnrepro to use that engine removes those whose owner is gone.


def _start_ticks(pid: int) -> str | None:
    """A process's start time (clock ticks since boot, /proc/PID/stat field 22): with the pid, it
    names the process even after the pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # the name may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "-"


def _pid_namespace() -> str:
    """This process's pid namespace (an lnrepro in a container with ``--network host`` has the
    host's name and boot id, but not its pids)."""
    try:
        return str(Path("/proc/self/ns/pid").readlink()).removeprefix("pid:[").removesuffix("]")
    except OSError:
        return "-"


def owner_label(pid: int | None = None) -> str:
    """``host/boot id/pid namespace/pid/start``: this process (or ``pid``, of this namespace), as
    a container's owner label."""
    import socket

    pid = os.getpid() if pid is None else pid
    return (f"{socket.gethostname()}/{_boot_id()}/{_pid_namespace()}/{pid}/"
            f"{_start_ticks(pid) or '-'}")  # fmt: skip


def owner_gone(label: str) -> bool:
    """True when the owner named by ``label`` is a process that no longer runs (or ran before
    this boot) on this machine and in this pid namespace. Any other owner is never judged."""
    import socket

    parts = label.split("/")
    if len(parts) != 5 or parts[0] != socket.gethostname():
        return False
    _, boot, pidns, pid, start = parts
    if boot != _boot_id():
        return True
    if pidns != _pid_namespace():
        return False
    return not pid.isdigit() or _start_ticks(int(pid)) != start


_swept: set[str | None] = set()


def sweep(c: Any, host: str | None) -> int:
    """Remove the containers on that engine whose lnrepro is gone (once per engine and process);
    how many."""
    from docker.errors import APIError
    from requests.exceptions import RequestException

    if host in _swept:
        return 0
    _swept.add(host)
    gone = 0
    with contextlib.suppress(APIError, RequestException):
        for ct in c.containers.list(all=True, filters={"label": OWNER}):
            if owner_gone(str(ct.labels.get(OWNER, ""))):
                with contextlib.suppress(APIError, RequestException):
                    ct.remove(force=True, v=True)
                    gone += 1
    return gone


def _create(c: Any, spec: ContainerSpec, command: Sequence[str]) -> Any:
    """The container, created. A signal (or a dropped connection) can come after the engine made
    it and before its answer reached here: found by this request's token, it is removed then,
    not left to the next lnrepro's sweep."""
    import uuid

    kw = spec.sdk_kwargs()
    token = uuid.uuid4().hex
    kw["labels"] = {**kw["labels"], OWNER: owner_label(), MADE: token}
    try:
        return c.containers.create(spec.image, list(command), **kw)
    except BaseException:
        with contextlib.suppress(Exception):
            for ct in c.containers.list(all=True, filters={"label": f"{MADE}={token}"}):
                ct.remove(force=True, v=True)
        raise


def _create_held(c: Any, spec: ContainerSpec, command: Sequence[str], made: list[Any]) -> Any:
    """:func:`_create`, with the container in ``made`` (the caller removes what is there) and
    known to :func:`remove_all_live` before a signal that came meanwhile is raised
    (``proc.signals_held``): a create request cut off by a signal is still carried out by the
    engine, which a loaded engine can finish after lnrepro looked for it, and the container
    would outlive lnrepro."""
    from lnrepro.doors import proc

    with proc.signals_held():
        container = _create(c, spec, command)
        made.append(container)
        _live_containers[container.id] = container
    return container


def _prepared(spec: ContainerSpec, host: str | None = None) -> Any:
    """A client with the spec's image present and every bind source existing, or an error."""
    from docker.errors import APIError, ImageNotFound

    missing = missing_bind_sources(spec) if spec.local_binds else []
    if missing:
        raise InputError(
            f"{missing[0]} does not exist, so it cannot be mounted into the container",
            "create it or pass an existing path (nothing was started)",
        )
    c = client(host)
    sweep(c, host)
    try:
        c.images.get(spec.image)
    except ImageNotFound:
        where = f"the engine at {host}" if host else "this machine"
        raise EnvironmentProblem(
            f"image {spec.image} is not on {where}",
            f"docker pull {spec.image}, or pass --image with an image that engine has",
        ) from None
    except APIError as exc:
        raise UsageError(
            f"{spec.image!r} is not a usable image name: {exc.explanation or exc}",
            "pass --image with a name like repo/name:tag",
        ) from None
    return c


def stream(
    spec: ContainerSpec,
    command: Sequence[str],
    on_output: Callable[[bytes], None],
    *,
    timeout: float | None,
    host: str | None = None,
    before_start: Callable[[Any], None] | None = None,
    after_exit: Callable[[Any], None] | None = None,
    before_kill: Callable[[Any], None] | None = None,
) -> ProcResult:
    """Run ``command`` in a fresh container, streaming its output; like :func:`proc.stream`.

    Detached, logs followed in a thread, ``wait`` with the timeout (then killed: exit 124). The
    container is removed in every case — a failed start, a timeout, Ctrl-C and SIGTERM included
    — and its anonymous volumes with it. ``before_start`` gets the created container (files are
    put into it through the API), ``after_exit`` the exited one (files are fetched from it),
    ``before_kill`` the timed-out one while its command still runs (see :func:`exec_in`).
    """
    import threading

    import requests
    from docker.errors import APIError

    c = _prepared(spec, host)
    begin = time.monotonic()
    if _closed.is_set():
        raise Stopped()
    made: list[Any] = []  # the container, once the engine has made it (then always removed)
    reader: threading.Thread | None = None
    try:
        container = _create_held(c, spec, command, made)
        if _closed.is_set():  # stopped while it was being created: it never starts
            raise Stopped()
        if before_start is not None:
            before_start(container)
        try:
            container.start()
        except APIError as exc:
            text = str(exc.explanation or exc)
            hint = (
                f"use an image that has {command[0]}"
                if "executable file not found" in text or "no such file" in text
                else "check the image and the Docker engine's log"
            )
            raise EnvironmentProblem(f"the container did not start: {text[:200]}", hint) from None

        sink_failed: list[Exception] = []

        def pump() -> None:
            try:
                with contextlib.suppress(APIError, requests.exceptions.RequestException):
                    for chunk in container.logs(stream=True, follow=True, stdout=True, stderr=True):
                        on_output(chunk)
            except Exception as exc:  # noqa: BLE001 - the sink's own (a full disk): the caller's
                sink_failed.append(exc)
                with contextlib.suppress(APIError, requests.exceptions.RequestException):
                    container.kill()  # nothing would keep what it still prints

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        timed_out = False
        try:
            status = container.wait(timeout=timeout)
            code = int(status.get("StatusCode", -1))
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            if not _answers(c):
                raise EngineLost(
                    f"the Docker engine at {host or 'the default address'} stopped answering "
                    f"during `{shlex.join(command)[:80]}`",
                    "check that engine's machine; --resume carries on once it answers",
                ) from None
            timed_out, code = True, 124
            if before_kill is not None:
                before_kill(container)
            with contextlib.suppress(APIError):
                container.kill()
        reader.join(timeout=10)
        if sink_failed:
            raise sink_failed[0]  # in the caller's thread, where it is reported
        if after_exit is not None:
            after_exit(container)
        return ProcResult(tuple(command), code, timed_out, time.monotonic() - begin)
    finally:
        for ct in made:
            with contextlib.suppress(APIError, requests.exceptions.RequestException):
                ct.remove(force=True, v=True)
            _live_containers.pop(ct.id, None)
        if reader is not None:
            reader.join(timeout=5)


def exec_in(
    container: Any,
    command: Sequence[str],
    on_output: Callable[[bytes], None],
    *,
    timeout: float,
    workdir: str | None = None,
) -> tuple[int | None, bool]:
    """Run ``command`` in a running container (``docker exec``: its user, environment and
    namespaces), streaming its output, for at most ``timeout`` seconds; (exit status, timed
    out). A command still running at its time limit is left to the container's kill."""
    import threading

    import requests
    from docker.errors import APIError

    api = container.client.api
    result: list[int | None] = []

    def pump() -> None:
        with contextlib.suppress(APIError, requests.exceptions.RequestException):
            ex = api.exec_create(container.id, list(command), workdir=workdir, stdout=True,
                                 stderr=True)  # fmt: skip
            for chunk in api.exec_start(ex["Id"], stream=True):
                on_output(chunk)
            result.append(api.exec_inspect(ex["Id"]).get("ExitCode"))

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    t.join(timeout)
    return (result[0] if result else None), t.is_alive()


def run(spec: ContainerSpec, command: Sequence[str], *, timeout: float = 120.0) -> tuple[int, str]:
    """Run ``command`` in a fresh container; return (exit status, stdout+stderr).

    Changes nothing on the host before it is sure it can: a missing bind source is refused
    (Docker would create it, as root). The container is always removed.
    """
    chunks: list[bytes] = []
    res = stream(spec, command, chunks.append, timeout=timeout)
    if res.timed_out:
        raise CommandTimeout(
            f"the container did not finish within {timeout:g} s",
            "check that the image starts quickly and the engine is not overloaded",
        )
    return res.exit_code, b"".join(chunks).decode("utf-8", "replace")


def _answers(c: Any) -> bool:
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    try:
        c.ping()
        return True
    except (DockerException, RequestException):
        return False


# ------------------------------------------------------------------ an engine that cannot see here
# A card host's engine shares no path with this machine: what it needs goes there through the API
# (images, files into volumes), and what comes back does too (files out of containers).


@contextlib.contextmanager
def engine_errors(host: str | None) -> Iterator[None]:
    """Around work on an engine of another machine, what broke as lnrepro's errors (the API's
    are OSErrors, which would read as a failed write of a local file):

    - the engine stopped answering (a dropped connection, an API error, no engine at all), or
      one request timed out or dropped while it still answers (a loaded card host): the work
      is lost, not judged, :class:`EngineLost`;
    - the engine answered with an error: :class:`EnvironmentProblem` with its explanation.
    """
    from docker.errors import APIError, DockerException
    from requests.exceptions import RequestException

    where = host or "the default address"
    try:
        yield
    except DockerUnavailable:
        raise
    except (DockerException, RequestException) as exc:
        try:
            alive = _answers(client(host))
        except DockerUnavailable:
            alive = False
        text = " ".join(str(exc).split())[:120]
        if not alive:
            raise EngineLost(f"the Docker engine at {where} stopped answering ({text})",
                             "check that engine's machine; --resume carries on once it answers",
                             ) from None  # fmt: skip
        if isinstance(exc, APIError) or not isinstance(exc, RequestException):
            why = exc.explanation if isinstance(exc, APIError) and exc.explanation else text
            raise EnvironmentProblem(f"the Docker engine at {where} refused: {why}",
                                     "check that engine's log and disk") from None  # fmt: skip
        raise EngineLost(f"a request to the Docker engine at {where} failed ({text})",
                         "check that engine's load; --resume carries on") from None  # fmt: skip


def remote_client(host: str | None) -> Any:
    """:func:`client` for an engine lnrepro has been using: one that no longer answers is lost."""
    try:
        return client(host)
    except DockerUnavailable as exc:
        raise EngineLost(f"the Docker engine at {host or 'the default address'} stopped answering "
                         f"({exc.message})",
                         "check that engine's machine; --resume carries on once it answers") from None  # fmt: skip


def volume_exists(host: str | None, name: str) -> bool:
    from docker.errors import NotFound

    try:
        remote_client(host).volumes.get(name)
        return True
    except NotFound:
        return False


def ensure_volume(host: str | None, name: str, labels: dict[str, str]) -> bool:
    """The named volume on that engine, created (with lnrepro's label) if it is not there;
    True when it was created now."""
    from docker.errors import NotFound

    c = remote_client(host)
    try:
        c.volumes.get(name)
        return False
    except NotFound:
        c.volumes.create(name, labels={LABEL: "1", **labels})
        return True


@contextlib.contextmanager
def parked(host: str | None, spec: ContainerSpec) -> Iterator[Any]:
    """A container created and never started, with the spec's volumes: a handle to put files
    into them and get files out (``put_archive``/``get_archive``). Always removed; what breaks
    while it is used is judged as :func:`engine_errors` judges it."""
    from docker.errors import APIError
    from requests.exceptions import RequestException

    c = remote_client(host)
    sweep(c, host)
    made: list[Any] = []
    try:
        ct = _create_held(c, spec, ["true"], made)
        with engine_errors(host):
            yield ct
    finally:
        for ct in made:
            with contextlib.suppress(APIError, RequestException):
                ct.remove(force=True, v=True)
            _live_containers.pop(ct.id, None)


def read_file(ct: Any, path: str, limit: int = 64 << 20) -> bytes | None:
    """A regular file's bytes from a container (or its volumes); None when it is not there."""
    import tarfile

    from docker.errors import NotFound

    try:
        bits, st = ct.get_archive(path)
    except NotFound:
        return None
    if int(st.get("size", 0)) > limit:
        return None
    data = b"".join(bits)
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        m = tf.next()
        if m is None or not m.isfile():
            return None
        f = tf.extractfile(m)
        return f.read() if f is not None else None


def exists(ct: Any, path: str) -> bool:
    """Whether ``path`` is there in a container (or its volumes); only its header is read."""
    from docker.errors import NotFound

    try:
        bits, _ = ct.get_archive(path, chunk_size=1)
    except NotFound:
        return False
    close = getattr(bits, "close", None)
    if close is not None:
        close()
    return True


def fetch_dir(ct: Any, path: str, into: Path, skip: Sequence[str] = ()) -> int:
    """Copy a directory out of a container into ``into`` (its contents, not the directory):
    regular files and directories only, nothing outside ``into``, ``skip``'s first-level names
    left out. The number of files written."""
    import tarfile

    from docker.errors import NotFound

    try:
        bits, _ = ct.get_archive(path)
    except NotFound:
        return 0
    count = 0
    with tarfile.open(fileobj=io.BufferedReader(_Chunks(iter(bits))), mode="r|") as tf:
        for m in tf:
            parts = Path(m.name).parts[1:]  # the archive is rooted at the directory's name
            if not parts or parts[0] in skip or ".." in parts or Path(m.name).is_absolute():
                continue
            target = into.joinpath(*parts)
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
            elif m.isfile():
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(m)
                if src is not None:
                    with target.open("wb") as out:
                        while chunk := src.read(1 << 20):
                            out.write(chunk)
                    count += 1
    return count


class _Chunks(io.RawIOBase):
    """An iterator of byte chunks read as a file (a streamed archive, never held whole)."""

    def __init__(self, it: Iterator[bytes]) -> None:
        super().__init__()
        self.it, self.buf = it, b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self.buf:
            try:
                self.buf = next(self.it)
            except StopIteration:
                return 0
        n = min(len(b), len(self.buf))
        b[:n] = self.buf[:n]
        self.buf = self.buf[n:]
        return n


BULK_TIMEOUT_S = 900.0  # a read during a bulk transfer (an image, a tree)


@contextlib.contextmanager
def patient(*clients: Any) -> Iterator[None]:
    """The clients (Docker clients, or containers' ``.client``) wait up to ``BULK_TIMEOUT_S`` for
    each read while a bulk transfer runs: an engine under load may be slow to send the first
    bytes of an 870 MB image, or to answer once it has unpacked a tree, longer than one
    request's ``REQUEST_TIMEOUT_S``. Clients are per thread, so nobody else sees the longer
    wait."""
    apis = [c.api for c in clients]
    before = [a.timeout for a in apis]
    for a in apis:
        a.timeout = BULK_TIMEOUT_S
    try:
        yield
    finally:
        for a, t in zip(apis, before, strict=True):
            a.timeout = t


def ensure_image(host: str | None, image: str, on_output: Callable[[bytes], None]) -> None:
    """The image on that engine: there already, or sent from this machine's engine through the
    API (``docker save`` here, ``load`` there), with progress in the output."""
    from docker.errors import ImageNotFound

    there = remote_client(host)
    try:
        there.images.get(image)
        return
    except ImageNotFound:
        pass
    try:
        here = client(None)
        here.images.get(image)
    except (ImageNotFound, DockerUnavailable):
        raise EnvironmentProblem(
            f"image {image} is neither on the engine at {host} nor on this machine",
            f"load it there (docker --context NAME pull {image}), or pass --image with one it has",
        ) from None
    on_output(f"lnrepro: sending image {image} to the engine at {host}\n".encode())
    begin, sent = time.monotonic(), 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        for chunk in here.api.get_image(image, chunk_size=4 << 20):
            sent += len(chunk)
            yield chunk

    with patient(here, there):
        for _ in there.api.load_image(chunks()):
            pass
    on_output(f"lnrepro: sent {sent / 1e6:.0f} MB in {time.monotonic() - begin:.1f} s\n".encode())
