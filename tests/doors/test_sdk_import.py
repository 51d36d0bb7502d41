"""The Docker SDK as the container door imports it: paramiko (for ssh:// engines, which lnrepro
reaches through the ``ssh`` command) is not loaded until something uses it, and is whole then."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from lnrepro.doors import container
import docker
from docker.transport import SSHHTTPAdapter  # ssh:// is still there
loaded = sorted(m for m in sys.modules if m.startswith("paramiko."))
assert not loaded, loaded
import paramiko
assert paramiko.SSHClient.__module__ == "paramiko.client"
assert type(sys.modules["paramiko"]).__name__ == "module"
from docker.transport import sshconn
assert sshconn.paramiko.RejectPolicy is paramiko.RejectPolicy
print("ok")
"""


def test_paramiko_waits_until_it_is_used() -> None:
    p = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-2000:]
