# assert_with_pcc as tt-metal's tests/ttnn/utils_for_testing.py has it (read at cf646dc/019b681):
# a shape check, then comp_pcc; the failure message is only the PCC's str(), default 0.9999.
import numpy as np

from models.common.utility_functions import comp_pcc


def assert_with_pcc(expected, actual, pcc=0.9999):
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert list(expected.shape) == list(actual.shape), (
        f"list(expected.shape)={list(expected.shape)} vs list(actual.shape)={list(actual.shape)}"
    )
    passed, message = comp_pcc(expected, actual, pcc)
    assert passed, str(message)
    return passed, str(message)
