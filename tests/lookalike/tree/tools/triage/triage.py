#@if triage-framework
#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
Usage:
    triage [--initialize-with-noc1] [--remote-exalens] [--remote-server=<remote-server>] [--remote-port=<remote-port>] [--verbosity=<verbosity>] [--run=<script>]... [--skip-version-check] [--print-script-times] [-v ...] [--disable-colors] [--disable-progress] [--triage-summary-path=<path>]

Options:
    --remote-exalens                 Connect to remote exalens server.
    --remote-server=<remote-server>  Specify the remote server to connect to. [default: localhost]
    --remote-port=<remote-port>      Specify the remote server port. [default: 5555]
    --initialize-with-noc1           Initialize debugger context with NOC1 enabled. [default: False]
    --verbosity=<verbosity>          Choose output verbosity. 1: ERROR, 2: WARN, 3: INFO, 4: VERBOSE, 5: DEBUG. [default: 3]
    --run=<script>                   Run specific script(s) by name. If not provided, all scripts will be run. [default: all]
    --skip-version-check             Do not enforce debugger version check. [default: False]
    --print-script-times             Print the execution time of each script. [default: False]
    -v                               Increase verbosity level (can be repeated: -v, -vv, -vvv).
    --disable-colors                 Disable colored output. [default: False]
    --disable-progress               Disable progress bars. [default: False]
    --triage-summary-path=<path>     Write a triage summary file to the given path (used by CI for hang reports).

Description:
    The look-alike's tt-triage. Its framework follows tenstorrent/tt-metal tools/triage/triage.py
    at 02c321d69d06: every script of this directory with a `script_config` and a `run(args,
    context)` is loaded, ordered by its dependencies and run; each non-provider script prints a
    blank line, `<script>.py:` and its result (`  pass`, `  fail` with indented failures, a table,
    or `  No results found.`). Tables are rich's Table() with its heavy head (rich is not in the
    look-alike's image, so the box is drawn here the way rich draws it); stdout that is not a
    terminal is not wrapped (console width 10000). Instead of tt-exalens and a card, `context` is
    the hung look-alike device's state (generated/lookalike-device/device.json under
    TT_METAL_LOGS_PATH, else the working directory), written by the hung process.

Owner:
    lookalike
"""

import importlib
import json
import os
import sys
import time
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Callable


@dataclass
class ScriptConfig:
    data_provider: bool = False
    disabled: bool = False
    depends: list = field(default_factory=list)


class TTTriageError(Exception):
    pass


def triage_field(serialized_name=None, serializer=None, verbose=0):
    return field(metadata={"recurse": False, "serialized_name": serialized_name,
                           "serializer": serializer or default_serializer, "verbose": verbose})


def recurse_field(verbose=0):
    return field(metadata={"recurse": True, "verbose": verbose})


def default_serializer(value) -> str:
    if value is None:
        return "N/A"
    if isinstance(value, (list, tuple)):
        return ", ".join(default_serializer(v) for v in value)
    return str(value)


def hex_serializer(value) -> str:
    return "N/A" if value is None else hex(value)


def triage_singleton(run_method):
    cache = {}

    def wrapper(args, context):
        key = (id(args), id(context))
        if key not in cache:
            cache[key] = run_method(args, context)
        return cache[key]

    return wrapper


_verbose_level = 0


def set_verbose_level(level: int) -> None:
    global _verbose_level
    _verbose_level = level


FAILURE_CHECKS: list = []
WARNING_CHECKS: list = []


def log_check(success: bool, message: str) -> None:
    if not success:
        FAILURE_CHECKS.append(message)


def log_check_location(location, success: bool, message: str) -> None:
    log_check(success, f"Device {location.device}: {location.block_type} [{location}]: {message}")


def log_check_risc(risc_name: str, location, success: bool, message: str) -> None:
    log_check_location(location, success, f"{risc_name}: {message}")


# ---------------------------------------------------------------------------------- the device
@dataclass(frozen=True)
class Location:
    """A tensix core: tt-exalens's OnChipCoordinate as to_user_str() prints it."""

    device: int
    x: int
    y: int
    noc0: tuple
    block_type: str = "functional_workers"

    def __str__(self) -> str:
        return f"{self.noc0[0]}-{self.noc0[1]} ({self.x},{self.y})"


@dataclass
class Context:
    state: dict
    path: Path

    @property
    def root(self) -> Path:
        for name in ("TT_METAL_RUNTIME_ROOT", "TT_METAL_HOME"):
            if os.environ.get(name):
                return Path(os.environ[name])
        return Path.cwd()


def state_path() -> Path:
    logs = os.environ.get("TT_METAL_LOGS_PATH")
    base = Path(os.path.normpath(logs)) if logs else Path.cwd()
    return base / "generated" / "lookalike-device" / "device.json"


def init_context() -> Context:
    path = state_path()
    try:
        return Context(json.loads(path.read_text(encoding="utf-8")), path)
    except (OSError, ValueError):
        print("No chips detected in the cluster (the look-alike's device state is not at "
              f"{path}: no hung look-alike process wrote it)")
        sys.exit(1)


# ---------------------------------------------------------------------------------- tables
def _cell_lines(text: str) -> list:
    return text.split("\n")


def render_table(header: list, rows: list) -> str:
    """rich.table.Table() as rich prints it: box.HEAVY_HEAD, padding (0, 1), no row lines."""
    cells = [[_cell_lines(c) for c in row] for row in rows]
    widths = [len(h) for h in header]
    for row in cells:
        for i, lines in enumerate(row):
            widths[i] = max(widths[i], *(len(line) for line in lines))
    out = ["┏" + "┳".join("━" * (w + 2) for w in widths) + "┓",
           "┃" + "┃".join(f" {h:<{w}} " for h, w in zip(header, widths)) + "┃",
           "┡" + "╇".join("━" * (w + 2) for w in widths) + "┩"]
    for row in cells:
        height = max(len(lines) for lines in row)
        for k in range(height):
            parts = [f" {(lines[k] if k < len(lines) else ''):<{w}} " for lines, w in zip(row, widths)]
            out.append("│" + "│".join(parts) + "│")
    out.append("└" + "┴".join("─" * (w + 2) for w in widths) + "┘")
    return "\n".join(out)


def _columns(obj, out_header: list, out_row: list) -> None:
    for f in fields(obj):
        meta = f.metadata
        if meta.get("verbose", 0) > _verbose_level:
            continue
        if meta.get("recurse"):
            _columns(getattr(obj, f.name), out_header, out_row)
        elif meta.get("serialized_name"):
            out_header.append(meta["serialized_name"])
            out_row.append(meta["serializer"](getattr(obj, f.name)))


def serialize_result(name: str, result, failed_message=None) -> None:
    global FAILURE_CHECKS, WARNING_CHECKS
    print()
    print(f"{name}:")
    failures, FAILURE_CHECKS = FAILURE_CHECKS, []
    warnings, WARNING_CHECKS = WARNING_CHECKS, []
    if result is None:
        if failures or failed_message:
            print("  fail")
            for f in failures:
                print(f"    {f}")
            if failed_message:
                print(f"    {failed_message}")
        else:
            print("  pass")
            for w in warnings:
                print(f"    {w}")
        return
    for f in failures:
        print(f"  {f}")
    for w in warnings:
        print(f"  {w}")
    if isinstance(result, list) and not result:
        print("  No results found.")
        return
    items = result if isinstance(result, list) else [result]
    if not all(is_dataclass(i) for i in items):
        print(f"  {result}")
        return
    header: list = []
    rows = []
    for item in items:
        h: list = []
        row: list = []
        _columns(item, h, row)
        header = header or h
        rows.append(row)
    print(render_table(header, rows))


# ---------------------------------------------------------------------------------- scripts
@dataclass
class TriageScript:
    name: str
    config: ScriptConfig
    module: Any
    depends: list = field(default_factory=list)
    failed: bool = False
    failure_message: Any = None


def _parse_args(argv: list) -> dict:
    args: dict = {"--run": [], "-v": 0, "--dev": ["in_use"]}
    for a in argv:
        if a.startswith("-v") and set(a[1:]) == {"v"}:
            args["-v"] += len(a) - 1
        elif "=" in a:
            k, v = a.split("=", 1)
            if k in ("--run", "--dev"):
                args[k] = [*(args[k] if args[k] not in (["in_use"],) else []), v]
            else:
                args[k] = v
        else:
            args[a] = True
    return args


class Args:
    def __init__(self, d: dict):
        self.d = d

    def __getitem__(self, key: str):
        return self.d.get(key)


def _order(scripts: dict) -> list:
    done: list = []
    seen: set = set()

    def visit(s):
        if s.name in seen:
            return
        seen.add(s.name)
        for d in s.depends:
            visit(d)
        done.append(s)

    for s in sorted(scripts.values(), key=lambda s: s.name):
        visit(s)
    return done


def main() -> None:
    args = Args(_parse_args(sys.argv[1:]))
    set_verbose_level(args["-v"] or 0)
    here = Path(__file__).resolve().parent
    scripts: dict = {}
    for path in sorted(here.glob("*.py")):
        if path.name == Path(__file__).name:
            continue
        module = importlib.import_module(path.stem)
        config = getattr(module, "script_config", None)
        if config is None or config.disabled:
            continue
        scripts[path.stem] = TriageScript(path.name, config, module)
    for s in scripts.values():
        s.depends = [scripts[d] for d in s.config.depends if d in scripts]
    context = init_context()
    wanted = [r if r.endswith(".py") else f"{r}.py" for r in (args["--run"] or []) if r != "all"]
    summary = []
    for s in _order(scripts):
        if wanted and s.name not in wanted and not s.config.data_provider:
            continue
        if any(d.failed for d in s.depends):
            print(f"{s.name}:")
            print("  Cannot run script due to failed dependencies.")
            s.failed, s.failure_message = True, "Cannot run script due to failed dependencies."
            continue
        try:
            result = s.module.run(args, context)
        except Exception as e:  # noqa: BLE001 - as the real framework: the script failed
            s.failed, s.failure_message, result = True, str(e), None
        if s.config.data_provider:
            if result is None:
                print()
                print(f"{s.name}:")
                print(f"  Data provider script failed: {s.failure_message}")
            continue
        serialize_result(s.name, result, s.failure_message)
        summary.append(f"{s.name}: FAIL - {s.failure_message}" if s.failed else f"{s.name}: pass")
    if args["--triage-summary-path"]:
        p = Path(args["--triage-summary-path"])
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(summary), encoding="utf-8")
        print(f"Triage summary written to {p}")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
#@end
