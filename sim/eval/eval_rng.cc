// Random numbers: rng-bit-generator with XLA's own algorithms, bit for bit,
// and rng (uniform, normal), whose bits XLA leaves to the implementation.
//
// rng-bit-generator follows XLA's RngBitGeneratorExpander and its prng
// library (the expansion the CPU and GPU compilers run):
// - the state is u64[]: state[0] is the key; the rest is the counter.
// - rng_three_fry: Threefry-2x32 with 20 rounds on the 64-bit counter
//   state[1] + i, keyed by (lo32(key), hi32(key)). 64-bit outputs are
//   x0 | x1 << 32 of counter state[1] + (row-major index); 32-bit outputs use
//   both words of each counter, split along one dimension (see
//   ThreeFryWordIndex); the counter advances by the number of blocks used.
// - rng_philox: Philox-4x32-10 on a 128-bit counter (state[1] low, state[2]
//   high; a u64[2] state uses the key as the high half), keyed like
//   Threefry; 32-bit outputs take the four words of block j for elements
//   4j..4j+3, 64-bit outputs the pairs (w0 | w1 << 32, w2 | w3 << 32).
// - rng_default is rng_philox (see docs/evaluator.md for why).
// Narrower outputs (8 and 16 bits) are the 32-bit outputs truncated.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <span>
#include <vector>

#include "sim/eval/kernels.h"
#include "sim/value/element_type.h"
#include "sim/value/random.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using hlo::PrimitiveType;
using value::Literal;

/// The seed of rng's streams (docs/evaluator.md): fixed, so that the same
/// program gives the same numbers everywhere.
constexpr uint64_t kRngSeed = 0x7470757369;  // "tpusi"

uint32_t Lo(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t Hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
uint64_t Join(uint32_t lo, uint32_t hi) { return uint64_t{lo} | (uint64_t{hi} << 32); }

uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

/// Threefry-2x32 with 20 rounds (Salmon et al., SC 2011), as XLA's prng
/// library computes it.
std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  // 0x1BD11BDA is Threefry's key-schedule parity constant.
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  for (uint32_t block = 0; block < 5; ++block) {
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = RotateLeft(x[1], kRotations[(block % 2) * 4 + r]);
      x[1] ^= x[0];
    }
    // Key injection after every four rounds: ks[block+1], ks[block+2] and
    // the injection number.
    x[0] += ks[(block + 1) % 3];
    x[1] += ks[(block + 2) % 3] + block + 1;
  }
  return x;
}

/// Where ThreeFry's 32-bit output splits the shape: XLA pairs elements along
/// the first even dimension (else the largest, the first of equal ones);
/// element i of that dimension uses counter block i / 2, word i % 2.
int64_t ThreeFrySplitDim(std::span<const int64_t> dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) return static_cast<int64_t>(i);
  }
  int64_t best = 0;
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] > dims[best]) best = static_cast<int64_t>(i);
  }
  return best;
}

/// Generated random words (before truncation to the element width) and the
/// counter update, for one algorithm.
struct Bits {
  std::vector<uint64_t> words;  // one per element: 32 or 64 significant bits
  std::vector<uint64_t> new_state;
};

Bits ThreeFry(const std::vector<uint64_t>& state, std::span<const int64_t> dims, bool wide) {
  const std::array<uint32_t, 2> key = {Lo(state[0]), Hi(state[0])};
  const uint64_t counter = state[1];
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  Bits bits;
  bits.new_state = state;
  bits.words.resize(static_cast<size_t>(n));
  if (wide) {
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t c = counter + static_cast<uint64_t>(i);
      const auto x = Threefry2x32({Lo(c), Hi(c)}, key);
      bits.words[i] = Join(x[0], x[1]);
    }
    bits.new_state[1] = counter + static_cast<uint64_t>(n);
    return bits;
  }
  if (dims.empty()) {
    bits.words[0] = Threefry2x32({Lo(counter), Hi(counter)}, key)[0];
    bits.new_state[1] = counter + 1;
    return bits;
  }
  // The half shape: the split dimension rounded up to pairs.
  const int64_t split = ThreeFrySplitDim(dims);
  std::vector<int64_t> half(dims.begin(), dims.end());
  half[split] = (dims[split] + 1) / 2;
  const std::vector<int64_t> half_strides = RowMajorStrides(half);
  int64_t half_count = 1;
  for (int64_t d : half) half_count *= d;
  int64_t linear = 0;
  ForEachIndex(dims, [&](std::span<const int64_t> index) {
    int64_t block = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      const int64_t i = static_cast<int64_t>(d) == split ? index[d] / 2 : index[d];
      block += i * half_strides[d];
    }
    const uint64_t c = counter + static_cast<uint64_t>(block);
    bits.words[linear++] = Threefry2x32({Lo(c), Hi(c)}, key)[index[split] % 2];
  });
  bits.new_state[1] = counter + static_cast<uint64_t>(half_count);
  return bits;
}

Bits Philox(const std::vector<uint64_t>& state, int64_t n, bool wide) {
  const std::array<uint32_t, 2> key = {Lo(state[0]), Hi(state[0])};
  const bool long_state = state.size() >= 3;
  const uint64_t low = state[1];
  const uint64_t high = long_state ? state[2] : state[0];
  // 128-bit counter + j, carrying into the high half.
  auto block = [&](uint64_t j) {
    const uint64_t l = low + j;
    const uint64_t h = l < low ? high + 1 : high;
    return value::Philox4x32({Lo(l), Hi(l), Lo(h), Hi(h)}, key);
  };
  Bits bits;
  bits.words.resize(static_cast<size_t>(n));
  const int64_t per_block = wide ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t j = 0; j < blocks; ++j) {
    const auto w = block(static_cast<uint64_t>(j));
    for (int64_t k = 0; k < per_block && j * per_block + k < n; ++k) {
      bits.words[j * per_block + k] = wide ? Join(w[2 * k], w[2 * k + 1]) : w[k];
    }
  }
  const uint64_t new_low = low + static_cast<uint64_t>(blocks);
  bits.new_state = state;
  bits.new_state[1] = new_low;
  if (long_state) bits.new_state[2] = new_low < low ? high + 1 : high;
  return bits;
}

/// Stores the low bits of each word as the element's bit pattern.
void StoreBits(const std::vector<uint64_t>& words, Literal& out) {
  const int64_t size = value::ElementByteSize(out.element_type());
  std::byte* dst = out.mutable_bytes().data();
  for (size_t i = 0; i < words.size(); ++i) {
    std::memcpy(dst + static_cast<int64_t>(i) * size, &words[i], static_cast<size_t>(size));
  }
}

}  // namespace

StatusOr<Literal> EvalRngBitGenerator(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& state_in = *ops[0];
  if (!state_in.shape().IsArray() || state_in.element_type() != PrimitiveType::kU64 ||
      state_in.shape().rank() != 1 || state_in.element_count() < 2) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "the state must be u64[n] with n >= 2 (key and counter)");
  }
  // The usual result is (new state, bits); a bare array result is the bits.
  const bool tuple = inst.shape().IsTuple();
  if (tuple && (inst.shape().tuple_shapes().size() != 2 ||
                !inst.shape().tuple_shapes()[0].Compatible(state_in.shape()))) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "the result must be (state, bits)");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  Literal& data = tuple ? out.mutable_tuple_element(1) : out;
  const int bit_width = hlo::PrimitiveTypeBitWidth(data.element_type());
  if (!data.shape().IsArray() || data.element_type() == PrimitiveType::kPred ||
      hlo::IsComplex(data.element_type()) ||
      (bit_width != 8 && bit_width != 16 && bit_width != 32 && bit_width != 64)) {
    return ctx.Unsupported(inst,
                           "rng-bit-generator output of 8, 16, 32 or 64-bit integers or "
                           "floats only");
  }
  const std::vector<uint64_t> state(state_in.data<uint64_t>().begin(),
                                    state_in.data<uint64_t>().end());
  const std::string_view algorithm = inst.string_attr(hlo::AttrId::kAlgorithm);
  const bool wide = bit_width == 64;
  Bits bits;
  if (algorithm == "rng_three_fry") {
    bits = ThreeFry(state, data.shape().dimensions(), wide);
  } else if (algorithm == "rng_philox" || algorithm == "rng_default" || algorithm.empty()) {
    bits = Philox(state, data.element_count(), wide);
  } else {
    return ctx.Unsupported(inst, "unknown rng algorithm \"" + std::string(algorithm) + "\"");
  }
  StoreBits(bits.words, data);
  if (tuple) {
    auto s = out.mutable_tuple_element(0).data<uint64_t>();
    std::copy(bits.new_state.begin(), bits.new_state.end(), s.begin());
  }
  return out;
}

StatusOr<Literal> EvalRng(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const std::string_view distribution = inst.string_attr(hlo::AttrId::kDistribution);
  const bool uniform = distribution == "rng_uniform";
  if (!uniform && distribution != "rng_normal") {
    return ctx.Unsupported(inst, "unknown distribution \"" + std::string(distribution) + "\"");
  }
  if (ops.size() != 2 || ops[0]->element_count() != 1 || ops[1]->element_count() != 1) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "rng takes two scalar parameters");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  const PrimitiveType type = out.element_type();
  const bool is_float = hlo::IsFloatingPoint(type);
  if (!out.shape().IsArray() || (!is_float && !(uniform && hlo::IsInteger(type)))) {
    return ctx.Unsupported(inst, "rng of this element type (floats, or integers for uniform)");
  }
  // One stream per execution of an rng instruction in this evaluation, so a
  // loop draws new numbers each iteration and a rerun draws the same ones.
  value::Random random(kRngSeed, ctx.NextRngStream());
  const double a = ops[0]->GetAsDouble(0), b = ops[1]->GetAsDouble(0);
  const int64_t n = out.element_count();
  for (int64_t i = 0; i < n; ++i) {
    if (!uniform) {
      out.SetFromDouble(i, a + b * random.Normal());
    } else if (!is_float) {
      const int64_t lo = ScalarAsInt64(*ops[0]), hi = ScalarAsInt64(*ops[1]);
      out.SetFromDouble(i, static_cast<double>(hi > lo ? random.UniformInt(lo, hi - 1) : lo));
    } else if (!(b > a)) {
      out.SetFromDouble(i, a);  // an empty range: XLA leaves it undefined
    } else {
      // a + (b - a) u rounded to the type can reach b; such draws are redrawn
      // so that every value lies in [a, b).
      do {
        out.SetFromDouble(i, a + (b - a) * random.UniformDouble());
      } while (out.GetAsDouble(i) >= b);
    }
  }
  return out;
}

}  // namespace tpusim::eval
