"""Print numpy.testing failure messages for fixed data, one block per case (separator lines)."""

import numpy as np
from numpy.testing import assert_allclose, assert_array_almost_equal, assert_array_equal


def cases():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.array([[1.0, 2.0], [3.0, 4.01]])
    yield "allclose_2x2", lambda: assert_allclose(b, a, rtol=1e-7)
    big_a = np.zeros(1_000_000, dtype=np.float32)
    big_b = big_a.copy()
    idx = np.arange(0, 154 * 6000, 6000)
    big_b[idx] = 0.125
    big_b[idx[3]] = 0.5
    yield "allclose_154_of_1M", lambda: assert_allclose(big_b, big_a, rtol=1e-5, atol=1e-3)
    # data where max over all elements differs from the max over violations
    x = np.array([1.0, 100.0, 2.0])
    y = np.array([1.5, 100.6, 2.0])
    yield (
        "allclose_violations_only",
        lambda: assert_allclose(x, y, rtol=0.01, atol=0.0, err_msg="layer 3"),
    )
    yield (
        "almost_equal",
        lambda: assert_array_almost_equal(
            np.array([1.0, 2.0001, 3.0]), np.array([1.0, 2.0, 3.01]), decimal=4
        ),
    )
    yield (
        "array_equal",
        lambda: assert_array_equal(
            np.array([[1, 2, 3], [4, 5, 6]]), np.array([[1, 2, 3], [4, 5, 7]])
        ),
    )
    yield (
        "array_equal_many",
        lambda: assert_array_equal(np.arange(20).reshape(4, 5), np.arange(20).reshape(4, 5) * 2),
    )
    yield "allclose_scalar", lambda: assert_allclose(1.0, 1.1, rtol=1e-3)
    yield "allclose_nan", lambda: assert_allclose(np.array([1.0, np.nan]), np.array([1.0, 2.0]))


print("numpy", np.__version__)
for name, fn in cases():
    try:
        fn()
    except AssertionError as exc:
        print(f"==== {name}")
        print(str(exc))
