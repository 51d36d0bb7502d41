"""The environment that changes numbers without a code change: the packages installed in the
test's Python, and the environment variables the numerics libraries read.

Which variables, and why each (each read in its library's source or docs):

* ``NPY_PROMOTION_STATE`` — numpy 1.24-1.26 (``numpy/core/_ufunc_config.py``,
  NEP 50): ``weak`` gives numpy 2's promotion, so one test passes or fails under one numpy;
* ``XLA_FLAGS`` (``--xla_allow_excess_precision`` and others), ``JAX_*`` (``JAX_ENABLE_X64``,
  ``JAX_DEFAULT_MATMUL_PRECISION``);
* ``OMP_NUM_THREADS``, ``MKL_*``, ``OPENBLAS_*``: the reduction order of BLAS and OpenMP loops;
* ``TORCHINDUCTOR_*`` (``TORCHINDUCTOR_EMULATE_PRECISION_CASTS``…), ``TORCH_*``
  (``TORCH_COMPILE_*``, ``TORCH_ALLOW_TF32_CUBLAS_OVERRIDE``), ``TORCHDYNAMO_*``;
* ``CUBLAS_WORKSPACE_CONFIG`` (deterministic cuBLAS), ``NVIDIA_TF32_OVERRIDE``;
* ``TF_ENABLE_ONEDNN_OPTS`` (changes TensorFlow's CPU results), ``TF_DETERMINISTIC_OPS``,
  ``TF_CUDNN_DETERMINISTIC``; ``PYTHONHASHSEED``. (Not every ``TF_*``: terraform's are too.)

The freeze is read by the project's Python itself (``importlib.metadata``, the standard library:
no pip needed there), once per run. Pure apart from :func:`freeze`, which runs that Python.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

# names read exactly, and prefixes: the variables that change a numerics test's numbers
NAMES = (
    "NPY_PROMOTION_STATE",
    "XLA_FLAGS",
    "OMP_NUM_THREADS",
    "CUBLAS_WORKSPACE_CONFIG",
    "NVIDIA_TF32_OVERRIDE",
    "PYTHONHASHSEED",
    "TF_ENABLE_ONEDNN_OPTS",
    "TF_DETERMINISTIC_OPS",
    "TF_CUDNN_DETERMINISTIC",
)
PREFIXES = ("MKL_", "OPENBLAS_", "TORCHINDUCTOR_", "TORCH_", "TORCHDYNAMO_", "JAX_")

# run by the project's Python: its version and every installed distribution, as JSON
FREEZE_SCRIPT = (
    "import importlib.metadata as m, json, platform, sys\n"
    "d = {}\n"
    "for x in m.distributions():\n"
    "    n = x.metadata['Name']\n"
    "    if n: d[n.lower().replace('_', '-')] = x.version\n"
    "print(json.dumps({'python': platform.python_version(), 'executable': sys.executable,"
    " 'packages': dict(sorted(d.items()))}))\n"
)


def numerics_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` that change numbers (see the module's list), sorted by name."""
    return {k: env[k] for k in sorted(env) if k in NAMES or k.startswith(PREFIXES)}


@dataclass(frozen=True, kw_only=True)
class Freeze:
    """A step's Python: its version, its packages (name → version) and the variables."""

    python: str = ""
    executable: str = ""
    packages: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def parse_freeze(text: str, env: Mapping[str, str]) -> Freeze | None:
    """The freeze script's output (its last JSON line), with the variables of ``env``."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("packages"), dict):
            return None
        return Freeze(
            python=str(doc.get("python", "")),
            executable=str(doc.get("executable", "")),
            packages={str(k): str(v) for k, v in doc["packages"].items()},
            env=numerics_env(env),
        )
    return None


def differences(a: Mapping[str, object], b: Mapping[str, object]) -> list[str]:
    """What differs between two runs' environments (:class:`Freeze` documents, as kept in a
    record's fingerprint), one short phrase each: ``numpy 1.26.4 → 2.0.2``, ``+uv 0.9``,
    ``OMP_NUM_THREADS unset → 1``, ``python 3.11.7 → 3.12.1``."""
    out: list[str] = []
    if a.get("python") != b.get("python") and a.get("python") and b.get("python"):
        out.append(f"python {a.get('python')} → {b.get('python')}")
    pa, pb = _strs(a.get("packages")), _strs(b.get("packages"))
    for name in sorted(set(pa) | set(pb)):
        x, y = pa.get(name), pb.get(name)
        if x == y:
            continue
        if x is None:
            out.append(f"+{name} {y}")
        elif y is None:
            out.append(f"-{name} {x}")
        else:
            out.append(f"{name} {x} → {y}")
    ea, eb = _strs(a.get("env")), _strs(b.get("env"))
    for name in sorted(set(ea) | set(eb)):
        x, y = ea.get(name), eb.get(name)
        if x != y:
            out.append(f"{name} {_shown(x)} → {_shown(y)}")
    return out


def _shown(v: str | None) -> str:
    if v is None:
        return "unset"
    return repr(v) if (not v or re.search(r"\s", v)) else v


def _strs(v: object) -> dict[str, str]:
    if not isinstance(v, dict):
        return {}
    return {str(k): str(x) for k, x in v.items()}
