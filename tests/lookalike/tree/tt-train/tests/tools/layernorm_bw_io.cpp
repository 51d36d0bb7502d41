// ttml_layernorm_bw_io DIR: runs the device op on DIR/{x,dy,gamma}.f32 (raw float32, shape in
// DIR/shape.txt as "rows features") and writes DIR/{dx,dgamma,dbeta}.f32. For comparing the
// kernel with other models on identical data.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ttml/metal/ops/layernorm_bw/layernorm_bw.hpp"

static std::vector<float> load(const std::string& path, std::size_t n) {
    std::vector<float> v(n);
    std::ifstream f(path, std::ios::binary);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(float)));
    if (!f) throw std::runtime_error("cannot read " + path);
    return v;
}

static void save(const std::string& path, const std::vector<float>& v) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: ttml_layernorm_bw_io DIR\n";
        return 2;
    }
    const std::string dir = argv[1];
    std::uint32_t rows = 0, features = 0;
    std::ifstream(dir + "/shape.txt") >> rows >> features;
    const auto x = load(dir + "/x.f32", static_cast<std::size_t>(rows) * features);
    const auto dy = load(dir + "/dy.f32", static_cast<std::size_t>(rows) * features);
    const auto gamma = load(dir + "/gamma.f32", features);
    const auto out = ttml::metal::layernorm_bw(x, dy, gamma, rows, features);
    save(dir + "/dx.f32", out.dx);
    save(dir + "/dgamma.f32", out.dgamma);
    save(dir + "/dbeta.f32", out.dbeta);
    return 0;
}
