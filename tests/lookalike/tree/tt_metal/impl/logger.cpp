#include "tt_metal/impl/logger.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace tt::log {
void line(const char* level, const char* component, const std::string& text, const char* where, int lineno) {
    using namespace std::chrono;
    const auto now = system_clock::now();
    const std::time_t secs = system_clock::to_time_t(now);
    const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    localtime_r(&secs, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    std::string file = where;
    const auto slash = file.rfind('/');
    if (slash != std::string::npos) file = file.substr(slash + 1);
    std::printf("%s.%03d | %-8s | %15s | %s (%s:%d)\n", stamp, static_cast<int>(ms), level,
                component, text.c_str(), file.c_str(), lineno);
    std::fflush(stdout);
}
}  // namespace tt::log
