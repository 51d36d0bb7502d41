#pragma once
#include <string>
#include <vector>

namespace tt::tt_metal {

struct Device {
    std::vector<std::string> chips;
    std::string arch;
};

// Opens the cluster the way tt-metal does: TT_METAL_HOME, chips, hugepages. On failure it
// logs the driver-layer message and aborts, as the real runtime's TT_THROW does in a test.
Device& open_device();

}  // namespace tt::tt_metal
