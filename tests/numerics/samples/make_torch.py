"""Print torch.testing.assert_close failure messages for fixed data, one block per case."""

import torch
from torch.testing import assert_close


def cases():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = torch.tensor([[1.0, 2.0], [3.0, 4.01]])
    yield "tensors_2x2", lambda: assert_close(b, a)
    big = torch.zeros(10_000_000)
    other = big.clone()
    other[torch.arange(0, 154 * 1000, 1000)] = 0.125
    other[7000] = 0.5
    yield "tensors_154_of_10M", lambda: assert_close(other, big, rtol=1.6e-2, atol=1e-5)
    yield "equal", lambda: assert_close(b, a, rtol=0, atol=0)
    yield "scalars", lambda: assert_close(1.5, 1.0)
    yield "nested_list", lambda: assert_close([a, b], [a, a])
    yield "nested_dict", lambda: assert_close({"w": a, "g": [a, b]}, {"w": a, "g": [a, a]})
    x = torch.tensor([0.1, 0.2, 0.3], dtype=torch.bfloat16)
    yield "bf16", lambda: assert_close(x + 0.01, x)


print("torch", torch.__version__)
for name, fn in cases():
    try:
        fn()
    except AssertionError as exc:
        print(f"==== {name}")
        print(str(exc))
