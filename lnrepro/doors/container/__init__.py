"""The one door for Docker, and the pure builders of how lnrepro starts a container.

One module a concern, every name importable from here as before:

- :mod:`.spec`: the pure builders (:class:`ContainerSpec`, :func:`run_spec`): *the* container
  lnrepro starts for tt-metal, checked by tests without a daemon;
- :mod:`.engine`: the SDK imported (paramiko deferred), a client per thread and engine, Docker
  contexts, and an engine's failures as lnrepro's errors;
- :mod:`.owners`: each container's owner label, and the sweep of those whose lnrepro is gone;
- :mod:`.create`: a container made with signals held, known until removed (``remove_all_live``);
- :mod:`.streaming`: a command run in a fresh container, its output streamed (``stream``,
  ``run``);
- :mod:`.wait`: the wait, the kill at the time limit, and ``exec_in`` for ``before_kill`` hooks;
- :mod:`.ship`: images, volumes and files to and from an engine of another machine.

Importing this package imports no SDK: every submodule loads it in the function that uses it.
"""

from __future__ import annotations

from lnrepro.doors.container.create import remove_all_live, reopen
from lnrepro.doors.container.engine import (
    REQUEST_TIMEOUT_S,
    _quiet_ssh_close,
    _same_engine,
    client,
    context_host,
    engine_errors,
    engine_status,
    is_local_engine,
    load_sdk,
)
from lnrepro.doors.container.owners import _swept, owner_gone, owner_label
from lnrepro.doors.container.ship import (
    BULK_TIMEOUT_S,
    ensure_image,
    ensure_volume,
    exists,
    fetch_dir,
    parked,
    patient,
    read_file,
    volume_exists,
)
from lnrepro.doors.container.spec import (
    DEFAULT_IMAGE,
    GIT_TRUST_ALL,
    HUGEPAGE_DIRS,
    HUGEPAGE_MOUNT,
    LABEL,
    MOUNT_SETS,
    OWNER,
    ContainerSpec,
    NamedVolume,
    Volume,
    invoking_user,
    run_spec,
)
from lnrepro.doors.container.streaming import run, stream
from lnrepro.doors.container.wait import exec_in

__all__ = [
    "BULK_TIMEOUT_S",
    "DEFAULT_IMAGE",
    "GIT_TRUST_ALL",
    "HUGEPAGE_DIRS",
    "HUGEPAGE_MOUNT",
    "LABEL",
    "MOUNT_SETS",
    "OWNER",
    "REQUEST_TIMEOUT_S",
    "ContainerSpec",
    "NamedVolume",
    "Volume",
    "_quiet_ssh_close",
    "_same_engine",
    "_swept",
    "client",
    "context_host",
    "engine_errors",
    "engine_status",
    "ensure_image",
    "ensure_volume",
    "exec_in",
    "exists",
    "fetch_dir",
    "invoking_user",
    "is_local_engine",
    "load_sdk",
    "owner_gone",
    "owner_label",
    "parked",
    "patient",
    "read_file",
    "remove_all_live",
    "reopen",
    "run",
    "run_spec",
    "stream",
    "volume_exists",
]
