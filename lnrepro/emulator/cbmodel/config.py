"""The model's numbers (:class:`CbConfig`), read from a JSON or TOML file, and the names it
shows tt-metal's tools (the test, the kernels, the cores' NOC coordinates)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

SUITE = "CbModelTest"
TEST_FILE = "tests/ttnn/unit_tests/gtests/test_cb_model.cpp"
ENV_CONFIG = "LNREPRO_CB_CONFIG"


_OP_DIR = "ttnn/cpp/ttnn/operations/normalization/layernorm_fused_rm/device/kernels"
# Wormhole's NOC0 coordinates of the worker columns and rows (the watcher's "virtual" column).
NOC_X = (1, 2, 3, 4, 6, 7, 8, 9)
NOC_Y = (1, 2, 3, 4, 5, 7, 8, 9, 10, 11)
PREFETCH_KERNEL = "tt_metal/impl/dispatch/kernels/cq_prefetch.cpp"
DISPATCH_KERNEL = "tt_metal/impl/dispatch/kernels/cq_dispatch.cpp"


class ConfigError(Exception):
    """The configuration file cannot be used (the message says why)."""


@dataclass(frozen=True)
class CbConfig:
    """The model's numbers. A look-alike history changes one of them to introduce a hang."""

    op: str = "layernorm_fused_rm"
    test_name: str = "LayerNormFusedRm"
    grid: tuple[int, int] = (8, 8)  # cores running the op: columns, rows
    device_grid: tuple[int, int] = (8, 9)  # the device's worker grid; its last row holds dispatch
    blocks_per_core: int = 4  # tile-row blocks each core processes
    reader_pages_per_block: int = 32  # pages the reader pushes into cb_in per block
    compute_pages_per_block: int = 32  # pages compute waits for (and pops) from cb_in per block
    compute_out_pages_per_block: int = 32  # pages compute pushes into cb_out per block
    writer_pages_per_block: int = 32  # pages the writer waits for (and pops) from cb_out per block
    cb_in_capacity: int = 64  # pages cb_in holds (double-buffered)
    cb_out_capacity: int = 64
    cb_in_id: int = 0
    cb_out_id: int = 16
    reader_kernel: str = f"{_OP_DIR}/dataflow/reader_layernorm_fused_rm.cpp"
    compute_kernel: str = f"{_OP_DIR}/compute/layernorm_fused_rm.cpp"
    writer_kernel: str = f"{_OP_DIR}/dataflow/writer_layernorm_fused_rm.cpp"

    @property
    def cores(self) -> list[tuple[int, int]]:
        """The op's cores in the watcher's order: row by row."""
        return [(x, y) for y in range(self.grid[1]) for x in range(self.grid[0])]


_INT_KEYS = {f.name for f in fields(CbConfig) if f.type in ("int", int)}
_STR_KEYS = {f.name for f in fields(CbConfig) if f.type in ("str", str)}
_PAIR_KEYS = {"grid", "device_grid"}
_KERNEL_KEYS = {"reader": "reader_kernel", "compute": "compute_kernel", "writer": "writer_kernel"}


def config_from(doc: dict[str, Any], source: str = "config") -> CbConfig:
    """A config from a parsed JSON/TOML document (unknown keys are an error, to catch typos)."""
    values: dict[str, Any] = {}
    for key, v in doc.items():
        if key == "kernels" and isinstance(v, dict):
            for role, path in v.items():
                if role not in _KERNEL_KEYS or not isinstance(path, str):
                    raise ConfigError(
                        f"{source}: kernels.{role} should be reader/compute/writer = path"
                    )
                values[_KERNEL_KEYS[role]] = path
        elif key in _INT_KEYS:
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ConfigError(f"{source}: {key} should be a whole number >= 0, not {v!r}")
            values[key] = v
        elif key in _STR_KEYS:
            if not isinstance(v, str) or not v:
                raise ConfigError(f"{source}: {key} should be a non-empty string")
            values[key] = v
        elif key in _PAIR_KEYS:
            if not (
                isinstance(v, list)
                and len(v) == 2
                and all(type(i) is int and 0 < i <= 64 for i in v)
            ):
                raise ConfigError(f"{source}: {key} should be [columns, rows], each 1..64")
            values[key] = (v[0], v[1])
        else:
            raise ConfigError(f"{source}: unknown key {key!r}")
    cfg = replace(CbConfig(), **values)
    (gx, gy), (dx, dy) = cfg.grid, cfg.device_grid
    cfg = replace(cfg, device_grid=(max(gx, dx), max(gy, dy)))  # the device holds the op's grid
    if cfg.device_grid[0] > len(NOC_X) or cfg.device_grid[1] > len(NOC_Y):
        raise ConfigError(f"{source}: the grid is larger than a Wormhole's 8x10 workers")
    return cfg


def load_config(path: Path) -> CbConfig:
    """A config file: TOML when it ends in .toml, else JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    try:
        if path.suffix == ".toml":
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # pragma: no cover - 3.10
                import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
            doc: Any = tomllib.loads(text)
        else:
            doc = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}"
        ) from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path} should hold a table/object of settings")
    return config_from(doc, str(path))
