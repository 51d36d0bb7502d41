import numpy as np
import pytest

import ttnn
from tests.ttnn.utils_for_testing import assert_with_pcc


def reference(x, eps=1e-5):
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=1, keepdims=True) + eps)


@pytest.mark.parametrize("h, w", [(64, 1024), (128, 2048)])
def test_layer_norm(device, h, w):
    rng = np.random.default_rng(0)
    x = ttnn.operations.normalization.bf16(rng.random((h, w), dtype=np.float32))
    out = ttnn.layer_norm(device, x)
    _, pcc = assert_with_pcc(reference(x), out, 0.9999)
    print(f"PCC: {pcc}")
