#include "tt_metal/impl/jit_cache.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "tt_metal/impl/logger.hpp"

namespace fs = std::filesystem;

namespace tt::tt_metal::jit {

static fs::path cache_root() {
    if (const char* c = std::getenv("TT_METAL_CACHE"); c && *c) return c;
    const char* home = std::getenv("HOME");
    return fs::path(home ? home : "/tmp") / ".cache" / "tt-metal-cache";
}

std::string cached_kernel(const std::string& name, const std::string& built_path) {
    const char* arch = std::getenv("ARCH_NAME");
    const fs::path dir = cache_root() / (arch ? arch : "wormhole_b0") / "kernels" / name;
    const fs::path target = dir / (name + ".so");
    if (fs::exists(target)) {
        TT_LOG_INFO("Metal", "Using cached kernel " + target.string());
        return target.string();
    }
    fs::create_directories(dir);
    const fs::path tmp = dir / (name + ".so.tmp");
    fs::copy_file(built_path, tmp, fs::copy_options::overwrite_existing);
    fs::rename(tmp, target);
    TT_LOG_INFO("Metal", "Compiled kernel " + name + " into " + target.string());
    return target.string();
}

}  // namespace tt::tt_metal::jit
