#pragma once
#include <string>

namespace tt::tt_metal::jit {

// Returns the path of the kernel to load. Like tt-metal's JIT build cache, the cache key is
// the kernel's name and arch, not its source: a kernel cached by an earlier checkout is reused
// (stale) until the cache is cleared. Cache root: $TT_METAL_CACHE, else ~/.cache/tt-metal-cache.
std::string cached_kernel(const std::string& name, const std::string& built_path);

}  // namespace tt::tt_metal::jit
