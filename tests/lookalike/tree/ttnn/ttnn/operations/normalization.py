import dataclasses
import os
import sys

import numpy as np

from ttnn import _cbsim as cb
from ttnn.jit import constants

OPS = "ttnn/cpp/ttnn/operations/normalization"
LAYERNORM = f"{OPS}/layernorm/device/kernels/compute/layernorm.cpp"
FUSED = f"{OPS}/layernorm_fused_rm/device/kernels"


def bf16(x):
    """Round float32 to bfloat16 (nearest even), kept as float32."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def _normalize(x, rows_per_stat, eps):
    x = np.asarray(x, dtype=np.float32)
    h, w = x.shape
    mean = x.mean(axis=1, dtype=np.float32)
    var = ((x - mean[:, None]) ** 2).mean(axis=1, dtype=np.float32)
    # one mean/rstd per `rows_per_stat` rows: the first row of each group speaks for all of them
    pick = (np.arange(h) // rows_per_stat) * rows_per_stat
    mean, rstd = mean[pick], 1.0 / np.sqrt(var[pick] + eps)
    return bf16((x - mean[:, None]) * rstd[:, None])


def layer_norm(device, x, epsilon=1e-5):
    k = constants(device.root, LAYERNORM)
    return _normalize(bf16(x), k["rows_per_stat"], epsilon)


def _config(root, op="layernorm_fused_rm", kernels=FUSED, test_name="LayerNormFusedRm"):
    names = ("reader", "compute", "writer")
    files = {
        "reader": f"{kernels}/dataflow/reader_{op}.cpp",
        "compute": f"{kernels}/compute/{op}.cpp",
        "writer": f"{kernels}/dataflow/writer_{op}.cpp",
    }
    k = {n: constants(root, files[n]) for n in names}
    return cb.CbConfig(
        op=op,
        test_name=test_name,
        reader_pages_per_block=k["reader"]["pages_per_block"],
        compute_pages_per_block=k["compute"]["pages_per_block"],
        compute_out_pages_per_block=k["compute"]["out_pages_per_block"],
        writer_pages_per_block=k["writer"]["pages_per_block"],
        blocks_per_core=k["reader"]["blocks_per_core"],
        reader_kernel=files["reader"],
        compute_kernel=files["compute"],
        writer_kernel=files["writer"],
    )


def _run(cfg, cores):
    """Run the kernels on the cores; a deadlock hangs this process as a hung device would (with
    TT_METAL_WATCHER set, the watcher log is written while it hangs)."""
    env = dict(os.environ)
    outcome = cb.simulate(cfg, cores)
    program = cb.Program(cfg, 1, {(c.x, c.y): c for c in outcome.cores}, cb.kernel_ids(cfg))
    if outcome.deadlocked:
        # the device's state, where this look-alike's tools/tt-triage.py reads it (as the real
        # one reads the card through tt-exalens)
        cb.write_device_state(program, env)
        interval = cb.watcher_interval(env.get("TT_METAL_WATCHER"))
        watcher = cb.Watcher(env, interval, sys.stdout) if interval is not None else None
        if watcher is not None:
            watcher.names(program.ids)
        sys.stdout.flush()
        # with TT_METAL_OPERATION_TIMEOUT_SECONDS, tt-metal gives up waiting, runs the timeout
        # command and throws (a RuntimeError in Python); else the process hangs
        raise RuntimeError(cb.dispatch_timeout(watcher, program, env, sys.stdout))
    return outcome


def layernorm_fused_rm(device, x, grid=(8, 8), epsilon=1e-5):
    cfg = _config(device.root)
    cfg = dataclasses.replace(cfg, grid=grid)
    _run(cfg, cfg.cores)
    return _normalize(bf16(x), 1, epsilon)


def hang_elsewhere():
    """A hang that is not the bug: another op (eltwise) stuck at device open."""
    cfg = cb.CbConfig(
        op="eltwise_binary",
        test_name="EltwiseBinary",
        grid=(2, 1),
        writer_pages_per_block=48,
        reader_kernel="ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/dataflow/reader_binary.cpp",
        compute_kernel="ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/compute/eltwise_binary.cpp",
        writer_kernel="ttnn/cpp/ttnn/operations/eltwise/binary/device/kernels/dataflow/writer_binary.cpp",
    )
    _run(cfg, cfg.cores)
