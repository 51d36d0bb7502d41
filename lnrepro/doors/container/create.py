"""Making a container, and removing it: every container lnrepro creates is known in-process from
the moment the engine made it (signals held meanwhile) until it is removed, so a stopped run
removes it (:func:`remove_all_live`), and it carries its owner's label for the next lnrepro's
sweep if this one is killed."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any

from lnrepro.doors.container.engine import client
from lnrepro.doors.container.owners import owner_label, sweep
from lnrepro.doors.container.spec import MADE, OWNER, ContainerSpec, missing_bind_sources
from lnrepro.errors import EnvironmentProblem, InputError, Stopped, UsageError

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


def refuse_if_closed() -> None:
    """:class:`Stopped` once :func:`remove_all_live` closed the door: no new container starts."""
    if _closed.is_set():
        raise Stopped()


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


def create_held(c: Any, spec: ContainerSpec, command: Sequence[str], made: list[Any]) -> Any:
    """:func:`_create`, with the container in ``made`` (the caller removes what is there with
    :func:`remove_made`) and known to :func:`remove_all_live` before a signal that came meanwhile
    is raised (``proc.signals_held``): a create request cut off by a signal is still carried out
    by the engine, which a loaded engine can finish after lnrepro looked for it, and the
    container would outlive lnrepro."""
    from lnrepro.doors import proc

    with proc.signals_held():
        container = _create(c, spec, command)
        made.append(container)
        _live_containers[container.id] = container
    return container


def remove_made(made: list[Any]) -> None:
    """Remove the containers :func:`create_held` put in ``made``, their anonymous volumes with
    them, in every case (a failed start, a timeout, Ctrl-C and SIGTERM included)."""
    from docker.errors import APIError
    from requests.exceptions import RequestException

    for ct in made:
        with contextlib.suppress(APIError, RequestException):
            ct.remove(force=True, v=True)
        _live_containers.pop(ct.id, None)


def prepared(spec: ContainerSpec, host: str | None = None) -> Any:
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
