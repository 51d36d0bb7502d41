# comp_pcc as tt-metal's models/common/utility_functions.py has it (read at
# a19b16a / 022e2c5): (passed, value), the value a number; the masked corrcoef's minimum.
import numpy as np


def comp_pcc(golden, calculated, pcc=0.99):
    g = np.asarray(golden, dtype=np.float64)
    c = np.asarray(calculated, dtype=np.float64)
    if np.all(np.isnan(g)) and np.all(np.isnan(c)):
        return True, 1.0
    if np.all(np.isnan(g)) or np.all(np.isnan(c)):
        return False, 0.0
    if np.any(g != 0) != np.any(c != 0):
        return False, 0.0
    g = np.where(np.isfinite(g), g, 0.0)
    c = np.where(np.isfinite(c), c, 0.0)
    if np.array_equal(g, c):
        return True, 1.0
    cal_pcc = np.min(np.ma.corrcoef(np.ma.masked_invalid(g.ravel()), np.ma.masked_invalid(c.ravel())))
    if isinstance(cal_pcc, np.ma.core.MaskedConstant):
        return True, 1.0
    return cal_pcc >= pcc, cal_pcc
