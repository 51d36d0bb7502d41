#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tt::tt_metal {

struct Device {
    std::vector<std::string> chips;
    std::string arch;
    std::string root;            // the runtime's root (tt_metal/llrt/rtoptions.cpp)
    std::uint32_t llk_flags = 0; // what the JIT read from the LLK headers under the root
};

// Opens the cluster the way tt-metal does: the runtime root, chips, hugepages, the LLK headers.
// On failure it logs the driver-layer message and aborts, as the real runtime's TT_THROW does
// in a test.
Device& open_device();

}  // namespace tt::tt_metal
