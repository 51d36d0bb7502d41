"""The container door, split by concern: one short module a concern, ``stream`` a few named
steps, every name its callers use still importable from ``lnrepro.doors.container``, and no SDK
loaded by importing it."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

from lnrepro.doors import container

PACKAGE = Path(container.__file__).parent
CONCERNS = {"spec", "engine", "owners", "create", "stream", "wait", "ship"}
# what lnrepro/, tests/ and scripts/ take from the door (grep `container\.` and the imports)
USED = {
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
}


def test_one_short_module_a_concern() -> None:
    assert Path(container.__file__).name == "__init__.py"
    assert {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"} == CONCERNS
    sizes = {p.name: len(p.read_text().splitlines()) for p in PACKAGE.glob("*.py")}
    assert max(sizes.values()) < 400, sizes


def test_stream_is_a_few_named_steps() -> None:
    assert len(inspect.getsource(container.stream).splitlines()) < 60


def test_every_name_its_callers_use_is_still_there() -> None:
    assert set(container.__all__) >= USED
    missing = sorted(n for n in container.__all__ if not hasattr(container, n))
    assert not missing, missing
    # the private state tests reset is the one the door uses, not a copy
    from lnrepro.doors.container import engine, owners

    assert container._swept is owners._swept and container._same_engine is engine._same_engine


def test_importing_the_door_loads_no_sdk() -> None:
    code = (
        "import sys; import lnrepro.doors.container; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('docker', 'requests')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
