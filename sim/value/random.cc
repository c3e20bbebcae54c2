#include "sim/value/random.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "sim/value/check.h"

namespace tpusim::value {
namespace {

// Philox-4x32 multipliers and Weyl key increments (Salmon et al., table 2).
constexpr uint32_t kMultiplier0 = 0xD2511F53u;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

/// Natural log of a positive normal double, deterministic by construction:
/// x = m * 2^k with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(t) with
/// t = (m - 1) / (m + 1), |t| < 0.172, summed as a fixed odd series in a fixed
/// order. Accurate to a few ulp; what matters is that it is the same
/// everywhere, because Normal()'s golden values depend on every bit.
double DeterministicLog(double x) {
  uint64_t bits = std::bit_cast<uint64_t>(x);
  int k = static_cast<int>(bits >> 52) - 1023;
  bits = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52);  // m in [1, 2)
  double m = std::bit_cast<double>(bits);
  // At sqrt(2) and above, halve m (exactly) to centre it on 1. Written as
  // selects: which side m falls is a coin toss that a branch mispredicts.
  const bool halve = m >= 1.4142135623730951;
  m = halve ? m * 0.5 : m;
  k += halve ? 1 : 0;
  const double t = (m - 1.0) / (m + 1.0);
  const double t2 = t * t;
  // 2 * (t + t^3/3 + ... + t^25/25): the next term is below 2^-60 of t.
  double sum = 0.0;
  for (int n = 25; n >= 3; n -= 2) sum = (sum + 1.0 / n) * t2;
  const double log_m = 2.0 * t * (1.0 + sum);
  // ln 2 split so that k * kLn2High is exact for |k| < 2^11.
  constexpr double kLn2High = 6.93147180369123816490e-01;
  constexpr double kLn2Low = 1.90821492927058770002e-10;
  return k * kLn2High + (log_m + k * kLn2Low);
}

}  // namespace

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t product0 = uint64_t{kMultiplier0} * counter[0];
    const uint64_t product1 = uint64_t{kMultiplier1} * counter[2];
    const auto hi0 = static_cast<uint32_t>(product0 >> 32);
    const auto lo0 = static_cast<uint32_t>(product0);
    const auto hi1 = static_cast<uint32_t>(product1 >> 32);
    const auto lo1 = static_cast<uint32_t>(product1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return counter;
}

Random::Random(uint64_t seed, uint64_t stream)
    : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}, stream_(stream) {}

void Random::Refill() {
  words_ = Philox4x32({static_cast<uint32_t>(block_), static_cast<uint32_t>(block_ >> 32),
                       static_cast<uint32_t>(stream_), static_cast<uint32_t>(stream_ >> 32)},
                      key_);
  ++block_;
  next_word_ = 0;
}

uint32_t Random::NextU32() {
  if (next_word_ == 4) Refill();
  return words_[next_word_++];
}

uint64_t Random::NextU64() {
  const uint64_t low = NextU32();
  return low | (uint64_t{NextU32()} << 32);
}

double Random::UniformDouble() {
  return static_cast<double>(NextU64() >> 11) * 0x1.0p-53;  // exact
}

int64_t Random::UniformInt(int64_t lo, int64_t hi) {
  TPUSIM_VALUE_CHECK(lo <= hi, "UniformInt needs lo <= hi");
  // Unsigned arithmetic: hi - lo can exceed INT64_MAX, and a range of 0 means
  // all 2^64 values.
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range == 0) return static_cast<int64_t>(NextU64());
  const uint64_t incomplete = (0 - range) % range;  // 2^64 mod range
  uint64_t draw;
  do {
    draw = NextU64();
  } while (draw < incomplete);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + draw % range);
}

void Random::PolarPair(double& u, double& v, double& s) {
  do {
    u = 2.0 * UniformDouble() - 1.0;
    v = 2.0 * UniformDouble() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
}

namespace {

/// The polar method's factor for an accepted pair's s. s >= 2^-104 (u and v
/// are multiples of 2^-52), so the log's input is a normal double; sqrt is
/// correctly rounded by IEEE 754.
double PolarFactor(double s) { return std::sqrt(-2.0 * DeterministicLog(s) / s); }

}  // namespace

double Random::Normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  double u, v, s;
  PolarPair(u, v, s);
  const double factor = PolarFactor(s);
  spare_normal_ = v * factor;
  has_spare_normal_ = true;
  return u * factor;
}

void Random::FillNormal(std::span<double> out) {
  size_t next = 0;
  if (!out.empty() && has_spare_normal_) {
    out[next++] = spare_normal_;
    has_spare_normal_ = false;
  }
  // Pairs are drawn in the order Normal() draws them; their factors, the
  // expensive part, are then computed side by side, as independent chains
  // the CPU overlaps, where Normal() waits on one at a time.
  constexpr size_t kBatch = 8;
  while (next < out.size()) {
    const size_t pairs = std::min(kBatch, (out.size() - next + 1) / 2);
    double u[kBatch], v[kBatch], s[kBatch], factor[kBatch];
    for (size_t p = 0; p < pairs; ++p) PolarPair(u[p], v[p], s[p]);
    for (size_t p = 0; p < pairs; ++p) factor[p] = PolarFactor(s[p]);
    for (size_t p = 0; p < pairs; ++p) {
      out[next++] = u[p] * factor[p];
      if (next < out.size()) {
        out[next++] = v[p] * factor[p];
      } else {
        spare_normal_ = v[p] * factor[p];
        has_spare_normal_ = true;
      }
    }
  }
}

}  // namespace tpusim::value
