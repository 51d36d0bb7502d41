"""Watcher logs written for these tests in the documented format of each era (our own text: the
cores, kernels, ids and times are made up)."""

from __future__ import annotations

OP = "ttnn/cpp/ttnn/operations/demo_op/device/kernels"
READER = f"{OP}/dataflow/reader_demo_op.cpp"
WRITER = f"{OP}/dataflow/writer_demo_op.cpp"
COMPUTE = f"{OP}/compute/demo_op_compute.cpp"

HEADER = """At 0.104s starting
Legend:
\tComma separated list specifies waypoint for BRISC, NCRISC, TRISC0, TRISC1, TRISC2
\tBRISC is main processor, others are subordinates
\tI=init, W=waiting, R=running, D=done (our wording)

\tk_ids: one kernel id per processor

At 1.250s attach device 0

"""


def newest_line(x: int, y: int, wps: str, rmsg: str, smsg: str, kids: str, h_id: int = 9) -> str:
    return (
        f"Device 0 worker core(x={x:2d},y={y:2d}) virtual(x={x + 1:2d},y={y + 2:2d}): {wps}  "
        f"rmsg:{rmsg} h_id:{h_id:3d} smsg:{smsg} k_ids:{kids}"
    )


KMAP = f"""k_id[  0]: blank
k_id[  7]: {READER}
k_id[  8]: {WRITER}
k_id[  9]: {COMPUTE}
"""
IDS = "  8|  7|  9|  9|  9"
IDLE = ("  GW,   W,   W,   W,   W", "D0D|bnt", "DDDD", "  0|  0|  0|  0|  0")


def newest_dump(
    n: int, seconds: float, cores: list[tuple[str, str, str, str]], done: bool = True
) -> str:
    """A dump of the newest era; ``cores`` as (waypoints, rmsg, smsg, k_ids), laid out 4 wide."""
    lines = ["-----", f"Dump #{n} at {seconds:.3f}s"]
    for i, (wps, rmsg, smsg, kids) in enumerate(cores):
        lines.append(newest_line(i % 4, i // 4, wps, rmsg, smsg, kids))
    lines.append(KMAP.rstrip("\n"))
    if done:
        lines.append(f"Dump #{n} completed at {seconds + 0.004:.3f}s")
    return "\n".join(lines) + "\n"


def newest_log(cores: list[tuple[str, str, str, str]], dumps: int = 2) -> str:
    return HEADER + "".join(newest_dump(i + 1, 2.0 * (i + 1), cores) for i in range(dumps))


STARVED = (" CWFW,   W,CWFW,   K,   K", "D0G|BNT", "DGGG", IDS)  # compute waits, reader done
BLOCKED = ("  NTW,CRBW,   W,   W,   W", "D0G|BNT", "GDDD", IDS)  # reader waits for space; rest done
CYCLE = (" CWFW,CRBW,CWFW,   K,   K", "D0G|BNT", "GGGG", IDS)  # reader full, compute wants more
NOC = (" NWBW,   W,   W,   W,   W", "D0G|BNT", "DDDD", IDS)  # writer in a write barrier
NEVER = ("  NTW,   W,   W,   W,   W", "D0G|BNT", "DGGG", IDS)  # TRISCs told go, still at W
RUNNING = ("  NTW,   W,   K,   K,   K", "D0G|BNT", "DGGG", IDS)  # compute past its last waypoint

# ---------------------------------------------------------------------------- one log per era
ERA_2023 = f"""Dump #12 at 30.517s
Core (x=1,y=1):    CWFW,W,W,W,W rmsg:D0G|BNT smsg:DDDD k_ids:41|40|42
Core (x=2,y=1):    CWFW,W,W,W,W rmsg:D0G|BNT smsg:DDDD k_ids:41|40|42
Core (x=3,y=1):    GW,W,W,W,W rmsg:D0D|BNT smsg:DDDD k_ids:0|0|0
k_id[40]: {READER}
k_id[41]: {WRITER}
k_id[42]: {COMPUTE}
"""

ERA_2024_03 = f"""Dump #3 at 12.002s
Device 0, Core (x=1,y=1):    NSW,CRBW,R,R,R  rmsg:D0G|BNT smsg:GGGG k_ids:1501|1500|1502
Device 0, Core (x=1,y=2):    NSW,CRBW,R,R,R  rmsg:D0G|BNT smsg:GGGG k_ids:1501|1500|1502
k_id[1500]: {READER}
k_id[1501]: {WRITER}
k_id[1502]: {COMPUTE}
"""

ERA_2024_PHYS = f"""At 0.010s starting
Legend:
\tComma separated list specifices waypoint for BRISC,NCRISC,TRISC0,TRISC1,TRISC2
\tnoc lines, rmsg, smsg and k_ids legend lines of that era (paraphrased here)
\tk_ids:<brisc>|<ncrisc>|<trisc>

At 0.480s attach device 0
Dump #1 at 1.490s
Device 0 worker core(x= 0,y= 0) phys(x= 1,y= 1):   GW,   W,   W,   W,   W  rmsg:D1D|BNT smsg:DDDD k_ids:21|20|22
Device 0 worker core(x= 1,y= 0) phys(x= 2,y= 1): CWFW,   W,   R,   R,   R  rmsg:D1G|BNT smsg:DGGG k_ids:21|20|22
Device 0 ethnet core(x= 0,y= 9) phys(x= 9,y= 0):   GW,   X,   X,   X,   X  rmsg:D k_id:0
k_id[0]: blank
k_id[20]: {READER}
k_id[21]: {WRITER}
k_id[22]: {COMPUTE}
"""

ERA_2025_VIRTUAL = f"""-----
Dump #4 at 8.311s
Device 0 worker core(x= 3,y= 2) virtual(x= 4,y= 3): CWFW,   W,   K,   K,CRBW  rmsg:D0G|BNT h_id:5 smsg:DGGG k_ids:61|60|62
Device 0 worker core(x= 4,y= 2) virtual(x= 6,y= 3): CWFW,   W,   K,   K,CRBW  rmsg:D0G|BNT h_id:5 smsg:DGGG k_ids:61|60|62
Device 0 acteth core(x= 0,y= 8) virtual(x=25,y=16):   GW,   W,   X,   X,   X  rmsg:???|?? h_id:  0 smsg:? k_id:  0
k_id[ 60]: {READER}
k_id[ 61]: {WRITER}
k_id[ 62]: {COMPUTE}
Dump #4 completed at 8.320s
"""

ERA_NEWEST = HEADER + newest_dump(1, 3.0, [STARVED, STARVED, IDLE])

NO_WAYPOINTS = f"""-----
Dump #1 at 40.000s
Device 0 worker core(x= 0,y= 0) virtual(x= 1,y= 2): rmsg:D0G|BNT h_id:  4 smsg:GGGG k_ids:  8|  7|  9|  9|  9
{KMAP}Dump #1 completed at 40.002s
"""

ALL_ERAS = {
    "2023": ERA_2023,
    "2024-03": ERA_2024_03,
    "2024-phys": ERA_2024_PHYS,
    "2025-virtual": ERA_2025_VIRTUAL,
    "newest": ERA_NEWEST,
    "no-waypoints": NO_WAYPOINTS,
}
