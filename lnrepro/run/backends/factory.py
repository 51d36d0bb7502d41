"""From options to a backend: the one place that knows which options select which backend."""

from __future__ import annotations

import os
import secrets
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from lnrepro.errors import UsageError
from lnrepro.run.backends import Backend


@dataclass
class BackendOptions:
    backend: str | None = (
        None  # emulator | local | tt-metal; None: tt-metal if --tt-metal, else emulator
    )
    # emulator
    kernel_era: str = "2025-12"
    arch: str = "wormhole_b0"
    defect: str | None = None  # None: the era's
    block_size: int | None = None
    l1_max_tiles: int | None = None
    fp32_stats: bool = False
    data: str = "copy"
    seed: int | None = None
    # an existing binary
    binary: Path | None = None
    # a tt-metal checkout
    tt_metal: Path | None = None
    runner: str = "docker"
    profile: str | None = None
    image: str | None = None
    mount_set: str = "full"
    env: tuple[str, ...] = ()
    require_device: bool = False
    reset_cmd: str | None = None
    watcher: int | None = None
    docker_host: str | None = None  # bisect --jobs: this job's engine (a Docker context's)
    devices: tuple[str, ...] | None = None  # bisect --jobs: this job's /dev/tenstorrent/N
    given: set[str] = field(
        default_factory=set
    )  # options the user typed (to reject misplaced ones)

    @property
    def chosen(self) -> str:
        if self.backend:
            return self.backend
        return "tt-metal" if self.tt_metal is not None else "emulator"


_ONLY = {
    "emulator": {"kernel_era", "arch", "defect", "block_size", "l1_max_tiles", "fp32_stats", "data", "seed"},
    "local": {"binary"},
    "tt-metal": {"tt_metal", "runner", "profile", "image", "mount_set", "env", "require_device",
                 "reset_cmd", "watcher"},
}  # fmt: skip


def _misplaced(opts: BackendOptions) -> None:
    mine = _ONLY[opts.chosen]
    for other, names in _ONLY.items():
        if other == opts.chosen:
            continue
        for name in sorted((names - mine) & opts.given):
            flag = "--" + name.replace("_", "-")
            raise UsageError(
                f"{flag} only applies with --backend {other}",
                f"add --backend {other}, or drop {flag}",
            )


def make_backend(opts: BackendOptions) -> Backend:
    """The backend the options describe, or a usage error that says what is missing."""
    if opts.chosen not in _ONLY:
        raise UsageError(f"unknown backend {opts.chosen!r}", "use emulator, local or tt-metal")
    _misplaced(opts)
    if opts.chosen == "emulator":
        from lnrepro.emulator.kernel import parse_defects
        from lnrepro.run.backends.emulator import EmulatorBackend

        if opts.defect is not None:
            if not opts.defect.strip():
                raise UsageError("--defect is empty", "use --defect none for the fixed kernel")
            try:
                parse_defects(opts.defect)
            except ValueError as exc:
                raise UsageError(f"--defect: {exc}", "see `lnrepro run --help`") from None
        data = opts.data
        if opts.seed is not None and "data" not in opts.given:
            data = "random"  # --seed alone asks for seeded random data
        if opts.seed is not None and data != "random":
            raise UsageError(
                f"--seed does not apply with --data {data}", "use --data random, or drop --seed"
            )
        seed = None
        if data == "random":
            seed = opts.seed if opts.seed is not None else secrets.randbelow(2**31)  # recorded
        return EmulatorBackend(opts.kernel_era, opts.arch, opts.defect, opts.block_size,
                               opts.l1_max_tiles, opts.fp32_stats, data, seed)  # fmt: skip
    if opts.chosen == "local":
        from lnrepro.run.backends.binary import BinaryBackend

        if opts.binary is None:
            raise UsageError(
                "--backend local needs --binary PATH",
                "pass the gtest binary, e.g. build/tt-train/tests/ttml_tests",
            )
        return BinaryBackend(opts.binary.resolve())
    return _tt_metal(opts)


def _tt_metal(opts: BackendOptions) -> Backend:
    from lnrepro.run.backends.ttmetal import LocalRunner, Runner, TtMetalBackend
    from lnrepro.run.config import load_config

    home = opts.tt_metal or (
        Path(os.environ["TT_METAL_HOME"]) if os.environ.get("TT_METAL_HOME") else None
    )
    if home is None:
        raise UsageError("no tt-metal checkout given", "pass --tt-metal DIR or set TT_METAL_HOME")
    home = home.resolve()
    if not home.is_dir():
        raise UsageError(
            f"--tt-metal {home} is not a directory", "pass the root of a tt-metal clone"
        )
    cfg = load_config(Path.cwd())
    profile = cfg.get_profile(opts.profile)
    env = dict(cfg.env)
    for item in opts.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--env {item!r} is not KEY=VALUE", "write it as --env NAME=value")
        env[key] = value
    runner: Runner
    if opts.runner == "local":
        if opts.image or opts.mount_set != "full" or opts.require_device:
            raise UsageError(
                "--image, --mount-set and --require-device only apply with --runner docker",
                "add --runner docker, or drop them",
            )
        runner = LocalRunner()
    elif opts.runner == "docker":
        from lnrepro.run.backends.docker import DockerRunner

        runner = DockerRunner.for_host(
            image=opts.image or cfg.image,
            base=cfg.base_image,
            mount_set=opts.mount_set,
            require_device=opts.require_device,
            docker_host=opts.docker_host,
            only_devices=opts.devices,
        )
    else:
        raise UsageError(f"unknown runner {opts.runner!r}", "use docker or local")
    reset = tuple(shlex.split(opts.reset_cmd)) if opts.reset_cmd else None
    return TtMetalBackend(home, profile, runner, tuple(env.items()), reset, opts.watcher)
