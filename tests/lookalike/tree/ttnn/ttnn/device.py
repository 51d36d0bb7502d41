import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Device:
    device_id: int
    root: Path


def runtime_root():
    """TT_METAL_RUNTIME_ROOT, else TT_METAL_HOME, else the checkout this package is in."""
    for name in ("TT_METAL_RUNTIME_ROOT", "TT_METAL_HOME"):
        if os.environ.get(name):
            return Path(os.environ[name])
    return Path(__file__).resolve().parents[2]


def open_device(device_id=0):
    print(f"Device {device_id}: opened (look-alike, no card)", file=sys.stderr)
    return Device(device_id, runtime_root())


def close_device(dev):
    print(f"Device {dev.device_id}: closed", file=sys.stderr)
