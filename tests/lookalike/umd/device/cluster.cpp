#include "device/cluster.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tt::umd {

static std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return (v && *v) ? std::string(v) : fallback;
}

ClusterOptions options_from_env() {
    ClusterOptions o;
    o.device_root = env_or("TT_LOOKALIKE_DEV_ROOT", o.device_root);
    o.proc_mounts = env_or("TT_LOOKALIKE_PROC_MOUNTS", o.proc_mounts);
    o.hugepage_dir = env_or("TT_LOOKALIKE_HUGEPAGE_DIR", o.hugepage_dir);
    return o;
}

std::string check_cluster(const ClusterOptions& opts, std::vector<std::string>& chips) {
    chips.clear();
    if (DIR* d = opendir(opts.device_root.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string name = e->d_name;
            if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
            const std::string path = opts.device_root + "/" + name;
            const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
            if (fd >= 0) {
                close(fd);
                chips.push_back(path);
            }
        }
        closedir(d);
    }
    if (chips.empty()) return "No chips detected in the cluster";
    std::ifstream mounts(opts.proc_mounts);
    std::string line;
    while (std::getline(mounts, line)) {
        std::istringstream fields(line);
        std::string source, target, fstype, mount_opts;
        fields >> source >> target >> fstype >> mount_opts;
        if (fstype == "hugetlbfs" && target == opts.hugepage_dir) return "";
    }
    return "no huge page mount found in /proc/mounts for path: " + opts.hugepage_dir;
}

int host_mem_channels() {
    const std::string v = env_or("TT_LOOKALIKE_HUGEPAGES", "");
    return v.empty() ? kTargetHostMemChannels : std::atoi(v.c_str());
}

}  // namespace tt::umd
