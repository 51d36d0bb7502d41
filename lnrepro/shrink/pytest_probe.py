"""A ttnn op's pytest as shrink's evaluator: one test file lnrepro ships, patched onto the
checkout (``tests/ttnn/unit_tests/operations/``, beside the test it stands for), that reads its
case from ``$LNREPRO_CASE`` (op, ``h x w``, data kind, PCC threshold), runs ``ttnn.layer_norm``
on it, checks it with the tree's own ``assert_with_pcc`` against the tests' reference, and prints
one line ``lnrepro-probe: margin=<m> pcc=<p>``, where the margin is ``(1 - PCC) / (1 - threshold)``.
Without ``$LNREPRO_CASE`` it is skipped. Each candidate is one ``run --pytest``-style attempt
(:func:`lnrepro.pytests.argv.pytest_argv`) of that node id; a Python file needs no rebuild.

Flavours as :mod:`.emit`'s: ``tt-metal`` is written against
``tests/ttnn/unit_tests/operations/test_layer_norm.py`` as read at tenstorrent/tt-metal
091444369a (``device`` fixture; ``torch.nn.functional.layer_norm(x, normalized_shape=[w])`` as the
reference; ``ttnn.from_torch(..., layout=ttnn.TILE_LAYOUT, device=device)``, ``ttnn.layer_norm``,
``ttnn.to_layout(ROW_MAJOR)``, ``ttnn.from_device``, ``ttnn.to_torch``; ``assert_with_pcc`` from
``tests.ttnn.utils_for_testing``, whose failure message is the PCC's ``str()``);
``lookalike`` against the test look-alike's copy of that file (numpy in place of torch, and
``ttnn.layer_norm(device, x)``).
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lnrepro.errors import UsageError
from lnrepro.model.case import CASE_ENV, Case, DataKind, DataSpec, OpKind, Shape, env_prefixed
from lnrepro.run.backends import Backend
from lnrepro.shrink.checkout import judge, read_margin, run_probe
from lnrepro.shrink.core import Outcome
from lnrepro.shrink.emit import Flavour
from lnrepro.shrink.probe import MARGIN_LINE

READ_AT = "tenstorrent/tt-metal@091444369a"
PATH = "tests/ttnn/unit_tests/operations/test_lnrepro_shrink_probe.py"
NODE = f"{PATH}::test_lnrepro_shrink_probe"

_HEAD = """# SPDX-License-Identifier: Apache-2.0
# lnrepro shrink's probe: one ttnn.layer_norm case per run, read from $LNREPRO_CASE.
# Patched onto the checkout by `lnrepro shrink --tt-metal DIR --pytest ...`; delete it when done.
{read_at}
import json
import os

import pytest
{imports}
from tests.ttnn.utils_for_testing import assert_with_pcc


"""

_BODY = """

def _lnrepro_case():
    text = os.environ.get("LNREPRO_CASE")
    if not text:
        pytest.skip("no case: LNREPRO_CASE is not set (lnrepro shrink sets it)")
    return json.loads(text)


def test_lnrepro_shrink_probe(device):
    case = _lnrepro_case()
    threshold = float(case["pcc"])
{run}
    try:
        _, pcc = assert_with_pcc(expected, output, threshold)
    except AssertionError as e:
        pcc = str(e)
        raise
    finally:
        try:
            margin = max(0.0, 1.0 - float(pcc)) / (1.0 - threshold)
        except (TypeError, ValueError, NameError):
            margin = float("inf")
        print(f"lnrepro-probe: margin={{margin!r}} pcc={{locals().get('pcc')}}", flush=True)
"""

_RUN_LOOKALIKE = """    x = ttnn.operations.normalization.bf16(lnrepro_case_input(case))
    output = ttnn.layer_norm(device, x)
    x64 = np.asarray(x, dtype=np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    expected = (x64 - mean) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)"""

_RUN_TT_METAL = """    w = int(case["features"])
    torch_input_tensor = torch.from_numpy(lnrepro_case_input(case)).to(torch.bfloat16)
    expected = torch.nn.functional.layer_norm(torch_input_tensor, normalized_shape=[w])

    input_tensor = ttnn.from_torch(torch_input_tensor, layout=ttnn.TILE_LAYOUT, device=device)
    output_tensor = ttnn.layer_norm(input_tensor)
    output_tensor = ttnn.to_layout(output_tensor, ttnn.ROW_MAJOR_LAYOUT)
    output_tensor = ttnn.from_device(output_tensor)
    output = ttnn.to_torch(output_tensor)"""


def probe_source(flavour: Flavour) -> str:
    from lnrepro.shrink import ttnn_data

    if flavour is Flavour.LOOKALIKE:
        imports, run, read_at = "import numpy as np\n\nimport ttnn", _RUN_LOOKALIKE, ""
    else:
        imports = "import torch\n\nimport ttnn"
        run, read_at = _RUN_TT_METAL, f"# ttnn's API as test_layer_norm.py uses it at {READ_AT}."
    data = inspect.getsource(ttnn_data.lnrepro_case_input).replace("case: Any) -> Any", "case)")
    head = _HEAD.format(read_at=read_at, imports=imports).replace("\n\n\n\n", "\n\n\n")
    return head + data + _BODY.format(run=run)


# ------------------------------------------------------------------------------ the start
def start_case(checkout: Path, node_id: str, seed: int = 0) -> Case:
    """The pytest test ``node_id`` of ``checkout`` as a case: its ``h``, ``w`` from the node id's
    parameters (named by the test's ``parametrize`` decorators, the nearest first, as pytest
    joins them), its PCC threshold from its ``assert_with_pcc`` call, random data."""
    path_text, _, rest = node_id.partition("::")
    name, _, params = rest.partition("[")
    path = checkout / path_text
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"--pytest {node_id!r}: cannot read {path_text} in {checkout} ({exc.__class__.__name__})",
            "give a node id of a test file in the checkout, as pytest --collect-only -q prints it",
        ) from None
    fn = next(
        (
            n
            for n in ast.walk(_parse(source, node_id))
            if isinstance(n, ast.FunctionDef) and n.name == name
        ),
        None,
    )
    if fn is None:
        raise UsageError(
            f"--pytest {node_id!r}: {path_text} has no test {name!r}", "check the name"
        )
    body = ast.get_source_segment(source, fn) or ""
    if "ttnn.layer_norm(" not in body:
        raise UsageError(
            f"--pytest {node_id!r} does not call ttnn.layer_norm",
            "shrink's pytest probe knows ttnn.layer_norm's tests (e.g. test_layer_norm.py)",
        )
    from lnrepro.pytests.pcc import call_threshold

    threshold = call_threshold(body)
    if threshold is None or not 0.0 < threshold < 1.0:
        raise UsageError(
            f"--pytest {node_id!r}: no literal PCC threshold in its assert_with_pcc call",
            "start from a test that passes its threshold as a number",
        )
    values = _params(fn, params.rstrip("]"))
    if "h" not in values or "w" not in values:
        raise UsageError(
            f"--pytest {node_id!r}: cannot read h and w from its parameters",
            "give a parametrized node id, e.g. test_layer_norm.py::test_layer_norm[64-1024]",
        )
    h, w = values["h"], values["w"]
    data = DataSpec(DataKind.RANDOM, "uniform", seed=seed)
    return Case(Shape(1, h, 1, w), data, (), node_id, op=OpKind.TTNN_LAYER_NORM, pcc=threshold)


def _parse(source: str, node_id: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError:
        raise UsageError(f"--pytest {node_id!r}: its file does not parse", "fix it") from None


def _params(fn: ast.FunctionDef, ids: str) -> dict[str, int]:
    """``{argname: int}`` from a node id's ``[a-b-c]`` and the function's parametrize marks."""
    names: list[str] = []
    for dec in reversed(fn.decorator_list):  # pytest's ids: the nearest decorator first
        if (
            isinstance(dec, ast.Call)
            and ast.unparse(dec.func).endswith("parametrize")
            and dec.args
            and isinstance(dec.args[0], ast.Constant)
            and isinstance(dec.args[0].value, str)
        ):
            names += [n.strip() for n in dec.args[0].value.split(",") if n.strip()]
    parts = ids.split("-") if ids else []
    if len(parts) != len(names):
        return {}
    return {
        n: int(v)
        for n, v in zip(names, parts, strict=True)
        if v.isdigit() and 1 <= int(v) <= 1 << 20
    }


# ------------------------------------------------------------------------------ evaluating
@dataclass
class PytestProbe:
    backend: Backend
    record_dir: Path
    timeout_s: float
    checkout: Path | None = None  # the rerun line runs there (env -C)
    name: str = "checkout-pytest"
    deterministic: bool = False
    runs: int = 0

    def argv(self, n: int = 1) -> list[str]:
        from lnrepro.pytests.argv import pytest_argv

        # -s after the options' --capture=fd: the margin line is printed for a pass too
        report = self.record_dir / f"probe-{n}.xml"
        return pytest_argv([NODE], report, python=self.backend.python(n), extra=("-s",))

    def evaluate(self, case: Case, draw: int) -> Outcome:
        from lnrepro.pytests.argv import ENV_SET

        self.runs += 1
        env = {**ENV_SET, CASE_ENV: case.env_value()}
        res, text = run_probe(
            self.backend, self.argv(self.runs), self.record_dir, self.runs, self.timeout_s, env
        )
        m = re.search(r"pcc=(\S+)", text[text.find(MARGIN_LINE) :])
        return judge(
            res,
            read_margin(text),
            f"PCC {m.group(1)}" if m else "",
            missing=(
                f"the probe {NODE} did not report (pytest exit {res.exit_code})",
                f"check that the checkout's ttnn imports; its output is in {self.record_dir}",
            ),
        )

    def rerun(self, case: Case) -> list[str]:
        from lnrepro.pytests.argv import pytest_argv

        argv = pytest_argv([NODE], "probe.xml", python=self.backend.python(1), extra=("-s",))
        line = env_prefixed(case, argv)
        if self.checkout is not None:  # python -m puts the checkout on sys.path, as tt-metal's
            line[1:1] = ["-C", str(self.checkout)]  # PYTHONPATH=$TT_METAL_HOME does
        return line

    def why(self, smaller: Case, result: Case) -> str | None:
        return None


# ------------------------------------------------------------------------------ the control
def correct_pcc(case: Case) -> float:
    """The PCC a correct ``layer_norm`` reaches on ``case``: bf16 input, float32 statistics per
    row, bf16 output, against the float64 reference (comp_pcc's special cases: equal → 1)."""
    import json

    import numpy as np

    from lnrepro.emulator.kernel import bf16  # round to nearest even, as the device does
    from lnrepro.shrink.ttnn_data import lnrepro_case_input

    x = np.asarray(bf16(lnrepro_case_input(json.loads(case.env_value()))), dtype=np.float32)
    mean = x.mean(axis=1, keepdims=True, dtype=np.float32)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True, dtype=np.float32)
    got = np.asarray(bf16((x - mean) / np.sqrt(var + np.float32(1e-5))), dtype=np.float64)
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(axis=1, keepdims=True)) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
    if np.array_equal(got, want) or (not got.any() and not want.any()):
        return 1.0
    with np.errstate(all="ignore"):
        r = float(np.corrcoef(got.ravel(), want.ravel())[0, 1])
    return 1.0 if math.isnan(r) else r


@dataclass
class LayerNormControl:
    """The correct op's model: passes when it reaches the case's PCC threshold."""

    check: Callable[[Case], float] = correct_pcc

    def passes(self, case: Case, draw: int) -> bool:
        return self.check(case) >= case.pcc
