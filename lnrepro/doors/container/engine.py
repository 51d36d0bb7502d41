"""The door to a Docker engine: the SDK imported as lnrepro needs it, one client per thread and
engine, which engine a context names, and what an engine's failures mean as lnrepro's errors."""

from __future__ import annotations

import contextlib
import os
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lnrepro.errors import DockerUnavailable, EngineLost, EnvironmentProblem, UsageError


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
    stands deferred, loaded only if something uses it. Before any SDK import, so this package
    is imported before the SDK everywhere (lnrepro/doors/images.py)."""
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
            c = (
                DockerClient(base_url=host, timeout=REQUEST_TIMEOUT_S)
                if host
                else from_env(timeout=REQUEST_TIMEOUT_S)
            )
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


def answers(c: Any) -> bool:
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    try:
        c.ping()
        return True
    except (DockerException, RequestException):
        return False


def engine_lost(host: str | None, detail: str) -> EngineLost:
    """The engine at ``host`` no longer answers (``detail``: what it was doing, or what the
    connection said): the work is lost, not judged, and ``--resume`` carries on."""
    return EngineLost(
        f"the Docker engine at {host or 'the default address'} stopped answering {detail}",
        "check that engine's machine; --resume carries on once it answers",
    )


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
            alive = answers(client(host))
        except DockerUnavailable:
            alive = False
        text = " ".join(str(exc).split())[:120]
        if not alive:
            raise engine_lost(host, f"({text})") from None
        if isinstance(exc, APIError) or not isinstance(exc, RequestException):
            why = exc.explanation if isinstance(exc, APIError) and exc.explanation else text
            raise EnvironmentProblem(
                f"the Docker engine at {where} refused: {why}", "check that engine's log and disk"
            ) from None
        raise EngineLost(
            f"a request to the Docker engine at {where} failed ({text})",
            "check that engine's load; --resume carries on",
        ) from None


def remote_client(host: str | None) -> Any:
    """:func:`client` for an engine lnrepro has been using: one that no longer answers is lost."""
    try:
        return client(host)
    except DockerUnavailable as exc:
        raise engine_lost(host, f"({exc.message})") from None
