"""The remote docker runner: a Docker engine that shares no path with this machine (a card host,
named by ``--docker-context``). Everything goes through the Docker API; the checkout is shipped
there (:mod:`lnrepro.run.ship`) and a run's record is copied back."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lnrepro.doors import container, proc
from lnrepro.errors import EnvironmentProblem
from lnrepro.model.jsonio import JSON
from lnrepro.run.runners.base import Output, Place, TimeLimit
from lnrepro.run.runners.docker import DockerRunner, OutputEvents, exec_on_hang, invoking_ids

HOST_DEV = "/lnrepro-host-dev"  # the engine machine's /dev, read-only, in the probe container
REMOTE_HOME = "/tmp"  # HOME there: the engine machine's /etc/passwd does not know this user
_shipped: dict[tuple[str, str], dict[str, str]] = {}  # (engine, volume) -> its manifest, known here
# the engine machine's /dev/tenstorrent nodes, the group owning them, its hugepage mounts
Machine = tuple[tuple[str, ...], str | None, tuple[str, ...]]
_machines: dict[str, Machine] = {}


def volume_name(kind: str, host: str | None, path: Path | str) -> str:
    """A volume per engine and path on this machine (each job's worktree has its own)."""
    import hashlib
    import socket

    key = f"{socket.gethostname()}\0{host or ''}\0{path}"
    return f"lnrepro-{kind}-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _tar_entry(name: str, data: bytes | None) -> bytes:
    """A tar of one entry owned by the invoking user: a directory (``data`` None) or a file."""
    import io
    import tarfile
    import time

    ti = tarfile.TarInfo(name)
    ti.uid, ti.gid = invoking_ids()
    ti.mtime = time.time()
    if data is None:
        ti.type, ti.mode = tarfile.DIRTYPE, 0o755
    else:
        ti.size, ti.mode = len(data), 0o644
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.addfile(ti, io.BytesIO(data) if data is not None else None)
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

    def _tree_spec(self, checkout: Path, workdir: str | None = None) -> container.ContainerSpec:
        """A container that sees only the checkout's volume (to ship, read or hash it)."""
        return container.ContainerSpec(
            self.docker.image,
            user=container.invoking_user(),
            workdir=workdir,
            named_volumes=(self._tree(checkout),),
            local_binds=False,
        )

    def spec(self, place: Place, machine: Machine | None = None) -> container.ContainerSpec:
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
        env = {"HOME": REMOTE_HOME, **place.env, "CCACHE_DIR": str(d.ccache_dir)}
        return container.ContainerSpec(
            d.image,
            tuple(f"/dev/tenstorrent/{n}" for n in devices),
            tuple(binds),
            container.invoking_user(),
            tuple(env.items()),
            str(place.cwd),
            group_add=(group,) if group else (),
            named_volumes=(self._tree(place.checkout), self._ccache()),
            scratch=tuple(str(m) for m in place.written),
            local_binds=False,
        )

    # ------------------------------------------------------------------ the engine
    def _image(self, on_output: Output) -> None:
        if self.docker.base is not None:
            from lnrepro.doors.images import ensure_build_image

            ensure_build_image(self.docker.base, OutputEvents(on_output), host=self.host)
        else:
            container.ensure_image(self.host, self.docker.image, on_output)

    def _machine(self) -> Machine:
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

    def _ship(self, checkout: Path, on_output: Output) -> None:
        """The checkout's files on the engine as they are here: only what changed is sent."""
        from lnrepro.run import ship

        tree = self._tree(checkout)
        container.ensure_volume(self.host, tree.name, {"io.lnrepro.path": str(checkout)})
        manifest, subst = ship.local_manifest(checkout)
        key = (self.host or "", tree.name)
        if _shipped.get(key) == manifest:
            return
        spec = self._tree_spec(checkout, workdir=str(checkout))
        old = _shipped.get(key)
        if old is None:
            with container.parked(self.host, spec) as ct:
                old = ship.parse_manifest(container.read_file(ct, f"{checkout}/{ship.MANIFEST}"))
        t = ship.diff(old, manifest)
        if t.empty:  # what this process did not know, the engine's tree already had
            _shipped[key] = manifest
            return
        data = ship.archive(checkout, checkout.name, t, manifest, subst, invoking_ids())
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
        self, argv: list[str], on_output: Output, place: Place, limit: TimeLimit
    ) -> proc.ProcResult:
        with container.engine_errors(self.host):
            self._image(on_output)
            machine = self._machine()
            self._ship(place.checkout, on_output)
            cc = self._ccache()
            container.ensure_volume(self.host, cc.name, {"io.lnrepro.path": cc.container})
            scratch = list(place.written)
            if not machine[0]:
                on_output(
                    b"lnrepro: warning: no /dev/tenstorrent device on the engine's machine: "
                    b"builds work; tests will fail for the environment\n"
                )

            def before(ct: Any) -> None:  # the directories written to are the invoking user's
                for d in (*scratch, Path(cc.container)):
                    ct.put_archive(str(d.parent), _tar_entry(d.name, None))

            def after(ct: Any) -> None:  # the record's files come back here
                with container.patient(ct.client):
                    for d in scratch:
                        container.fetch_dir(ct, str(d), d, skip=("kernel-cache",))

            return container.stream(
                self.spec(place, machine),
                argv,
                on_output,
                timeout=limit.seconds,
                host=self.host,
                before_start=before,
                after_exit=after,
                before_kill=exec_on_hang(limit.on_hang, place.cwd),
            )

    def shell_line(self, argv: list[str], place: Place) -> str:
        spec = self.spec(place)
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
        return container.parked(self.host, self._tree_spec(checkout))

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
            ct.put_archive(str(target.parent), _tar_entry(target.name, text.encode()))

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

        spec = self._tree_spec(checkout, workdir=str(checkout))
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
