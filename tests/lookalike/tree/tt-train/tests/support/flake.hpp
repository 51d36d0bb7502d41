#pragma once
// Flaky modes of the look-alike, for bisect tests: $TT_LOOKALIKE_FLAKE (or the committed
// tests/flake.conf), e.g. "p=0.05,q=0.7,crash=0.02,hang=0.01,infra=0.1,seed=7,state=/tmp/s".
//   p      a test that should pass fails (with the bug's signature unless sig=other)
//   q      a test that should fail does fail (else the bug is masked and it passes)
//   crash  the test aborts (exit 134); hang: it never finishes; infra: a driver-layer error
//   seed, state   draws come from splitmix64(seed, run counter in the state file, test name),
//                 so a sequence of runs repeats exactly; without seed, from the clock.
#include <string>

namespace lookalike::flake {

enum class Fate { Honest, Crash, Hang, Infra };

struct Decision {
    Fate fate = Fate::Honest;
    double u_fail = 1.0;  // compared with p or q once the honest outcome is known
    bool other_signature = false;
    double p = 0.0, q = 1.0;
    bool active = false;
    // Whether the test fails, given whether it honestly should.
    bool fails(bool honest_fail) const {
        if (!active) return honest_fail;
        return honest_fail ? (u_fail < q) : (u_fail < p);
    }
};

// Draws this test's fate; for Crash, Hang and Infra it acts at once and does not return.
Decision decide(const std::string& test_name);

}  // namespace lookalike::flake
