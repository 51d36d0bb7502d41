"""The found case of a ttnn op as a pytest file, to pick onto a checkout.

Two flavours, as :mod:`.emit`'s: ``tt-metal`` in the style of
``tests/ttnn/unit_tests/operations/test_layer_norm.py`` as read at tenstorrent/tt-metal
091444369a (its imports, the ``device`` fixture, ``h``/``w`` through ``pytest.mark.parametrize``,
``torch.nn.functional.layer_norm(x, normalized_shape=[w])`` as the reference, the op through
``ttnn.from_torch(..., layout=ttnn.TILE_LAYOUT, device=device)``/``ttnn.layer_norm``/
``ttnn.to_layout(ROW_MAJOR)``/``ttnn.from_device``/``ttnn.to_torch``, and ``assert_with_pcc``
from ``tests.ttnn.utils_for_testing`` with the threshold of the test it was shrunk from);
``lookalike`` in the style of the test look-alike's copy of that file (numpy in place of torch).
The input is written out for its kind (the same values the probe tested:
:mod:`.ttnn_data`).
"""

from __future__ import annotations

import re
from pathlib import Path

from lnrepro.model.case import Case, DataKind
from lnrepro.model.shrink import ShrinkRequest
from lnrepro.shrink.emit import Flavour, generated_by
from lnrepro.shrink.pytest_probe import READ_AT


def test_name(case: Case) -> str:
    """``test_layer_norm_shrunk_<data kind>_<digest of the case>``: one of its own per case."""
    import hashlib

    kind = re.sub(r"[^a-z0-9]+", "_", case.data.kind.value)
    digest = hashlib.sha256(case.env_value().encode()).hexdigest()[:6]
    return f"test_layer_norm_shrunk_{kind}_{digest}"


def input_expr(case: Case) -> str:
    """A numpy expression of ``h``, ``w`` for the case's input (float32 ``(h, w)``), equal to
    :func:`lnrepro.shrink.ttnn_data.lnrepro_case_input`."""
    d = case.data
    if d.kind is DataKind.CONSTANT:
        return f"np.full((h, w), {d.x!r}, dtype=np.float32)"
    if d.kind is DataKind.FEW_VALUED:
        return (
            "(np.where(np.arange(w)[None, :] % 2 == 1, 1.0, -1.0)"
            " + np.arange(h, dtype=np.float32)[:, None] % 4).astype(np.float32)"
        )
    if d.kind is DataKind.STRUCTURED:
        return (
            "(np.linspace(-1.0, 1.0, w, dtype=np.float32)[None, :]"
            " + np.arange(h, dtype=np.float32)[:, None] / h).astype(np.float32)"
        )
    return f"np.random.default_rng({d.seed}).random((h, w), dtype=np.float32)"


def source(
    case: Case, flavour: Flavour, req: ShrinkRequest | None = None, smaller: str | None = None
) -> str:
    lines = generated_by(case, req, "#", "a ttnn.layer_norm test", smaller)
    lines = [" ".join(ln.splitlines()) for ln in lines]  # a name's newline stays in its comment
    if flavour is Flavour.TT_METAL:
        lines.append(
            f"# In the style of tests/ttnn/unit_tests/operations/test_layer_norm.py at {READ_AT}."
        )
        imports = ["import numpy as np", "import pytest", "", "import torch", "", "import ttnn"]
    else:
        imports = ["import numpy as np", "import pytest", "", "import ttnn"]
    s = case.shape
    lines += [
        "",
        *imports,
        "",
        "from tests.ttnn.utils_for_testing import assert_with_pcc",
        "",
        "",
        f'@pytest.mark.parametrize("h", [{s.seq}])',
        f'@pytest.mark.parametrize("w", [{s.features}])',
        f"def {test_name(case)}(device, h, w):",
        f"    x = {input_expr(case)}",
    ]
    if flavour is Flavour.TT_METAL:
        lines += [
            "    torch_input_tensor = torch.from_numpy(x).to(torch.bfloat16)",
            "    torch_output_tensor = torch.nn.functional.layer_norm("
            "torch_input_tensor, normalized_shape=[w])",
            "",
            "    input_tensor = ttnn.from_torch(torch_input_tensor, layout=ttnn.TILE_LAYOUT, "
            "device=device)",
            "    output_tensor = ttnn.layer_norm(input_tensor)",
            "    output_tensor = ttnn.to_layout(output_tensor, ttnn.ROW_MAJOR_LAYOUT)",
            "    output_tensor = ttnn.from_device(output_tensor)",
            "    output_tensor = ttnn.to_torch(output_tensor)",
            "",
            f"    assert_with_pcc(torch_output_tensor, output_tensor, {case.pcc!r})",
        ]
    else:
        lines += [
            "    x = ttnn.operations.normalization.bf16(x)",
            "    out = ttnn.layer_norm(device, x)",
            "    x64 = np.asarray(x, dtype=np.float64)",
            "    mean = x64.mean(axis=1, keepdims=True)",
            "    expected = (x64 - mean) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)",
            f"    _, pcc = assert_with_pcc(expected, out, {case.pcc!r})",
            '    print(f"PCC: {pcc}")',
        ]
    return "\n".join(lines) + "\n"


def write_source(path: Path, case: Case, req: ShrinkRequest, smaller: str | None = None) -> Path:
    """The pytest file; its path."""
    from lnrepro.shrink.emit import write_text

    return write_text(path, source(case, Flavour(req.source_flavour), req, smaller))
