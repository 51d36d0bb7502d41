#include "support/flake.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "tt_metal/impl/logger.hpp"

namespace lookalike::flake {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

double unit(std::uint64_t& s) {
    s = splitmix64(s);
    return static_cast<double>(s >> 11) / static_cast<double>(1ull << 53);
}

std::map<std::string, std::string> config() {
    std::string text;
    if (const char* e = std::getenv("TT_LOOKALIKE_FLAKE"); e && *e) {
        text = e;
    } else {
        std::ifstream f(TTML_FLAKE_CONF);
        std::getline(f, text);
    }
    std::map<std::string, std::string> kv;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const auto eq = item.find('=');
        if (eq != std::string::npos) kv[item.substr(0, eq)] = item.substr(eq + 1);
    }
    return kv;
}

double num(const std::map<std::string, std::string>& kv, const char* key, double fallback) {
    const auto it = kv.find(key);
    return it == kv.end() ? fallback : std::atof(it->second.c_str());
}

// Run counter kept in a file: the k-th run of a seeded trial always draws the same numbers.
std::uint64_t next_run(const std::string& state) {
    std::uint64_t n = 0;
    {
        std::ifstream in(state);
        in >> n;
    }
    std::ofstream out(state, std::ios::trunc);
    out << (n + 1) << "\n";
    return n;
}

}  // namespace

Decision decide(const std::string& test_name) {
    static const auto kv = config();
    static std::uint64_t run_id = [] {
        const auto it = kv.find("state");
        return it == kv.end() ? 0 : next_run(it->second);
    }();
    Decision d;
    if (kv.empty()) return d;
    d.active = true;
    d.p = num(kv, "p", 0.0);
    d.q = num(kv, "q", 1.0);
    d.other_signature = kv.count("sig") && kv.at("sig") == "other";
    std::uint64_t s;
    if (kv.count("seed")) {
        s = static_cast<std::uint64_t>(std::atoll(kv.at("seed").c_str()));
        s = splitmix64(s ^ splitmix64(run_id));
    } else {
        s = static_cast<std::uint64_t>(
            std::chrono::high_resolution_clock::now().time_since_epoch().count());
    }
    s ^= std::hash<std::string>{}(test_name);
    const double u_crash = unit(s), u_hang = unit(s), u_infra = unit(s);
    d.u_fail = unit(s);
    if (u_infra < num(kv, "infra", 0.0)) {
        TT_LOG_CRITICAL("Failed to pin pages for DMA");
        std::abort();
    }
    if (u_crash < num(kv, "crash", 0.0)) {
        std::fflush(stdout);
        std::abort();
    }
    if (u_hang < num(kv, "hang", 0.0)) {
        std::fflush(stdout);
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(3600));
    }
    return d;
}

}  // namespace lookalike::flake
