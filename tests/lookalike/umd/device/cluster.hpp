#pragma once
// UMD (look-alike): finds the chips and the host memory the driver needs.
#include <string>
#include <vector>

namespace tt::umd {

struct ClusterOptions {
    std::string device_root = "/dev/tenstorrent";     // TT_LOOKALIKE_DEV_ROOT
    std::string proc_mounts = "/proc/mounts";          // TT_LOOKALIKE_PROC_MOUNTS
    std::string hugepage_dir = "/dev/hugepages-1G";    // TT_LOOKALIKE_HUGEPAGE_DIR
};

ClusterOptions options_from_env();

// Empty when the cluster is usable; else the driver-layer message to print before aborting.
std::string check_cluster(const ClusterOptions& opts, std::vector<std::string>& chips);

// Host memory channels the hugepages allow (TT_LOOKALIKE_HUGEPAGES pages of 1 GiB; default 4,
// the target). Fewer is UMD's warning, not an error: the workload runs, and may fail later.
constexpr int kTargetHostMemChannels = 4;
int host_mem_channels();

}  // namespace tt::umd
