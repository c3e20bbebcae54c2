// Seeded random numbers for program inputs, identical on every machine,
// compiler and standard library: Philox-4x32-10 as the bit source, and
// samplers written here with integer operations and IEEE +, -, *, / and sqrt
// only (<random>'s distributions and libm's log differ between
// implementations, so neither is used).
#ifndef TPUSIM_SIM_VALUE_RANDOM_H_
#define TPUSIM_SIM_VALUE_RANDOM_H_

#include <array>
#include <cstdint>
#include <span>

namespace tpusim::value {

/// The Philox-4x32-10 block function (Salmon et al., "Parallel random numbers:
/// as easy as 1, 2, 3", SC 2011): ten rounds over a 128-bit counter with a
/// 64-bit key. Matches the Random123 known-answer vectors.
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

/// A deterministic stream of random values. The seed is the Philox key; the
/// stream number fills the counter's upper half, so streams of one seed never
/// overlap (one per parameter, say); the lower half counts blocks.
class Random {
 public:
  explicit Random(uint64_t seed, uint64_t stream = 0);

  /// The next 32 random bits: the words of each Philox block in order.
  uint32_t NextU32();
  /// Two words, the first in the low half.
  uint64_t NextU64();
  /// Uniform in [0, 1) on the grid of 2^-53.
  double UniformDouble();
  /// Uniform over the integers in [lo, hi] (lo <= hi), without modulo bias:
  /// draws that fall in the incomplete last bucket of 2^64 are redrawn.
  int64_t UniformInt(int64_t lo, int64_t hi);
  /// A standard normal sample by Marsaglia's polar method, which yields two
  /// per accepted pair (the second is returned by the next call). Its log is
  /// our own (see random.cc), so samples are bit-identical everywhere.
  double Normal();

  /// Fills `out` with what as many Normal() calls would return, in order and
  /// bit for bit (a spare left by either is taken by the next), faster.
  void FillNormal(std::span<double> out);

 private:
  void Refill();
  /// Draws uniform pairs (u, v) in (-1, 1)^2 until s = u^2 + v^2 is in (0, 1).
  void PolarPair(double& u, double& v, double& s);

  std::array<uint32_t, 2> key_;
  uint64_t stream_;
  uint64_t block_ = 0;               ///< next counter value
  std::array<uint32_t, 4> words_{};  ///< current block's output
  int next_word_ = 4;                ///< index into words_; 4 means empty
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

}  // namespace tpusim::value

#endif  // TPUSIM_SIM_VALUE_RANDOM_H_
