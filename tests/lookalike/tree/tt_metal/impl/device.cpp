#include "tt_metal/impl/device.hpp"

#include <cstdlib>
#include <string>

#include "device/cluster.hpp"
#include "tt_metal/impl/logger.hpp"
#include "tt_metal/jit_build/llk.hpp"
#include "tt_metal/llrt/rtoptions.hpp"

namespace tt::tt_metal {

[[noreturn]] static void fatal(const std::string& text) {
    TT_LOG_CRITICAL(text);
    std::abort();
}

Device& open_device() {
    static Device* device = nullptr;
    if (device) return *device;
    const std::string root = tt::llrt::root_dir();
    if (root.empty()) {
//@if runtime-root
        TT_LOG_CRITICAL("Failed to determine TT-Metal root directory: set TT_METAL_RUNTIME_ROOT or run from the checkout");
        fatal("Root Directory is not set.");
//@else
        fatal("Env var TT_METAL_HOME is not set.");
//@end
    }
    const char* arch = std::getenv("ARCH_NAME");
    auto opts = tt::umd::options_from_env();
    std::vector<std::string> chips;
//@if broken
    const std::string problem = tt::umd::check_cluster(opts, chips, /*retries=*/3);
//@else
    const std::string problem = tt::umd::check_cluster(opts, chips);
//@end
    if (!problem.empty()) fatal(problem);
    if (const int channels = tt::umd::host_mem_channels(); channels < tt::umd::kTargetHostMemChannels) {
        TT_LOG_WARNING("UMD", "NumHostMemChannels: " + std::to_string(channels) +
                                  " used for device_id: 0x401e less than target: " +
                                  std::to_string(tt::umd::kTargetHostMemChannels) +
                                  ". Workload will fail if it exceeds NumHostMemChannels. Increase Number of Hugepages.");
    }
    std::string llk_problem;
    const std::uint32_t llk = jit::llk_flags(root, llk_problem);
    if (!llk_problem.empty()) fatal(llk_problem);
    device = new Device{chips, arch ? arch : "wormhole_b0", root, llk};
    TT_LOG_INFO("Metal", "DPRINT Server attached device 0");
    TT_LOG_INFO("Distributed", "Using auto discovery to generate mesh graph.");
    TT_LOG_INFO("Metal", "Initializing device 0. Program cache is NOT enabled");
    return *device;
}

}  // namespace tt::tt_metal
