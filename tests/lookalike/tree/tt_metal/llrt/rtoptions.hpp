#pragma once
#include <string>

namespace tt::llrt {

// Where the runtime finds its source tree (kernels, LLK headers) and where it writes its logs.
// Empty root: not found; the caller reports it and aborts.
std::string root_dir();
std::string logs_dir();

}  // namespace tt::llrt
