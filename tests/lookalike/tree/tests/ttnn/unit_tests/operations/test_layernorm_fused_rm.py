import numpy as np
import pytest

import ttnn
from tests.ttnn.utils_for_testing import assert_with_pcc


@pytest.mark.parametrize("grid", [(8, 8)], ids=["8x8"])
def test_layernorm_fused_rm(device, grid):
    rng = np.random.default_rng(1)
    x = ttnn.operations.normalization.bf16(rng.standard_normal((256, 512), dtype=np.float32))
    out = ttnn.layernorm_fused_rm(device, x, grid=grid)
    mean = x.mean(axis=1, keepdims=True, dtype=np.float64)
    expected = (x - mean) / np.sqrt(x.var(axis=1, keepdims=True, dtype=np.float64) + 1e-5)
    _, pcc = assert_with_pcc(expected, out, 0.999)
    print(f"PCC: {pcc}")
