#include "tt_metal/jit_build/llk.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tt::tt_metal::jit {

std::uint32_t llk_flags(const std::string& root, std::string& problem) {
    const char* arch = std::getenv("ARCH_NAME");
    const std::string header = root + "tt_metal/third_party/tt_llk/tt_llk_" +
                               (arch && *arch ? arch : "wormhole_b0") + "/llk_lib/llk_math_common.h";
    std::ifstream in(header);
    if (!in) {
        problem = "cannot open " + header + ": LLK headers missing (git submodule update --init --recursive)";
        return 0;
    }
    std::uint32_t flags = 0;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string define, name;
        int value = 0;
        if (words >> define >> name >> value && define == "#define" &&
            name == "LLK_ZERO_DST_SKIPS_CLEAR" && value != 0)
            flags |= kLlkZeroDstSkipsClear;
    }
    return flags;
}

}  // namespace tt::tt_metal::jit
