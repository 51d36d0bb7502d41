#include "tt_metal/impl/device.hpp"

#include <cstdlib>
#include <string>

#include "device/cluster.hpp"
#include "tt_metal/impl/logger.hpp"

namespace tt::tt_metal {

[[noreturn]] static void fatal(const std::string& text) {
    TT_LOG_CRITICAL(text);
    std::abort();
}

Device& open_device() {
    static Device* device = nullptr;
    if (device) return *device;
    const char* home = std::getenv("TT_METAL_HOME");
    if (!home || !*home) fatal("TT_METAL_HOME is not set: the runtime cannot find its root");
    const char* arch = std::getenv("ARCH_NAME");
    auto opts = tt::umd::options_from_env();
    std::vector<std::string> chips;
//@if broken
    const std::string problem = tt::umd::check_cluster(opts, chips, /*retries=*/3);
//@else
    const std::string problem = tt::umd::check_cluster(opts, chips);
//@end
    if (!problem.empty()) fatal(problem);
    device = new Device{chips, arch ? arch : "wormhole_b0"};
    TT_LOG_INFO("Metal", "DPRINT Server attached device 0");
    TT_LOG_INFO("Distributed", "Using auto discovery to generate mesh graph.");
    TT_LOG_INFO("Metal", "Initializing device 0. Program cache is NOT enabled");
    return *device;
}

}  // namespace tt::tt_metal
