// Elementwise kernels: unary and binary arithmetic, compare, select, clamp,
// convert, bitcast-convert, reduce-precision.
//
// Numerics: f32 and f64 compute in their own type; f16, bf16 and the f8/f4
// types compute in f32 and round once to the element type. Transcendentals
// come from detmath, never the host libm. Integers compute modulo 2^64 and
// wrap to the element's bit width (s4 and friends included), with XLA's
// results for division by zero, INT_MIN / -1 and out-of-range shifts.
// Complex elements, and the ops between real and complex, are computed in
// eval_complex.cc.
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "sim/det_math/det_math.h"
#include "sim/eval/kernels.h"
#include "sim/value/element_type.h"
#include "sim/value/float_formats.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using value::Literal;
using value::NativeType;

template <typename T>
constexpr bool kIsComplex =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
/// The f16/bf16/f8/f4 raw-bits wrappers.
template <typename T>
constexpr bool kIsNarrowFloat = std::is_class_v<T> && !kIsComplex<T>;
template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsNarrowFloat<T>;

/// The type float elements are computed in: f64 in double, all others in f32.
template <typename T>
using ComputeType = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
ComputeType<T> Load(T v) {
  if constexpr (kIsNarrowFloat<T>) {
    return v.ToFloat();
  } else {
    return v;
  }
}
/// Rounds once from the compute type to the element type.
template <typename T>
T Store(ComputeType<T> c) {
  if constexpr (kIsNarrowFloat<T>) {
    return T::FromFloat(c);
  } else {
    return c;
  }
}

/// Bit width of an integer or pred element type (pred counts as one bit, so
/// its arithmetic wraps to 0 and 1).
template <PrimitiveType kType>
constexpr int IntBits() {
  switch (kType) {
    case PrimitiveType::kPred:
    case PrimitiveType::kS1:
    case PrimitiveType::kU1:
      return 1;
    case PrimitiveType::kS2:
    case PrimitiveType::kU2:
      return 2;
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
      return 4;
    case PrimitiveType::kS8: case PrimitiveType::kS16: case PrimitiveType::kS32:
    case PrimitiveType::kS64: case PrimitiveType::kU8: case PrimitiveType::kU16:
    case PrimitiveType::kU32: case PrimitiveType::kU64: case PrimitiveType::kF16:
    case PrimitiveType::kBF16: case PrimitiveType::kF32: case PrimitiveType::kF64:
    case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3: case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ: case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ: case PrimitiveType::kF8E3M4: case PrimitiveType::kF8E8M0FNU:
    case PrimitiveType::kF4E2M1FN: case PrimitiveType::kC64: case PrimitiveType::kC128:
    case PrimitiveType::kToken: case PrimitiveType::kOpaque:
      return 8 * sizeof(NativeType<kType>);
  }
  return 8 * sizeof(NativeType<kType>);  // unreachable: every PrimitiveType returns above
}
template <PrimitiveType kType>
constexpr int kIntBits = IntBits<kType>();

/// The low kIntBits bits set.
template <PrimitiveType kType>
constexpr uint64_t kIntMask = kIntBits<kType> == 64 ? ~uint64_t{0}
                                                    : ~(~uint64_t{0} << kIntBits<kType>);

/// The element whose low kIntBits bits are `u` (sign-extended for signed types).
template <PrimitiveType kType>
NativeType<kType> FromBits(uint64_t u) {
  using T = NativeType<kType>;
  u &= kIntMask<kType>;
  if constexpr (std::is_signed_v<T> && kIntBits<kType> < 64) {
    if ((u >> (kIntBits<kType> - 1)) & 1) u |= ~kIntMask<kType>;
  }
  return static_cast<T>(u);  // modulo 2^N (C++20)
}
/// An integer element as 64 bits: sign-extended, so arithmetic modulo 2^64
/// then FromBits gives the wrapped result.
template <typename T>
uint64_t ToBits(T v) {
  return static_cast<uint64_t>(
      static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(v));
}

/// The low `bits` bits of `u` as a signed number.
int64_t SignExtend(uint64_t u, int bits) {
  if (bits == 64) return static_cast<int64_t>(u);
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  u &= mask;
  if ((u >> (bits - 1)) & 1) u |= ~mask;
  return static_cast<int64_t>(u);
}

template <typename In, typename Out, typename F>
void Map1(const Literal& a, Literal& out, F f) {
  const auto x = a.data<In>();
  auto o = out.data<Out>();
  for (size_t i = 0; i < o.size(); ++i) o[i] = f(x[i]);
}
/// `out` may be `a` itself (ApplyBinaryInPlace): each element is read before
/// it is written.
template <typename In, typename Out, typename F>
void Map2(const Literal& a, const Literal& b, Literal& out, F f) {
  const In* x = a.data<In>().data();
  const In* y = b.data<In>().data();
  auto o = out.data<Out>();
  for (size_t i = 0; i < o.size(); ++i) o[i] = f(x[i], y[i]);
}

/// XLA's maximum/minimum: NaN propagates (the first NaN operand wins), and
/// +0 is greater than -0.
template <typename C>
C FloatMax(C x, C y) {
  if (x != x) return x;
  if (y != y) return y;
  if (x == y) return std::signbit(x) ? y : x;
  return x > y ? x : y;
}
template <typename C>
C FloatMin(C x, C y) {
  if (x != x) return x;
  if (y != y) return y;
  if (x == y) return std::signbit(x) ? x : y;
  return x < y ? x : y;
}

Status NotForType(HloOpcode op, PrimitiveType type) {
  return InvalidArgument(std::string(hlo::HloOpcodeName(op)) + " is not defined for " +
                         std::string(hlo::PrimitiveTypeName(type)) + " elements");
}
/// The typed kernels below never see complex elements (Dispatch sends them to
/// eval_complex.cc); their complex instantiations return this.
Status ComplexUnsupported() {
  return Internal("complex elements must go through the complex kernel (eval_complex.cc)");
}

// --- binary ------------------------------------------------------------------

template <PrimitiveType kType>
Status FloatBinary(BinaryArith op, const Literal& a, const Literal& b, Literal& out) {
  using T = NativeType<kType>;
  using C = ComputeType<T>;
  auto run = [&](auto f) {
    Map2<T, T>(a, b, out, [&](T x, T y) { return Store<T>(f(Load(x), Load(y))); });
    return Status::Ok();
  };
  switch (op) {
    case BinaryArith::kAdd:
      return run([](C x, C y) { return x + y; });
    case BinaryArith::kSubtract:
      return run([](C x, C y) { return x - y; });
    case BinaryArith::kMultiply:
      return run([](C x, C y) { return x * y; });
    case BinaryArith::kDivide:
      return run([](C x, C y) { return x / y; });
    // fmod is exact (IEEE remainder toward zero), so every libm agrees.
    case BinaryArith::kRemainder:
      return run([](C x, C y) { return std::fmod(x, y); });
    case BinaryArith::kMaximum:
      return run(FloatMax<C>);
    case BinaryArith::kMinimum:
      return run(FloatMin<C>);
    case BinaryArith::kPower:
      return run([](C x, C y) { return detmath::Pow(x, y); });
    case BinaryArith::kAtan2:
      return run([](C x, C y) { return detmath::Atan2(x, y); });
    case BinaryArith::kAnd:
    case BinaryArith::kOr:
    case BinaryArith::kXor:
    case BinaryArith::kShiftLeft:
    case BinaryArith::kShiftRightLogical:
    case BinaryArith::kShiftRightArithmetic:
    case BinaryArith::kMulhi:
      return NotForType(OpcodeOf(op), kType);
  }
  return NotForType(OpcodeOf(op), kType);  // unreachable: every BinaryArith returns above
}

/// x^y by squaring, modulo 2^64.
uint64_t IntPow(uint64_t base, uint64_t exponent) {
  uint64_t result = 1;
  while (exponent != 0) {
    if (exponent & 1) result *= base;
    base *= base;
    exponent >>= 1;
  }
  return result;
}

template <PrimitiveType kType>
Status IntBinary(BinaryArith op, const Literal& a, const Literal& b, Literal& out) {
  using T = NativeType<kType>;
  constexpr bool kSigned = std::is_signed_v<T>;
  constexpr int kBits = kIntBits<kType>;
  auto run = [&](auto f) {
    Map2<T, T>(a, b, out, [&](T x, T y) { return FromBits<kType>(f(ToBits(x), ToBits(y))); });
    return Status::Ok();
  };
  // Signed views of the sign-extended bits.
  auto s = [](uint64_t u) { return static_cast<int64_t>(u); };
  switch (op) {
    case BinaryArith::kAdd:
      return run([](uint64_t x, uint64_t y) { return x + y; });
    case BinaryArith::kSubtract:
      return run([](uint64_t x, uint64_t y) { return x - y; });
    case BinaryArith::kMultiply:
      return run([](uint64_t x, uint64_t y) { return x * y; });
    case BinaryArith::kDivide:
      // XLA: x / 0 is all ones (-1 signed, the maximum unsigned); INT_MIN / -1
      // is INT_MIN (the wrapped negation).
      return run([&](uint64_t x, uint64_t y) -> uint64_t {
        if (y == 0) return ~uint64_t{0};
        if constexpr (kSigned) {
          if (s(y) == -1) return uint64_t{0} - x;
          return static_cast<uint64_t>(s(x) / s(y));
        } else {
          return x / y;
        }
      });
    case BinaryArith::kRemainder:
      // XLA: x % 0 is x; INT_MIN % -1 is 0. The sign follows the dividend.
      return run([&](uint64_t x, uint64_t y) -> uint64_t {
        if (y == 0) return x;
        if constexpr (kSigned) {
          if (s(y) == -1) return 0;
          return static_cast<uint64_t>(s(x) % s(y));
        } else {
          return x % y;
        }
      });
    case BinaryArith::kMaximum:
      return run([&](uint64_t x, uint64_t y) {
        if constexpr (kSigned) return s(x) > s(y) ? x : y;
        return x > y ? x : y;
      });
    case BinaryArith::kMinimum:
      return run([&](uint64_t x, uint64_t y) {
        if constexpr (kSigned) return s(x) < s(y) ? x : y;
        return x < y ? x : y;
      });
    case BinaryArith::kAnd:
      return run([](uint64_t x, uint64_t y) { return x & y; });
    case BinaryArith::kOr:
      return run([](uint64_t x, uint64_t y) { return x | y; });
    case BinaryArith::kXor:
      return run([](uint64_t x, uint64_t y) { return x ^ y; });
    case BinaryArith::kPower:
      // XLA's evaluator: 1^y = x^0 = 1; a negative exponent gives 0 otherwise.
      return run([&](uint64_t x, uint64_t y) -> uint64_t {
        if ((x & kIntMask<kType>) == 1 || y == 0) return 1;
        if constexpr (kSigned) {
          if (s(y) < 0) return 0;
        }
        return IntPow(x, y);
      });
    // The high half of the product at twice the width.
    case BinaryArith::kMulhi:
      return run([&](uint64_t x, uint64_t y) -> uint64_t {
        if constexpr (kSigned) {
          return static_cast<uint64_t>((static_cast<__int128>(s(x)) * s(y)) >> kBits);
        } else {
          const unsigned __int128 product =
              static_cast<unsigned __int128>(x & kIntMask<kType>) * (y & kIntMask<kType>);
          return static_cast<uint64_t>(product >> kBits);
        }
      });
    // Shift amounts are read as unsigned: one at least the bit width (a
    // negative one included) shifts every bit out, which XLA defines as 0,
    // or all sign bits for the arithmetic right shift.
    case BinaryArith::kShiftLeft:
      return run([](uint64_t x, uint64_t y) {
        const uint64_t amount = y & kIntMask<kType>;
        return amount >= kBits ? 0 : x << amount;
      });
    case BinaryArith::kShiftRightLogical:
      return run([](uint64_t x, uint64_t y) {
        const uint64_t amount = y & kIntMask<kType>;
        return amount >= kBits ? 0 : (x & kIntMask<kType>) >> amount;
      });
    case BinaryArith::kShiftRightArithmetic:
      return run([&](uint64_t x, uint64_t y) {
        const uint64_t amount = y & kIntMask<kType>;
        // The element's top bit is its sign, for unsigned types too; the
        // 64-bit shift of the sign-extended value fills with it.
        const int64_t sx = SignExtend(x, kBits);
        return static_cast<uint64_t>(amount >= kBits ? (sx < 0 ? -1 : 0) : sx >> amount);
      });
    case BinaryArith::kAtan2:
      return NotForType(OpcodeOf(op), kType);
  }
  return NotForType(OpcodeOf(op), kType);  // unreachable: every BinaryArith returns above
}

Status Binary(BinaryArith op, const Literal& a, const Literal& b, Literal& out) {
  return value::VisitArrayType(a.element_type(), [&](auto tag) -> Status {
    constexpr PrimitiveType kType = decltype(tag)::value;
    using T = NativeType<kType>;
    if constexpr (kIsComplex<T>) {
      return ComplexBinary(op, a, b, out);
    } else if constexpr (kIsFloat<T>) {
      return FloatBinary<kType>(op, a, b, out);
    } else {
      return IntBinary<kType>(op, a, b, out);
    }
  });
}

// --- compare -----------------------------------------------------------------

enum class Direction : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

StatusOr<Direction> ParseDirection(std::string_view text) {
  if (text == "EQ") return Direction::kEq;
  if (text == "NE") return Direction::kNe;
  if (text == "LT") return Direction::kLt;
  if (text == "LE") return Direction::kLe;
  if (text == "GT") return Direction::kGt;
  if (text == "GE") return Direction::kGe;
  return InvalidArgument("unknown comparison direction '" + std::string(text) + "'");
}

/// IEEE comparison for floats (a NaN makes every direction but NE false),
/// plain comparison for integer views.
template <typename K>
bool Compare(Direction d, K x, K y) {
  switch (d) {
    case Direction::kEq:
      return x == y;
    case Direction::kNe:
      return x != y;
    case Direction::kLt:
      return x < y;
    case Direction::kLe:
      return x <= y;
    case Direction::kGt:
      return x > y;
    case Direction::kGe:
      return x >= y;
  }
  return false;
}

/// A signed integer whose order is IEEE totalOrder: -NaN < -inf < ... < -0 <
/// +0 < ... < +inf < +NaN. Narrow floats go through f32, whose conversion
/// keeps sign and payload order.
template <typename C>
auto TotalOrderKey(C x) {
  using Int = std::conditional_t<sizeof(C) == 8, int64_t, int32_t>;
  const Int bits = std::bit_cast<Int>(x);
  return bits ^ static_cast<Int>((bits >> (8 * sizeof(Int) - 1)) & std::numeric_limits<Int>::max());
}

Status CompareKernel(const HloInstruction& inst, const Literal& a, const Literal& b, Literal& out) {
  TPUSIM_ASSIGN_OR_RETURN(Direction d, ParseDirection(inst.string_attr(hlo::AttrId::kDirection)));
  const bool total_order = inst.string_attr(hlo::AttrId::kComparisonType) == "TOTALORDER";
  return value::VisitArrayType(a.element_type(), [&](auto tag) -> Status {
    constexpr PrimitiveType kType = decltype(tag)::value;
    using T = NativeType<kType>;
    if constexpr (kIsComplex<T>) {
      return ComplexUnsupported();
    } else if constexpr (kIsFloat<T>) {
      if (total_order) {
        Map2<T, uint8_t>(a, b, out, [&](T x, T y) {
          return Compare(d, TotalOrderKey(Load(x)), TotalOrderKey(Load(y)));
        });
      } else {
        Map2<T, uint8_t>(a, b, out, [&](T x, T y) { return Compare(d, Load(x), Load(y)); });
      }
      return Status::Ok();
    } else {
      // Integers compare by their own signedness (the type= attribute of an
      // integer compare always matches it).
      Map2<T, uint8_t>(a, b, out, [&](T x, T y) { return Compare(d, x, y); });
      return Status::Ok();
    }
  });
}

// --- unary -------------------------------------------------------------------

template <PrimitiveType kType>
Status FloatUnary(UnaryArith op, const Literal& a, Literal& out) {
  using T = NativeType<kType>;
  using C = ComputeType<T>;
  auto run = [&](auto f) {
    Map1<T, T>(a, out, [&](T x) { return Store<T>(f(Load(x))); });
    return Status::Ok();
  };
  switch (op) {
    case UnaryArith::kAbs:
      return run([](C x) { return std::fabs(x); });
    case UnaryArith::kNegate:
      return run([](C x) { return -x; });
    // sign keeps ±0 and NaN.
    case UnaryArith::kSign:
      return run([](C x) { return x > 0 ? C{1} : x < 0 ? C{-1} : x; });
    case UnaryArith::kFloor:
      return run([](C x) { return detmath::Floor(x); });
    case UnaryArith::kCeil:
      return run([](C x) { return detmath::Ceil(x); });
    case UnaryArith::kRoundNearestAfz:
      return run([](C x) { return detmath::RoundNearestAfz(x); });
    case UnaryArith::kRoundNearestEven:
      return run([](C x) { return detmath::RoundNearestEven(x); });
    case UnaryArith::kSqrt:
      return run([](C x) { return detmath::Sqrt(x); });
    case UnaryArith::kRsqrt:
      return run([](C x) { return detmath::Rsqrt(x); });
    case UnaryArith::kCbrt:
      return run([](C x) { return detmath::Cbrt(x); });
    case UnaryArith::kExp:
      return run([](C x) { return detmath::Exp(x); });
    case UnaryArith::kExpm1:
      return run([](C x) { return detmath::Expm1(x); });
    case UnaryArith::kLog:
      return run([](C x) { return detmath::Log(x); });
    case UnaryArith::kLog1p:
      return run([](C x) { return detmath::Log1p(x); });
    case UnaryArith::kLogistic:
      return run([](C x) { return detmath::Logistic(x); });
    case UnaryArith::kTanh:
      return run([](C x) { return detmath::Tanh(x); });
    case UnaryArith::kSin:
      return run([](C x) { return detmath::Sin(x); });
    case UnaryArith::kCos:
      return run([](C x) { return detmath::Cos(x); });
    case UnaryArith::kTan:
      return run([](C x) { return detmath::Tan(x); });
    case UnaryArith::kAtan:
      return run([](C x) { return detmath::Atan(x); });
    case UnaryArith::kAsin:
      return run([](C x) { return detmath::Asin(x); });
    case UnaryArith::kAcos:
      return run([](C x) { return detmath::Acos(x); });
    case UnaryArith::kSinh:
      return run([](C x) { return detmath::Sinh(x); });
    case UnaryArith::kCosh:
      return run([](C x) { return detmath::Cosh(x); });
    case UnaryArith::kAsinh:
      return run([](C x) { return detmath::Asinh(x); });
    case UnaryArith::kAcosh:
      return run([](C x) { return detmath::Acosh(x); });
    case UnaryArith::kAtanh:
      return run([](C x) { return detmath::Atanh(x); });
    case UnaryArith::kErf:
      return run([](C x) { return detmath::Erf(x); });
    case UnaryArith::kNot:
    case UnaryArith::kPopulationCount:
    case UnaryArith::kClz:
      return NotForType(OpcodeOf(op), kType);
  }
  return NotForType(OpcodeOf(op), kType);  // unreachable: every UnaryArith returns above
}

template <PrimitiveType kType>
Status IntUnary(UnaryArith op, const Literal& a, Literal& out) {
  using T = NativeType<kType>;
  constexpr int kBits = kIntBits<kType>;
  auto run = [&](auto f) {
    Map1<T, T>(a, out, [&](T x) { return FromBits<kType>(f(ToBits(x))); });
    return Status::Ok();
  };
  switch (op) {
    // abs and negate wrap: abs(INT_MIN) = INT_MIN, as two's complement does.
    case UnaryArith::kAbs:
      return run([](uint64_t x) {
        return std::is_signed_v<T> && static_cast<int64_t>(x) < 0 ? uint64_t{0} - x : x;
      });
    case UnaryArith::kNegate:
      return run([](uint64_t x) { return uint64_t{0} - x; });
    case UnaryArith::kSign:
      return run([](uint64_t x) -> uint64_t {
        if (x == 0) return 0;
        return std::is_signed_v<T> && static_cast<int64_t>(x) < 0 ? ~uint64_t{0} : 1;
      });
    case UnaryArith::kNot:
      return run([](uint64_t x) { return ~x; });
    case UnaryArith::kPopulationCount:
      return run(
          [](uint64_t x) { return static_cast<uint64_t>(std::popcount(x & kIntMask<kType>)); });
    case UnaryArith::kClz:
      return run([](uint64_t x) {
        return static_cast<uint64_t>(std::countl_zero(x & kIntMask<kType>) - (64 - kBits));
      });
    case UnaryArith::kFloor:
    case UnaryArith::kCeil:
    case UnaryArith::kRoundNearestAfz:
    case UnaryArith::kRoundNearestEven:
    case UnaryArith::kSqrt:
    case UnaryArith::kRsqrt:
    case UnaryArith::kCbrt:
    case UnaryArith::kExp:
    case UnaryArith::kExpm1:
    case UnaryArith::kLog:
    case UnaryArith::kLog1p:
    case UnaryArith::kLogistic:
    case UnaryArith::kTanh:
    case UnaryArith::kSin:
    case UnaryArith::kCos:
    case UnaryArith::kTan:
    case UnaryArith::kAtan:
    case UnaryArith::kAsin:
    case UnaryArith::kAcos:
    case UnaryArith::kSinh:
    case UnaryArith::kCosh:
    case UnaryArith::kAsinh:
    case UnaryArith::kAcosh:
    case UnaryArith::kAtanh:
    case UnaryArith::kErf:
      return NotForType(OpcodeOf(op), kType);
  }
  return NotForType(OpcodeOf(op), kType);  // unreachable: every UnaryArith returns above
}

Status Unary(UnaryArith op, const Literal& a, Literal& out) {
  return value::VisitArrayType(a.element_type(), [&](auto tag) -> Status {
    constexpr PrimitiveType kType = decltype(tag)::value;
    using T = NativeType<kType>;
    if constexpr (kIsComplex<T>) {
      return ComplexUnsupported();
    } else if constexpr (kIsFloat<T>) {
      return FloatUnary<kType>(op, a, out);
    } else {
      return IntUnary<kType>(op, a, out);
    }
  });
}

/// is-finite of a float array (Dispatch refuses other element types).
void IsFiniteKernel(const Literal& a, Literal& out) {
  value::VisitArrayType(a.element_type(), [&](auto tag) {
    using T = NativeType<decltype(tag)::value>;
    if constexpr (kIsFloat<T>) {
      Map1<T, uint8_t>(a, out, [](T x) { return std::isfinite(Load(x)) ? 1 : 0; });
    }
  });
}

// --- reduce-precision --------------------------------------------------------

/// XLA's reduce-precision on the bits of a float or double: round the
/// mantissa to `mantissa_bits` (nearest, ties to even), then flush values
/// outside the reduced exponent range to ±inf or ±0. NaN stays NaN when any
/// mantissa bit is kept.
template <typename C>
C ReducePrecision(C x, int64_t exponent_bits, int64_t mantissa_bits) {
  using U = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
  constexpr int kMantissa = sizeof(C) == 8 ? 52 : 23;
  constexpr int kExponent = sizeof(C) == 8 ? 11 : 8;
  constexpr U kSign = U{1} << (kMantissa + kExponent);
  constexpr U kExponentMask = ((U{1} << kExponent) - 1) << kMantissa;
  U bits = std::bit_cast<U>(x);
  if (mantissa_bits < kMantissa) {
    const U last_bit_mask = U{1} << (kMantissa - mantissa_bits);
    const U base_bias = (last_bit_mask >> 1) - 1;
    const U last_bit = (bits & last_bit_mask) >> (kMantissa - mantissa_bits);
    bits = (bits + last_bit + base_bias) & ~(last_bit_mask - 1);
  }
  if (exponent_bits < kExponent) {
    const U sign = bits & kSign;
    const U exponent = bits & kExponentMask;
    const int64_t bias = (int64_t{1} << (kExponent - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (exponent_bits - 1)) - 1;
    const U max_exponent = static_cast<U>(bias + reduced_bias) << kMantissa;
    const U min_exponent = static_cast<U>(bias - reduced_bias) << kMantissa;
    if (exponent > max_exponent) {
      bits = sign | kExponentMask;  // infinity
    } else if (exponent <= min_exponent) {
      bits = sign;  // zero
    }
  }
  if (x != x && mantissa_bits > 0) return x;
  return std::bit_cast<C>(bits);
}

Status ReducePrecisionKernel(const HloInstruction& inst, const Literal& a, Literal& out) {
  const int64_t exponent_bits = inst.int_attr(hlo::AttrId::kExponentBits).value_or(-1);
  const int64_t mantissa_bits = inst.int_attr(hlo::AttrId::kMantissaBits).value_or(-1);
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return InvalidArgument("needs exponent_bits >= 1 and mantissa_bits >= 0");
  }
  return value::VisitArrayType(a.element_type(), [&](auto tag) -> Status {
    constexpr PrimitiveType kType = decltype(tag)::value;
    using T = NativeType<kType>;
    if constexpr (kIsFloat<T>) {
      Map1<T, T>(a, out, [&](T x) {
        return Store<T>(ReducePrecision(Load(x), exponent_bits, mantissa_bits));
      });
      return Status::Ok();
    } else {
      return NotForType(HloOpcode::kReducePrecision, kType);
    }
  });
}

// --- convert and bitcast-convert ---------------------------------------------

/// `m` as a double rounded to odd (the last kept bit ORs in every dropped
/// bit). Rounding that once more to a format of at most 51 significant bits
/// gives the correctly rounded result, which plain int-to-double-to-bf16
/// would not (a double rounding could land on a bf16 tie).
double RoundToOddDouble(uint64_t m) {
  if (m < (uint64_t{1} << 53)) return static_cast<double>(m);
  const int drop = 64 - std::countl_zero(m) - 53;
  uint64_t keep = m >> drop;
  if (m & ((uint64_t{1} << drop) - 1)) keep |= 1;
  return static_cast<double>(keep) * static_cast<double>(uint64_t{1} << drop);  // exact
}

/// XLA convert: floats round once to nearest even; float to integer
/// truncates, saturates and maps NaN to 0; integer to integer wraps; anything
/// to pred is `!= 0`.
Status ConvertKernel(const Literal& in, Literal& out) {
  if (hlo::IsComplex(in.element_type()) || hlo::IsComplex(out.element_type())) {
    return ComplexUnsupported();
  }
  const int64_t n = out.element_count();
  if (hlo::IsFloatingPoint(in.element_type())) {
    return value::VisitArrayType(out.element_type(), [&](auto tag) -> Status {
      using T = NativeType<decltype(tag)::value>;
      auto o = out.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        const double x = in.GetAsDouble(i);  // exact for every float type
        if constexpr (kIsNarrowFloat<T>) {
          o[i] = T::FromDouble(x);
        } else if constexpr (std::is_floating_point_v<T>) {
          o[i] = static_cast<T>(x);
        } else {
          out.SetFromDouble(i, x);  // the saturating float-to-integer rule
        }
      }
      return Status::Ok();
    });
  }
  // An integer or pred source, read as sign-extended 64 bits.
  std::vector<uint64_t> bits(static_cast<size_t>(n));
  const bool is_signed = hlo::IsSignedInt(in.element_type());
  value::VisitArrayType(in.element_type(), [&](auto tag) {
    using T = NativeType<decltype(tag)::value>;
    if constexpr (std::is_integral_v<T>) {
      const auto x = in.data<T>();
      for (int64_t i = 0; i < n; ++i) bits[i] = ToBits(x[i]);
    }
  });
  return value::VisitArrayType(out.element_type(), [&](auto tag) -> Status {
    constexpr PrimitiveType kType = decltype(tag)::value;
    using T = NativeType<kType>;
    auto o = out.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t u = bits[i];
      const bool negative = is_signed && static_cast<int64_t>(u) < 0;
      if constexpr (kType == PrimitiveType::kPred) {
        o[i] = u != 0 ? 1 : 0;
      } else if constexpr (std::is_integral_v<T>) {
        o[i] = FromBits<kType>(u);
      } else if constexpr (std::is_floating_point_v<T>) {
        // int64 and uint64 to float or double: one IEEE rounding.
        o[i] = negative ? static_cast<T>(static_cast<int64_t>(u)) : static_cast<T>(u);
      } else if constexpr (kIsNarrowFloat<T>) {
        const double magnitude = RoundToOddDouble(negative ? uint64_t{0} - u : u);
        o[i] = T::FromDouble(negative ? -magnitude : magnitude);
      }
    }
    return Status::Ok();
  });
}

/// bitcast-convert between types of different widths, as XLA defines it:
/// to a narrower type a new minor dimension of size ratio appears, from a
/// narrower type that minor dimension goes away, and the bytes are the same
/// in little-endian order. Our literals store every element of 8 bits or
/// more as its raw little-endian bits, row-major, so the bytes carry over.
/// pred and sub-byte types (stored one element a byte) are kUnimplemented.
Status WidthChangingBitcastConvert(const Literal& in, Literal& out) {
  const int from_bits = hlo::PrimitiveTypeBitWidth(in.element_type());
  const int to_bits = hlo::PrimitiveTypeBitWidth(out.element_type());
  if (from_bits < 8 || to_bits < 8 || in.element_type() == PrimitiveType::kPred ||
      out.element_type() == PrimitiveType::kPred) {
    return Unimplemented("bitcast-convert changing the width of pred or sub-byte types");
  }
  const hlo::Shape& wide = from_bits > to_bits ? in.shape() : out.shape();
  const hlo::Shape& narrow = from_bits > to_bits ? out.shape() : in.shape();
  const int64_t ratio = std::max(from_bits, to_bits) / std::min(from_bits, to_bits);
  hlo::DimensionVector expected = wide.dimensions();
  expected.push_back(ratio);
  if (narrow.dimensions() != expected) {
    return InvalidArgument("bitcast-convert from " + in.shape().ToString(false) + " to " +
                           out.shape().ToString(false) +
                           ": the narrower side must have the wider one's dimensions plus a "
                           "minor dimension of " +
                           std::to_string(ratio));
  }
  std::copy(in.bytes().begin(), in.bytes().end(), out.mutable_bytes().begin());
  return Status::Ok();
}

/// Reinterprets the bits of each element as the result type; a change of
/// width goes to WidthChangingBitcastConvert.
Status BitcastConvertKernel(const Literal& in, Literal& out) {
  const PrimitiveType from = in.element_type();
  const PrimitiveType to = out.element_type();
  if (hlo::PrimitiveTypeBitWidth(from) != hlo::PrimitiveTypeBitWidth(to)) {
    return WidthChangingBitcastConvert(in, out);
  }
  if (in.element_count() != out.element_count()) {
    return InvalidArgument("operand " + in.shape().ToString(false) +
                           " does not match the result's element count");
  }
  if (from == PrimitiveType::kPred || to == PrimitiveType::kPred) {
    return InvalidArgument("bitcast-convert is not defined for pred");
  }
  if (hlo::PrimitiveTypeBitWidth(from) >= 8) {
    // Stored as their raw bits in containers of the same size.
    std::copy(in.bytes().begin(), in.bytes().end(), out.mutable_bytes().begin());
    return Status::Ok();
  }
  // Sub-byte types: integers are stored sign-extended in a byte and f4 as its
  // bits, so go through the low bits of each byte.
  const auto* x = reinterpret_cast<const uint8_t*>(in.bytes().data());
  const int width = hlo::PrimitiveTypeBitWidth(to);
  const uint8_t mask = static_cast<uint8_t>((1u << width) - 1);
  const bool sign_extend = hlo::IsSignedInt(to);
  auto o = std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.mutable_bytes().data()),
                              out.mutable_bytes().size());
  for (size_t i = 0; i < o.size(); ++i) {
    o[i] = sign_extend ? static_cast<uint8_t>(SignExtend(x[i] & mask, width)) : x[i] & mask;
  }
  return Status::Ok();
}

/// stochastic-convert(x, random) from a float to a signed integer, as XLA's
/// decomposition defines it: |x| splits into floor and fraction; the
/// fraction scaled by 2^(bits of random) and truncated is compared with the
/// random value, and the floor rounds up by one when random is smaller; the
/// sign is restored, and x at or beyond the type's range gives its min or max
/// (NaN gives 0). Every step is exact in f64 for the float types XLA allows.
Status StochasticConvertKernel(const Literal& x, const Literal& random, Literal& out) {
  const PrimitiveType to = out.element_type();
  if (!hlo::IsFloatingPoint(x.element_type()) || !hlo::IsSignedInt(to) ||
      !hlo::IsUnsignedInt(random.element_type()) ||
      hlo::PrimitiveTypeBitWidth(random.element_type()) !=
          hlo::PrimitiveTypeBitWidth(x.element_type()) ||
      random.element_count() != x.element_count() || x.element_count() != out.element_count()) {
    return InvalidArgument(
        "stochastic-convert takes a float array and unsigned random bits of its width and shape, "
        "and gives signed integers");
  }
  const int to_bits = hlo::PrimitiveTypeBitWidth(to);
  if (to_bits < 2) return InvalidArgument("stochastic-convert to a 1-bit integer");
  // Powers of two up to 2^64: exact as doubles.
  const auto power_of_two = [](int bits) {
    return static_cast<double>(uint64_t{1} << (bits - 1)) * 2.0;
  };
  const double min = -power_of_two(to_bits - 1);
  const double max = power_of_two(to_bits - 1) - 1;
  const double scale = power_of_two(hlo::PrimitiveTypeBitWidth(random.element_type()));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const double v = x.GetAsDouble(i);
    double result;
    if (v != v) {
      result = 0;
    } else if (v <= min) {
      result = min;
    } else if (v >= max) {
      result = max;
    } else {
      const double magnitude = v < 0 ? -v : v;
      const double whole = detmath::Floor(magnitude);
      const double fixed = detmath::Floor((magnitude - whole) * scale);
      const double r = random.GetAsDouble(i);
      const double rounded = r < fixed ? whole + 1 : whole;
      result = v < 0 ? -rounded : rounded;
    }
    out.SetFromDouble(i, result);
  }
  return Status::Ok();
}

// --- select and clamp --------------------------------------------------------

/// select(pred, on_true, on_false); a scalar pred picks a whole operand.
void SelectKernel(const Literal& pred, const Literal& on_true, const Literal& on_false,
                  Literal& out) {
  const auto p = pred.data<uint8_t>();
  const bool scalar = p.size() == 1;
  for (int64_t i = 0; i < out.element_count(); ++i) {
    CopyElement(p[scalar ? 0 : i] != 0 ? on_true : on_false, i, out, i);
  }
}

/// `bound` as an array of `like`'s shape (a scalar bound of clamp applies to
/// every element).
Literal Expand(const Literal& bound, const Literal& like) {
  if (bound.element_count() == like.element_count()) return bound;
  Literal expanded(like.shape());
  for (int64_t i = 0; i < expanded.element_count(); ++i) CopyElement(bound, 0, expanded, i);
  return expanded;
}

/// Checks what the kernels' typed loops rely on: the operand is an array of
/// `type` with `count` elements (or one element when a scalar is allowed).
Status CheckOperand(const Literal& operand, PrimitiveType type, int64_t count,
                    bool scalar_ok = false) {
  if (!operand.shape().IsArray() || operand.element_type() != type ||
      (operand.element_count() != count && !(scalar_ok && operand.element_count() == 1))) {
    return InvalidArgument("operand " + operand.shape().ToString(false) +
                           " does not match the result's element type and size");
  }
  return Status::Ok();
}

/// The operands of a binary op or compare with a rank-0 operand (which the
/// verifier accepts, as older XLA did) broadcast to the result's dimensions;
/// `storage` keeps the broadcast copies alive.
std::vector<const Literal*> WidenScalars(Operands ops, const Literal& out,
                                         std::vector<Literal>& storage) {
  std::vector<const Literal*> widened(ops.begin(), ops.end());
  if (ops.size() != 2) return widened;
  storage.reserve(2);
  for (const Literal*& operand : widened) {
    if (!operand->shape().IsArray() || operand->shape().rank() != 0 || out.shape().rank() == 0) {
      continue;
    }
    Literal& copy =
        storage.emplace_back(hlo::Shape(operand->element_type(), out.shape().dimensions()));
    for (int64_t i = 0; i < copy.element_count(); ++i) CopyElement(*operand, 0, copy, i);
    operand = &copy;
  }
  return widened;
}

/// A unary or binary arithmetic op on operands of the result's element type.
Status ArithmeticKernel(UnaryArith op, Operands ops, Literal& out) {
  TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[0], out.element_type(), out.element_count()));
  return Unary(op, *ops[0], out);
}
Status ArithmeticKernel(BinaryArith op, Operands ops, Literal& out) {
  for (const Literal* operand : ops) {
    TPUSIM_RETURN_IF_ERROR(CheckOperand(*operand, out.element_type(), out.element_count()));
  }
  return Binary(op, *ops[0], *ops[1], out);
}

Status Dispatch(const HloInstruction& inst, Operands given, Literal& out) {
  if (!out.shape().IsArray()) return InvalidArgument("result must be an array");
  const HloOpcode op = inst.opcode();
  const PrimitiveType type = out.element_type();
  const int64_t n = out.element_count();
  std::vector<Literal> broadcast_scalars;
  const std::vector<const Literal*> widened = WidenScalars(given, out, broadcast_scalars);
  const Operands ops(widened);
  if (IsComplexElementwise(inst, ops)) return ComplexElementwise(inst, ops, out);
  switch (op) {
    case HloOpcode::kCompare:
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[0], ops[0]->element_type(), n));
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[1], ops[0]->element_type(), n));
      return CompareKernel(inst, *ops[0], *ops[1], out);
    case HloOpcode::kSelect:
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[0], PrimitiveType::kPred, n, true));
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[1], type, n));
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[2], type, n));
      SelectKernel(*ops[0], *ops[1], *ops[2], out);
      return Status::Ok();
    case HloOpcode::kClamp: {
      // XLA: clamp(lo, x, hi) = min(max(x, lo), hi), with their NaN rules.
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[0], type, n, true));
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[1], type, n));
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[2], type, n, true));
      TPUSIM_RETURN_IF_ERROR(Binary(BinaryArith::kMaximum, *ops[1], Expand(*ops[0], out), out));
      return Binary(BinaryArith::kMinimum, out, Expand(*ops[2], out), out);
    }
    case HloOpcode::kConvert:
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[0], ops[0]->element_type(), n));
      return ConvertKernel(*ops[0], out);
    case HloOpcode::kBitcastConvert:
      if (!ops[0]->shape().IsArray()) return InvalidArgument("operand must be an array");
      return BitcastConvertKernel(*ops[0], out);
    case HloOpcode::kReducePrecision:
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[0], type, n));
      return ReducePrecisionKernel(inst, *ops[0], out);
    case HloOpcode::kStochasticConvert:
      return StochasticConvertKernel(*ops[0], *ops[1], out);
    case HloOpcode::kIsFinite:
      TPUSIM_RETURN_IF_ERROR(CheckOperand(*ops[0], ops[0]->element_type(), n));
      if (!hlo::IsFloatingPoint(ops[0]->element_type())) {
        return NotForType(op, ops[0]->element_type());
      }
      IsFiniteKernel(*ops[0], out);
      return Status::Ok();
#define X(name)         \
  case HloOpcode::name: \
    return ArithmeticKernel(UnaryArith::name, ops, out);
      TPUSIM_EVAL_UNARY_ARITHMETIC(X)
#undef X
#define X(name)         \
  case HloOpcode::name: \
    return ArithmeticKernel(BinaryArith::name, ops, out);
      TPUSIM_EVAL_BINARY_ARITHMETIC(X)
#undef X
    case HloOpcode::kComplex:
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      // IsComplexElementwise sent these to ComplexElementwise above, and
      // KernelFor sends no opcode that is not elementwise here.
#define V TPUSIM_HLO_CASE_IF_NOT_ELEMENTWISE
#include "sim/hlo/opcode.def"
#undef V
      break;
  }
  return Internal(std::string(hlo::HloOpcodeName(op)) +
                  " is not computed by the elementwise kernel");
}

/// The binary arithmetic `opcode` computes; nullopt for every other opcode.
std::optional<BinaryArith> BinaryArithOf(HloOpcode opcode) {
  switch (opcode) {
#define X(name)         \
  case HloOpcode::name: \
    return BinaryArith::name;
    TPUSIM_EVAL_BINARY_ARITHMETIC(X)
#undef X
#define X(name) case HloOpcode::name:
    TPUSIM_EVAL_UNARY_ARITHMETIC(X)
    TPUSIM_EVAL_OTHER_ELEMENTWISE(X)
#undef X
#define V TPUSIM_HLO_CASE_IF_NOT_ELEMENTWISE
#include "sim/hlo/opcode.def"
#undef V
    return std::nullopt;
  }
  return std::nullopt;  // unreachable: every HloOpcode returns above
}

}  // namespace

StatusOr<Literal> EvalElementwise(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  const Status status = Dispatch(inst, ops, out);
  if (!status.ok()) return ctx.Error(inst, status.code(), status.message());
  return out;
}

HloOpcode OpcodeOf(UnaryArith op) {
  switch (op) {
#define X(name)          \
  case UnaryArith::name: \
    return HloOpcode::name;
    TPUSIM_EVAL_UNARY_ARITHMETIC(X)
#undef X
  }
  return HloOpcode::kAbs;  // unreachable: every UnaryArith returns above
}

HloOpcode OpcodeOf(BinaryArith op) {
  switch (op) {
#define X(name)           \
  case BinaryArith::name: \
    return HloOpcode::name;
    TPUSIM_EVAL_BINARY_ARITHMETIC(X)
#undef X
  }
  return HloOpcode::kAdd;  // unreachable: every BinaryArith returns above
}

std::optional<BinaryArith> InPlaceBinaryArith(HloOpcode opcode) {
  const std::optional<BinaryArith> op = BinaryArithOf(opcode);
  if (!op) return std::nullopt;
  switch (*op) {
    case BinaryArith::kAdd:
    case BinaryArith::kMultiply:
    case BinaryArith::kMaximum:
    case BinaryArith::kMinimum:
    case BinaryArith::kAnd:
    case BinaryArith::kOr:
    case BinaryArith::kXor:
      return op;
    case BinaryArith::kSubtract:
    case BinaryArith::kDivide:
    case BinaryArith::kRemainder:
    case BinaryArith::kPower:
    case BinaryArith::kAtan2:
    case BinaryArith::kShiftLeft:
    case BinaryArith::kShiftRightLogical:
    case BinaryArith::kShiftRightArithmetic:
    case BinaryArith::kMulhi:
      return std::nullopt;
  }
  return std::nullopt;  // unreachable: every BinaryArith returns above
}

Status ApplyBinaryInPlace(BinaryArith op, Literal& acc, const Literal& x) {
  return Binary(op, acc, x, acc);
}

}  // namespace tpusim::eval
