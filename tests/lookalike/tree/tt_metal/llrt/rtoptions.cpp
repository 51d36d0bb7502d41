// The runtime's root directory, as tt-metal's tt_metal/llrt/rtoptions.cpp finds it.
//  - Before tt-metal PR #30502 (commit 1446f9ced5; read at 00a21394d9): $TT_METAL_HOME, required.
//  - After it (read in the newest rtoptions.cpp): $TT_METAL_RUNTIME_ROOT, else the working
//    directory if it holds tt_metal/; TT_METAL_HOME is not read. Logs (watcher, dprint) go to
//    $TT_METAL_LOGS_PATH, else the working directory.
#include "tt_metal/llrt/rtoptions.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace tt::llrt {

namespace {
std::string env(const char* name) {
    const char* v = std::getenv(name);
    return (v && *v) ? std::string(v) : std::string();
}
std::string with_slash(std::string p) {
    if (!p.empty() && p.back() != '/') p += '/';
    return p;
}
std::string cwd() {
    char buf[4096];
    return getcwd(buf, sizeof buf) ? std::string(buf) : std::string();
}
bool is_dir(const std::string& p) {
    struct stat st{};
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
}  // namespace

std::string root_dir() {
//@if runtime-root
    if (const std::string r = env("TT_METAL_RUNTIME_ROOT"); !r.empty()) return with_slash(r);
    if (const std::string here = cwd(); !here.empty() && is_dir(here + "/tt_metal")) return with_slash(here);
    return {};
//@else
    return with_slash(env("TT_METAL_HOME"));
//@end
}

std::string logs_dir() {
//@if runtime-root
    if (const std::string l = env("TT_METAL_LOGS_PATH"); !l.empty()) return with_slash(l);
    return with_slash(cwd());
//@else
    return root_dir();
//@end
}

}  // namespace tt::llrt
