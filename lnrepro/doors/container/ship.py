"""Shipping to and from an engine that cannot see here. A card host's engine shares no path with
this machine: what it needs goes there through the API (images, files into volumes), and what
comes back does too (files out of containers)."""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from lnrepro.doors.container.create import create_held, remove_made
from lnrepro.doors.container.engine import client, engine_errors, remote_client
from lnrepro.doors.container.owners import sweep
from lnrepro.doors.container.spec import LABEL, ContainerSpec
from lnrepro.errors import DockerUnavailable, EnvironmentProblem


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
    c = remote_client(host)
    sweep(c, host)
    made: list[Any] = []
    try:
        ct = create_held(c, spec, ["true"], made)
        with engine_errors(host):
            yield ct
    finally:
        remove_made(made)


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
