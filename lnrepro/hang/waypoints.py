"""The watcher's waypoints in words: what each code means, the API call that sets it, and
which of them are NOC waits. Read from tt-metal's sources (the files and commits are named
below); :mod:`lnrepro.hang.model` and the readers of watcher logs and tt-triage output use it."""

from __future__ import annotations

# What each waypoint means, in our words. The codes and the calls that set them were read in
# tenstorrent/tt-metal tt_metal/hw/inc/dataflow_api.h at commit
# f5fd36ed6fbae5c382b99efb41b6c6864a26f788: cb_reserve_back sets CRBW/CRBD around its spin,
# cb_wait_front CWFW/CWFD, noc_async_read NARW/NARD, and the NOC command-buffer waits RP<n>W and
# NWPW; the single letters from the legend tt_metal/impl/debug/watcher_server.cpp writes (commit
# 007cf7fd108d9c7468c16b3baa239a7065a45357); the firmware codes (GW/GD, NTW/NTD, K/KD) from
# tt_metal/hw/firmware/src brisc.cc and the kernel wrappers. By the watcher's convention
# (docs/source/tt-metalium/tools/watcher.rst, commit 6cbc3065ab387d1c0a6c0a2af278da42c983aa11) a
# code ending in W is "waiting at the top of a loop", one ending in D "done waiting after it".
WAYPOINT_MEANING: dict[str, str] = {
    "CWFW": "cb_wait_front: waiting for pages the producer has not pushed yet",
    "CWFD": "cb_wait_front returned: the pages it waited for arrived",
    "CRBW": "cb_reserve_back: waiting for free space in a full circular buffer",
    "CRBD": "cb_reserve_back returned: there was space",
    "NSW": "noc_semaphore_wait: waiting for a semaphore to reach a value",
    "NSD": "noc_semaphore_wait returned",
    "NSMW": "noc_semaphore_wait_min: waiting for a semaphore to reach a minimum",
    "NSMD": "noc_semaphore_wait_min returned",
    "NRBW": "noc_async_read_barrier: waiting for NOC reads to complete",
    "NRBD": "noc_async_read_barrier returned",
    "NWBW": "noc_async_write_barrier: waiting for NOC writes to complete",
    "NWBD": "noc_async_write_barrier returned",
    "NARW": "noc_async_read: waiting to issue a NOC read",
    "NARD": "noc_async_read issued",
    "NAWW": "noc_async_write: waiting to issue a NOC write",
    "NABW": "waiting on a NOC atomic barrier",
    "NKFW": "after the kernel: waiting for its NOC transactions to be flushed",
    "NTW": "BRISC's kernel is done; BRISC waits for NCRISC and the TRISCs to finish",
    "NTD": "BRISC saw NCRISC and the TRISCs finish",
    "GW": "idle: waiting for a go message from dispatch",
    "GD": "got the go message",
    "W": "idle: waiting for BRISC to start it (or back there after its kernel)",
    "I": "firmware initialisation",
    "R": "about to enter the kernel",
    "K": "inside the kernel, past its last waypoint",
    "KD": "the kernel returned",
    "D": "done: the kernel returned",
    "X": "written by the host before the firmware started: never ran",
    "UPAW": "unpacker waiting inside unpack (llk_unpack_A)",
    "UPAD": "unpacker finished an unpack",
    "MWDW": "math waiting for a free destination register",
    "MWDD": "math got a destination register",
}

# The code as the API call a kernel developer wrote.
WAYPOINT_CALL: dict[str, str] = {
    "CWFW": "cb_wait_front",
    "CRBW": "cb_reserve_back",
    "NSW": "noc_semaphore_wait",
    "NSMW": "noc_semaphore_wait_min",
    "NRBW": "noc_async_read_barrier",
    "NWBW": "noc_async_write_barrier",
    "NARW": "noc_async_read",
    "NAWW": "noc_async_write",
    "NABW": "a NOC atomic barrier",
    "NKFW": "the post-kernel NOC flush",
}


# The other way: the API call a frame 0 names, to the waypoint it sets while it waits.
CALL_WAYPOINT: dict[str, str] = {c: w for w, c in WAYPOINT_CALL.items() if " " not in c}

# The same two waits on the TRISCs: compute_kernel_api/cb_api.h's cb_wait_front and
# cb_reserve_back call the LLK's llk_wait_tiles and llk_wait_for_free_tiles (tenstorrent/tt-metal
# tt_metal/hw/ckernels/*/metal/llk_io/llk_io_unpack.h and llk_io_pack.h at
# f5fd36ed6fbae5c382b99efb41b6c6864a26f788), which set no waypoint of their own: a frame 0 there
# is the consumer's or the producer's wait all the same.
WAIT_WAYPOINT: dict[str, str] = {
    **CALL_WAYPOINT,
    "llk_wait_tiles": "CWFW",
    "llk_wait_for_free_tiles": "CRBW",
}


def is_noc_wait(waypoint: str | None) -> bool:
    """A NOC wait: a semaphore, a barrier, a transfer being issued or a command buffer being
    ready (``NSW``, ``NRBW``, ``NARW``, ``RP2W``, ``NWPW``…; not BRISC's ``NTW``)."""
    if not waypoint or not waypoint.endswith("W") or len(waypoint) < 3 or waypoint == "NTW":
        return False
    return waypoint[0] == "N" or waypoint.startswith("RP")


def waypoint_meaning(waypoint: str | None) -> str:
    """What a waypoint says, in words ('' for none; a generic sentence for an unknown code)."""
    if not waypoint:
        return ""
    if waypoint in WAYPOINT_MEANING:
        return WAYPOINT_MEANING[waypoint]
    if is_noc_wait(waypoint):
        return "waiting on the NOC (a command buffer, a transfer or a barrier)"
    if waypoint.endswith("W"):
        return (
            'waiting at a waypoint of its own (grep the sources for WAYPOINT("' + waypoint + '"))'
        )
    return 'last passed a waypoint of its own (WAYPOINT("' + waypoint + '"))'
