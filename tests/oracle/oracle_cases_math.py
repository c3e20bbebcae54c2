"""Oracle cases: elementwise math, compare, select, clamp, convert.

Transcendental references are f64 numpy (or Python's math.erf) on the f32
inputs; the result must be within 1 ulp of the output type (the exact value
rounds to within 1/2 ulp, and f64 is far more precise than that). Arithmetic
that IEEE 754 rounds once (+ - * / sqrt, floor, ...) is compared bit for bit
against numpy doing the same operation in the same type.
"""
import math

import numpy as np

import oracle_refs as R
from oracle_harness import EXACT, Case, Ref, Tol, module

CASES = []
F32, F64 = np.float32, np.float64
ONE_ULP = Tol(ulps=1)
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan]
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1


def floats(rng, n, scale=1.0, specials=()):
    """n normal f32 values times scale, the first ones replaced by `specials`."""
    x = (rng.standard_normal(n) * scale).astype(F32)
    x[:len(specials)] = specials
    return x


def positive(rng, n, scale=1.0, specials=()):
    """|normal| values, then the specials as given (negative ones included)."""
    x = np.abs(floats(rng, n, scale))
    x[:len(specials)] = specials
    return x


def ints(rng, n, lo, hi, dtype=np.int32, specials=()):
    x = rng.integers(lo, hi, n, endpoint=True, dtype=dtype)
    x[:len(specials)] = specials
    return x


def f64(x):
    return np.asarray(x, F64)


def elementwise(name, op, types, out, make, expect, tol=EXACT, attrs="", n=64, **kw):
    """A case of one elementwise op; `types` are the operand element types,
    `make(rng, n)` returns the operands."""
    params = "\n".join(f"p{i} = {t}[{n}] parameter({i})" for i, t in enumerate(types))
    operands = ", ".join(f"p{i}" for i in range(len(types)))
    text = module(f"{params}\nROOT r = {out}[{n}] {op}({operands}){attrs}")
    CASES.append(Case(name, text, lambda rng: make(rng, n), expect, tol, **kw))


def unary_f32(name, op, make, expect, tol=ONE_ULP):
    elementwise(name, op, ["f32"], "f32", lambda rng, n: [make(rng, n)], expect, tol)


# --- unary float --------------------------------------------------------------------
unary_f32("abs_f32", "abs", lambda r, n: floats(r, n, 3, SPECIALS), np.abs, EXACT)
unary_f32("negate_f32", "negate", lambda r, n: floats(r, n, 3, SPECIALS), np.negative, EXACT)
unary_f32("exp_f32", "exponential", lambda r, n: floats(r, n, 4, SPECIALS),
          lambda x: Ref(np.exp(f64(x))))
unary_f32("expm1_f32", "exponential-minus-one", lambda r, n: floats(r, n, 0.5, SPECIALS),
          lambda x: Ref(np.expm1(f64(x))))
unary_f32("log_f32", "log", lambda r, n: positive(r, n, 10, SPECIALS + [-1.0]),
          lambda x: Ref(np.log(f64(x))))
unary_f32("log_f32_negative_is_nan", "log", lambda r, n: -np.abs(floats(r, n, 10)) - 1e-3,
          lambda x: np.full(x.shape, np.nan, F32), EXACT)
unary_f32("log1p_f32", "log-plus-one",
          lambda r, n: r.uniform(-0.99, 5, n).astype(F32), lambda x: Ref(np.log1p(f64(x))))
unary_f32("tanh_f32", "tanh", lambda r, n: floats(r, n, 3, SPECIALS),
          lambda x: Ref(np.tanh(f64(x))))
unary_f32("logistic_f32", "logistic", lambda r, n: floats(r, n, 5, SPECIALS[:4]),
          lambda x: Ref(1.0 / (1.0 + np.exp(-f64(x)))))
unary_f32("sqrt_f32", "sqrt", lambda r, n: positive(r, n, 100, SPECIALS + [-4.0]),
          np.sqrt, EXACT)
unary_f32("rsqrt_f32", "rsqrt", lambda r, n: positive(r, n, 100, [np.inf]),
          lambda x: Ref(1.0 / np.sqrt(f64(x))))
unary_f32("cbrt_f32", "cbrt", lambda r, n: floats(r, n, 10, SPECIALS),
          lambda x: Ref(np.cbrt(f64(x))))
unary_f32("sine_f32", "sine", lambda r, n: floats(r, n, 10, [0.0, -0.0, np.nan]),
          lambda x: Ref(np.sin(f64(x))))
unary_f32("cosine_f32", "cosine", lambda r, n: floats(r, n, 10, [0.0, np.nan]),
          lambda x: Ref(np.cos(f64(x))))
unary_f32("tan_f32", "tan", lambda r, n: floats(r, n, 3, [0.0, np.nan]),
          lambda x: Ref(np.tan(f64(x))))
unary_f32("erf_f32", "erf", lambda r, n: floats(r, n, 2, [0.0, np.inf, -np.inf, np.nan]),
          lambda x: Ref(np.vectorize(math.erf)(f64(x))))
unary_f32("floor_f32", "floor", lambda r, n: floats(r, n, 5, SPECIALS + [-0.5]), np.floor, EXACT)
unary_f32("ceil_f32", "ceil", lambda r, n: floats(r, n, 5, SPECIALS + [-0.5]), np.ceil, EXACT)


def halves(rng, n):
    """Ties (k + 0.5) and ordinary values, with signed zeros and specials."""
    x = floats(rng, n, 4, SPECIALS + [0.49999997, -0.49999997])
    x[len(SPECIALS) + 2::2] = rng.integers(-20, 20, x[len(SPECIALS) + 2::2].size) + 0.5
    return x


unary_f32("round_nearest_even_f32", "round-nearest-even", halves, np.rint, EXACT)
unary_f32("round_nearest_afz_f32", "round-nearest-afz", halves,
          lambda x: np.copysign(np.floor(np.abs(f64(x)) + 0.5), x).astype(F32), EXACT)
unary_f32("sign_f32", "sign", lambda r, n: floats(r, n, 3, SPECIALS),
          lambda x: np.where((x == 0) | np.isnan(x), x, np.sign(x)).astype(F32), EXACT)
elementwise("is_finite_f32", "is-finite", ["f32"], "pred",
            lambda r, n: [floats(r, n, 3, SPECIALS)], np.isfinite)
elementwise("atan2_f32", "atan2", ["f32", "f32"], "f32",
            lambda r, n: [floats(r, n, 2, [0.0, -0.0, 1.0, np.inf]),
                          floats(r, n, 2, [-1.0, -1.0, 0.0, np.inf])],
            lambda y, x: Ref(np.arctan2(f64(y), f64(x))), ONE_ULP)
elementwise("exp_bf16", "exponential", ["bf16"], "bf16",
            lambda r, n: [R.bf16(floats(r, n, 3))],
            lambda x: Ref(np.exp(f64(R.f32_of(x)))), ONE_ULP, out_type="bf16")
elementwise("exp_f16", "exponential", ["f16"], "f16",
            lambda r, n: [floats(r, n, 2).astype(np.float16)],
            lambda x: Ref(np.exp(f64(x))), ONE_ULP, out_type="float16")

# --- unary integer --------------------------------------------------------------------
elementwise("abs_s32", "abs", ["s32"], "s32",
            lambda r, n: [ints(r, n, -1000, 1000, specials=[INT32_MIN, INT32_MAX, 0])],
            lambda x: R.wrap(np.abs(x.astype(np.int64)), np.int32))
elementwise("negate_s32", "negate", ["s32"], "s32",
            lambda r, n: [ints(r, n, INT32_MIN, INT32_MAX, specials=[INT32_MIN, 0])],
            lambda x: R.wrap(-x.astype(np.int64), np.int32))
elementwise("not_s32", "not", ["s32"], "s32",
            lambda r, n: [ints(r, n, INT32_MIN, INT32_MAX)], np.invert)
elementwise("not_pred", "not", ["pred"], "pred",
            lambda r, n: [r.integers(0, 2, n).astype(bool)], np.logical_not)
elementwise("popcnt_u32", "popcnt", ["u32"], "u32",
            lambda r, n: [ints(r, n, 0, 2**32 - 1, np.uint32, [0, 2**32 - 1])], R.popcount)
elementwise("clz_s32", "count-leading-zeros", ["s32"], "s32",
            lambda r, n: [ints(r, n, INT32_MIN, INT32_MAX, specials=[0, 1, -1, INT32_MAX])
                          >> r.integers(0, 32, n).astype(np.int32)], R.count_leading_zeros)

# --- binary float -------------------------------------------------------------------------
def two_normals(scale=3.0, a_specials=(), b_specials=()):
    return lambda r, n: [floats(r, n, scale, list(a_specials)),
                         floats(r, n, scale, list(b_specials))]


elementwise("add_f32", "add", ["f32", "f32"], "f32",
            two_normals(3, [np.inf, np.inf, np.nan, 1e30], [-np.inf, 1, 2, 1e30]), np.add)
elementwise("subtract_bf16", "subtract", ["bf16", "bf16"], "bf16",
            lambda r, n: [R.bf16(floats(r, n, 3)), R.bf16(floats(r, n, 3))],
            lambda a, b: R.bf16(R.round_bf16(f64(R.f32_of(a)) - f64(R.f32_of(b)))))
elementwise("multiply_f16", "multiply", ["f16", "f16"], "f16",
            lambda r, n: [floats(r, n, 20).astype(np.float16), floats(r, n, 20).astype(np.float16)],
            lambda a, b: (f64(a) * f64(b)).astype(np.float16))
elementwise("divide_f32", "divide", ["f32", "f32"], "f32",
            two_normals(3, [1.0, -1.0, 0.0, np.inf], [0.0, 0.0, 0.0, np.inf]), np.divide)
elementwise("remainder_f32", "remainder", ["f32", "f32"], "f32",
            two_normals(5, [7.5, -7.5, 3.0, np.inf], [2.0, 2.0, 0.0, 1.0]), np.fmod)
elementwise("power_f32", "power", ["f32", "f32"], "f32",
            lambda r, n: [np.abs(floats(r, n, 3)) + F32(0.1), floats(r, n, 3)],
            lambda a, b: Ref(np.power(f64(a), f64(b))), ONE_ULP)
elementwise("power_f32_negative_base_integer_exponent", "power", ["f32", "f32"], "f32",
            lambda r, n: [-np.abs(floats(r, n, 2)) - F32(0.1),
                          ints(r, n, -6, 6).astype(F32)],
            lambda a, b: Ref(np.power(f64(a), f64(b))), ONE_ULP)
elementwise("maximum_f32_nan", "maximum", ["f32", "f32"], "f32",
            two_normals(3, [np.nan, 1.0, np.inf], [2.0, np.nan, -np.inf]), np.maximum)
elementwise("minimum_f32_nan", "minimum", ["f32", "f32"], "f32",
            two_normals(3, [np.nan, 1.0, np.inf], [2.0, np.nan, -np.inf]), np.minimum)

# --- binary integer ---------------------------------------------------------------------
def int_pair(lo, hi, b_lo, b_hi, dtype=np.int32, a_specials=(), b_specials=()):
    return lambda r, n: [ints(r, n, lo, hi, dtype, list(a_specials)),
                         ints(r, n, b_lo, b_hi, dtype, list(b_specials))]


elementwise("add_s8_wraps", "add", ["s8", "s8"], "s8", int_pair(-128, 127, -128, 127, np.int8),
            lambda a, b: R.wrap(a.astype(np.int64) + b, np.int8))
elementwise("multiply_s32_wraps", "multiply", ["s32", "s32"], "s32",
            int_pair(INT32_MIN, INT32_MAX, -100000, 100000),
            lambda a, b: R.wrap(a.astype(np.int64) * b, np.int32))
elementwise("divide_s32_by_zero_and_overflow", "divide", ["s32", "s32"], "s32",
            int_pair(-1000, 1000, -7, 7, a_specials=[INT32_MIN, 5, -5, 0, INT32_MIN],
                     b_specials=[-1, 0, 0, 0, 0]),
            lambda a, b: R.int_divide(a, b, np.int32))
elementwise("divide_u32_by_zero", "divide", ["u32", "u32"], "u32",
            int_pair(0, 2**32 - 1, 0, 9, np.uint32, b_specials=[0, 0]),
            lambda a, b: R.int_divide(a, b, np.uint32))
elementwise("remainder_s32_signs_and_zero", "remainder", ["s32", "s32"], "s32",
            int_pair(-1000, 1000, -7, 7, a_specials=[INT32_MIN, 5, -5], b_specials=[-1, 0, 0]),
            lambda a, b: R.int_remainder(a, b, np.int32))


def int_power(a, b):
    """XLA integer power: repeated multiplication wrapping; a negative exponent
    gives 1 for base 1 and 0 otherwise."""
    result = np.array([int(x) ** int(y) if y >= 0 else int(x == 1) for x, y in zip(a, b)])
    return R.wrap(result, np.int32)


def power_inputs(rng, n):
    a, b = ints(rng, n, -3, 3), ints(rng, n, -2, 8)
    a = np.where((b < 0) & (a == -1), 2, a).astype(np.int32)  # (-1)^-k: left to the spec
    return [a, b]


elementwise("power_s32", "power", ["s32", "s32"], "s32", power_inputs, int_power)
for op, fn in (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)):
    elementwise(f"{op}_s32", op, ["s32", "s32"], "s32",
                int_pair(INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX), fn)
    elementwise(f"{op}_pred", op, ["pred", "pred"], "pred",
                lambda r, n: [r.integers(0, 2, n).astype(bool), r.integers(0, 2, n).astype(bool)],
                fn)
for index, op in enumerate(("shift-left", "shift-right-arithmetic", "shift-right-logical")):
    elementwise(f"{op.replace('-', '_')}_s32_out_of_range", op, ["s32", "s32"], "s32",
                int_pair(INT32_MIN, INT32_MAX, -2, 40, b_specials=[32, 31, 0, -1, 33]),
                lambda x, s, index=index: R.shifts(x, s)[index])
    elementwise(f"{op.replace('-', '_')}_s8_out_of_range", op, ["s8", "s8"], "s8",
                int_pair(-128, 127, -2, 12, np.int8, b_specials=[8, 7, 0, -1, 9]),
                lambda x, s, index=index: R.shifts(x, s)[index])

# --- compare, select, clamp ---------------------------------------------------------------
DIRECTIONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
              "GT": np.greater, "GE": np.greater_equal}


def compare_all(name, ty, make, attrs="", key=lambda x: x):
    """One output per direction, as a tuple."""
    n = 48
    lines = [f"a = {ty}[{n}] parameter(0)", f"b = {ty}[{n}] parameter(1)"]
    lines += [f"{d.lower()} = pred[{n}] compare(a, b), direction={d}{attrs}" for d in DIRECTIONS]
    lines.append(f"ROOT t = ({', '.join([f'pred[{n}]'] * 6)}) tuple("
                 + ", ".join(d.lower() for d in DIRECTIONS) + ")")
    CASES.append(Case(name, module("\n".join(lines)), lambda rng: make(rng, n),
                      lambda a, b: [fn(key(a), key(b)) for fn in DIRECTIONS.values()], EXACT))


def float_pairs(rng, n):
    """Normal values with ties, NaNs on either side, infinities and signed zeros."""
    a, b = floats(rng, n, 2), floats(rng, n, 2)
    b[::4] = a[::4]
    a[:8] = [np.nan, 1.0, np.nan, np.inf, -0.0, 0.0, -np.inf, R.F32(-0.0)]
    b[:8] = [1.0, np.nan, np.nan, np.inf, 0.0, -0.0, np.inf, -np.nan]
    return [a, b]


compare_all("compare_f32_ieee", "f32", float_pairs)
compare_all("compare_f32_totalorder", "f32", float_pairs, ", type=TOTALORDER", R.total_order_key)
compare_all("compare_s32", "s32", int_pair(-5, 5, -5, 5))
compare_all("compare_u32", "u32", int_pair(0, 2**32 - 1, 0, 2**32 - 1, np.uint32,
                                           [2**31, 0], [2**31 - 1, 2**32 - 1]))
elementwise("select_f32", "select", ["pred", "f32", "f32"], "f32",
            lambda r, n: [r.integers(0, 2, n).astype(bool), floats(r, n), floats(r, n)], np.where)


def clamp_inputs(rng, n):
    lo, hi = floats(rng, n), floats(rng, n)
    return [np.minimum(lo, hi), floats(rng, n, 2, [np.nan, np.inf, -np.inf]), np.maximum(lo, hi)]


elementwise("clamp_f32", "clamp", ["f32", "f32", "f32"], "f32", clamp_inputs,
            lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi))
CASES.append(Case("clamp_f32_scalar_bounds", module("""
lo = f32[] parameter(0)
x = f32[32] parameter(1)
hi = f32[] parameter(2)
ROOT c = f32[32] clamp(lo, x, hi)"""),
    lambda r: [F32(-0.5), floats(r, 32, 2, [np.nan]), F32(0.75)],
    lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), EXACT))

# --- convert, bitcast-convert, reduce-precision --------------------------------------------
def bf16_rounding_inputs(rng, n):
    """Random floats, exact ties (low 16 bits 0x8000) both ways, overflow to inf."""
    x = floats(rng, n, 100, SPECIALS)
    bits = x.view(np.uint32)
    bits[8:24] = (bits[8:24] & 0xFFFF0000) | 0x8000
    bits[24:28] = [0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x00018000]
    return [x]


elementwise("convert_f32_to_bf16", "convert", ["f32"], "bf16", bf16_rounding_inputs, R.bf16)
elementwise("convert_bf16_to_f32", "convert", ["bf16"], "f32",
            lambda r, n: [R.bf16(floats(r, n, 1e3, SPECIALS))], R.f32_of)


def saturating_int(x, lo, hi, dtype):
    """XLA float -> int: truncate toward zero, saturate at the range, NaN -> 0."""
    t = np.trunc(np.nan_to_num(f64(x), nan=0.0, posinf=hi, neginf=lo))
    return np.clip(t, lo, hi).astype(dtype)


elementwise("convert_f32_to_s32_saturates", "convert", ["f32"], "s32",
            lambda r, n: [floats(r, n, 3e9, SPECIALS + [2.5, -2.5, 2147483648.0, -2147483904.0])],
            lambda x: saturating_int(x, INT32_MIN, INT32_MAX, np.int32))
elementwise("convert_f32_to_u8_saturates", "convert", ["f32"], "u8",
            lambda r, n: [floats(r, n, 200, SPECIALS + [255.9, 256.0, -0.9])],
            lambda x: saturating_int(x, 0, 255, np.uint8))
elementwise("convert_s32_to_f32_rounds", "convert", ["s32"], "f32",
            lambda r, n: [ints(r, n, INT32_MIN, INT32_MAX, specials=[2**24 + 1, 2**24 + 3])],
            lambda x: x.astype(F32))
elementwise("convert_s32_to_s8_wraps", "convert", ["s32"], "s8",
            lambda r, n: [ints(r, n, -100000, 100000)], lambda x: x.astype(np.int8))
elementwise("convert_f32_to_pred", "convert", ["f32"], "pred",
            lambda r, n: [floats(r, n, 1, SPECIALS)], lambda x: x != 0)
elementwise("bitcast_convert_f32_to_s32", "bitcast-convert", ["f32"], "s32",
            lambda r, n: [floats(r, n, 10, SPECIALS)], lambda x: x.view(np.int32))
elementwise("bitcast_convert_s32_to_f32", "bitcast-convert", ["s32"], "f32",
            lambda r, n: [ints(r, n, INT32_MIN, INT32_MAX)], lambda x: x.view(F32))


def precision_inputs(rng, n):
    """Wide magnitudes so both overflow and flush-to-zero happen."""
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(F32)
    x[:len(SPECIALS)] = SPECIALS
    return [x]


elementwise("reduce_precision_e5m10", "reduce-precision", ["f32"], "f32", precision_inputs,
            lambda x: R.reduce_precision(x, 5, 10), attrs=", exponent_bits=5, mantissa_bits=10")
elementwise("reduce_precision_e8m7", "reduce-precision", ["f32"], "f32", precision_inputs,
            lambda x: R.reduce_precision(x, 8, 7), attrs=", exponent_bits=8, mantissa_bits=7")

# --- edges: overflow, underflow, subnormals, huge arguments, special values -----------------
unary_f32("exp_f32_overflow_and_underflow", "exponential",
          lambda r, n: floats(r, n, 60, [88.7, 88.8, 89.0, -87.3, -100.0, -103.9, -104.5, -200.0]),
          lambda x: Ref(np.exp(f64(x))))
unary_f32("expm1_f32_tiny", "exponential-minus-one", lambda r, n: floats(r, n, 1e-8),
          lambda x: Ref(np.expm1(f64(x))))
unary_f32("log1p_f32_tiny", "log-plus-one", lambda r, n: floats(r, n, 1e-8),
          lambda x: Ref(np.log1p(f64(x))))
unary_f32("logistic_f32_tails", "logistic", lambda r, n: floats(r, n, 40, [-100.0, -103.0, 90.0]),
          lambda x: Ref(1.0 / (1.0 + np.exp(-f64(x)))))


def wide_exponents(rng, n, lo, hi, positive=False):
    """Random significands times 2^k for k in [lo, hi]: every scale, subnormals included."""
    x = (rng.uniform(1, 2, n) * np.exp2(rng.integers(lo, hi, n, endpoint=True))).astype(F32)
    return x if positive else x * rng.choice([F32(-1), F32(1)], n)


unary_f32("sine_f32_huge_arguments", "sine", lambda r, n: wide_exponents(r, n, 0, 120),
          lambda x: Ref(np.sin(f64(x))))
unary_f32("cosine_f32_huge_arguments", "cosine", lambda r, n: wide_exponents(r, n, 0, 120),
          lambda x: Ref(np.cos(f64(x))))
unary_f32("log_f32_subnormal_and_huge", "log",
          lambda r, n: wide_exponents(r, n, -149, 127, positive=True),
          lambda x: Ref(np.log(f64(x))))
unary_f32("sqrt_f32_subnormal_and_huge", "sqrt",
          lambda r, n: wide_exponents(r, n, -149, 127, positive=True), np.sqrt, EXACT)
unary_f32("rsqrt_f32_subnormal_and_huge", "rsqrt",
          lambda r, n: wide_exponents(r, n, -149, 127, positive=True),
          lambda x: Ref(1.0 / np.sqrt(f64(x))))
unary_f32("cbrt_f32_subnormal_and_huge", "cbrt", lambda r, n: wide_exponents(r, n, -149, 127),
          lambda x: Ref(np.cbrt(f64(x))))
unary_f32("round_nearest_even_f32_large", "round-nearest-even",
          lambda r, n: wide_exponents(r, n, 20, 26), np.rint, EXACT)
POW_SPECIALS = [  # (base, exponent): C99 Annex F pow, which XLA's power follows
    (np.nan, 0.0), (1.0, np.nan), (0.0, -1.0), (-0.0, -1.0), (-0.0, -2.0), (-np.inf, 3.0),
    (-np.inf, -3.0), (np.inf, -1.0), (-2.0, 0.5), (0.5, np.inf), (2.0, -np.inf), (-1.0, np.inf),
    (0.0, 0.0), (-8.0, 1.0 / 3.0), (-0.0, 3.0), (np.inf, 0.5)]


def pow_special_inputs(rng, n):
    base, exponent = floats(rng, n, 2), floats(rng, n, 2)
    base[:len(POW_SPECIALS)], exponent[:len(POW_SPECIALS)] = zip(*POW_SPECIALS)
    return [base, exponent]


elementwise("power_f32_special_values", "power", ["f32", "f32"], "f32", pow_special_inputs,
            lambda a, b: Ref(np.power(f64(a), f64(b))), ONE_ULP)
elementwise("atan2_f32_zeros_and_infinities", "atan2", ["f32", "f32"], "f32",
            lambda r, n: [floats(r, n, 2, [0.0, -0.0, 0.0, -0.0, np.inf, np.inf, -np.inf, 1.0]),
                          floats(r, n, 2, [0.0, 0.0, -0.0, -0.0, np.inf, -np.inf, np.inf,
                                           -np.inf])],
            lambda y, x: Ref(np.arctan2(f64(y), f64(x))), ONE_ULP)
elementwise("round_nearest_even_bf16", "round-nearest-even", ["bf16"], "bf16",
            lambda r, n: [R.bf16(halves(r, n))], lambda x: R.bf16(np.rint(R.f32_of(x))))

# f64: the reference is numpy's f64 libm (itself within 1 ulp), so 2 ulp.
TWO_ULP = Tol(ulps=2)
for name, op, make, fn in (
        ("exp_f64", "exponential", lambda r, n: r.standard_normal(n) * 20, np.exp),
        ("log_f64", "log", lambda r, n: np.abs(r.standard_normal(n)) * 1e3, np.log),
        ("sine_f64", "sine", lambda r, n: r.standard_normal(n) * 100, np.sin),
        ("tanh_f64", "tanh", lambda r, n: r.standard_normal(n) * 3, np.tanh)):
    elementwise(name, op, ["f64"], "f64", lambda r, n, make=make: [make(r, n)],
                lambda x, fn=fn: Ref(fn(x)), TWO_ULP, out_type="float64")
elementwise("add_f64", "add", ["f64", "f64"], "f64",
            lambda r, n: [r.standard_normal(n), r.standard_normal(n) * 1e-10], np.add)

# --- narrow integers -----------------------------------------------------------------------
elementwise("divide_s8_overflow_and_zero", "divide", ["s8", "s8"], "s8",
            int_pair(-128, 127, -5, 5, np.int8, [-128, 7, -128], [-1, 0, 0]),
            lambda a, b: R.int_divide(a, b, np.int8))
elementwise("subtract_u8_wraps", "subtract", ["u8", "u8"], "u8",
            int_pair(0, 255, 0, 255, np.uint8), lambda a, b: (a.astype(np.int64) - b).astype(np.uint8))
elementwise("popcnt_s8", "popcnt", ["s8"], "s8",
            lambda r, n: [ints(r, n, -128, 127, np.int8, [-128, -1, 0])], R.popcount)
elementwise("clz_s8", "count-leading-zeros", ["s8"], "s8",
            lambda r, n: [ints(r, n, -128, 127, np.int8, [-128, -1, 0, 1])], R.count_leading_zeros)
elementwise("maximum_s32", "maximum", ["s32", "s32"], "s32",
            int_pair(INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX), np.maximum)
elementwise("minimum_u32", "minimum", ["u32", "u32"], "u32",
            int_pair(0, 2**32 - 1, 0, 2**32 - 1, np.uint32), np.minimum)
elementwise("clamp_s32", "clamp", ["s32", "s32", "s32"], "s32",
            lambda r, n: [np.full(n, -10, np.int32), ints(r, n, -50, 50), np.full(n, 20, np.int32)],
            lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi))
elementwise("multiply_s64_wraps", "multiply", ["s64", "s64"], "s64",
            int_pair(-2**62, 2**62, -2**40, 2**40, np.int64), np.multiply)


# --- more conversions --------------------------------------------------------------------------
def round_integers(values, significant_bits):
    """Exact integers (Python ints) rounded once, nearest even, to
    `significant_bits` significant bits: 8 for bf16, 24 for f32."""
    out = []
    for v in map(int, values):
        m, shift = abs(v), abs(v).bit_length() - significant_bits
        if shift > 0:
            q, rem = divmod(m, 1 << shift)
            half = 1 << (shift - 1)
            q += rem > half or (rem == half and q & 1)
            m = q << shift
        out.append(float(-m if v < 0 else m))
    return np.array(out, F64)


def int_to_bf16(values):
    return R.bf16(round_integers(values, 8).astype(F32))


def s64_rounding_inputs(rng, n):
    """Ties and just-above-ties that an f32 intermediate would round wrongly."""
    x = rng.integers(-2**63, 2**63 - 1, n, endpoint=True, dtype=np.int64)
    x[:4] = [2**40 + 2**32, 2**40 + 2**32 + 1, -(2**40 + 2**32 + 1), 2**40 + 3 * 2**32]
    return [x]


elementwise("convert_s64_to_bf16_rounds_once", "convert", ["s64"], "bf16", s64_rounding_inputs,
            int_to_bf16)


def f64_rounding_inputs(rng, n):
    """Random doubles plus values just off bf16 ties (1 + 2^-8 +- 2^-30)."""
    x = rng.standard_normal(n) * 100
    x[:4] = [1 + 2**-8 + 2**-30, 1 + 2**-8 - 2**-30, -(1 + 2**-8 + 2**-30), 1 + 2**-8]
    return [x]


elementwise("convert_f64_to_bf16_rounds_once", "convert", ["f64"], "bf16", f64_rounding_inputs,
            lambda x: R.bf16(R.round_bf16(x)))
elementwise("convert_f64_to_f32", "convert", ["f64"], "f32",
            lambda r, n: [r.standard_normal(n) * np.exp2(r.integers(-160, 140, n))],
            lambda x: x.astype(F32))
elementwise("convert_f32_to_f16_overflow_and_subnormal", "convert", ["f32"], "f16",
            lambda r, n: [wide_exponents(r, n, -26, 17)], lambda x: x.astype(np.float16))
elementwise("convert_u32_to_f32", "convert", ["u32"], "f32",
            lambda r, n: [ints(r, n, 0, 2**32 - 1, np.uint32, [2**32 - 1, 2**24 + 1])],
            lambda x: x.astype(F32))
elementwise("convert_pred_to_f32", "convert", ["pred"], "f32",
            lambda r, n: [r.integers(0, 2, n).astype(bool)], lambda x: x.astype(F32))
elementwise("convert_bf16_to_s32_saturates", "convert", ["bf16"], "s32",
            lambda r, n: [R.bf16(floats(r, n, 3e9, SPECIALS))],
            lambda x: saturating_int(R.f32_of(x), INT32_MIN, INT32_MAX, np.int32))
elementwise("convert_s32_to_u32_wraps", "convert", ["s32"], "u32",
            lambda r, n: [ints(r, n, INT32_MIN, INT32_MAX)], lambda x: x.astype(np.uint32))
elementwise("reduce_precision_e4m3", "reduce-precision", ["f32"], "f32", precision_inputs,
            lambda x: R.reduce_precision(x, 4, 3), attrs=", exponent_bits=4, mantissa_bits=3")


# --- f8 ----------------------------------------------------------------------------------------
def f8_rounding_inputs(rng, n, scale, edges):
    x = floats(rng, n, scale, SPECIALS + edges)
    x[len(SPECIALS) + len(edges):][::3] *= F32(1e-3)  # subnormal territory
    return [x]


elementwise("convert_f32_to_f8e4m3fn", "convert", ["f32"], "f8e4m3fn",
            lambda r, n: f8_rounding_inputs(r, n, 100, [448.0, 464.0, 465.0, 2.0**-10, 3 * 2.0**-10]),
            lambda x: R.round_f8(x, "float8_e4m3fn"), out_type="float8_e4m3fn")
elementwise("convert_f32_to_f8e5m2", "convert", ["f32"], "f8e5m2",
            lambda r, n: f8_rounding_inputs(r, n, 1e4, [57344.0, 61440.0, 61439.0, 2.0**-17]),
            lambda x: R.round_f8(x, "float8_e5m2"), out_type="float8_e5m2")
elementwise("convert_f8e4m3fn_to_f32_every_code", "convert", ["f8e4m3fn"], "f32",
            lambda r, n: [R.f8(np.arange(256), "float8_e4m3fn")],
            lambda x: R.f8_decode(x["float8_e4m3fn"], "float8_e4m3fn"), n=256)
elementwise("convert_f8e5m2_to_f32_every_code", "convert", ["f8e5m2"], "f32",
            lambda r, n: [R.f8(np.arange(256), "float8_e5m2")],
            lambda x: R.f8_decode(x["float8_e5m2"], "float8_e5m2"), n=256)
compare_all("compare_bf16_ieee", "bf16", lambda r, n: [R.bf16(x) for x in float_pairs(r, n)],
            key=R.f32_of)
elementwise("remainder_f32_signed_zero_and_inf", "remainder", ["f32", "f32"], "f32",
            two_normals(5, [-0.0, 0.0, -3.0, 5.0, np.nan], [2.0, -2.0, np.inf, -np.inf, 1.0]),
            np.fmod)
elementwise("convert_bf16_to_f16_rounds_once", "convert", ["bf16"], "f16",
            lambda r, n: [R.bf16(wide_exponents(r, n, -26, 17))],
            lambda x: R.f32_of(x).astype(np.float16))
elementwise("convert_f16_to_bf16_rounds_once", "convert", ["f16"], "bf16",
            lambda r, n: [floats(r, n, 100).astype(np.float16)],
            lambda x: R.bf16(x.astype(F32)))
elementwise("sign_s32", "sign", ["s32"], "s32",
            lambda r, n: [ints(r, n, -3, 3, specials=[INT32_MIN, INT32_MAX, 0])], np.sign)
elementwise("remainder_u32_by_zero", "remainder", ["u32", "u32"], "u32",
            int_pair(0, 2**32 - 1, 0, 9, np.uint32, b_specials=[0, 0]),
            lambda a, b: np.where(b == 0, a, a % np.where(b == 0, 1, b)).astype(np.uint32))

# --- accuracy where it is hard: cancellation, argument reduction, tails --------------------------
unary_f32("log_f32_near_one", "log", lambda r, n: (1 + floats(r, n, 1e-3)).astype(F32),
          lambda x: Ref(np.log(f64(x))))


def near_half_pi_multiples(rng, n):
    """f32 values nearest to k*pi/2, where sin or cos nearly vanishes."""
    k = rng.integers(-2000, 2000, n)
    return (k * (np.pi / 2)).astype(F32)


unary_f32("sine_f32_near_pi_multiples", "sine", near_half_pi_multiples,
          lambda x: Ref(np.sin(f64(x))))
unary_f32("cosine_f32_near_pi_multiples", "cosine", near_half_pi_multiples,
          lambda x: Ref(np.cos(f64(x))))
unary_f32("erf_f32_tails_and_tiny", "erf",
          lambda r, n: np.concatenate([floats(r, n // 2, 6), floats(r, n - n // 2, 1e-20)]),
          lambda x: Ref(np.vectorize(math.erf)(f64(x))))
unary_f32("tanh_f32_tiny_and_large", "tanh",
          lambda r, n: np.concatenate([floats(r, n // 2, 1e-6), floats(r, n - n // 2, 30)]),
          lambda x: Ref(np.tanh(f64(x))))
unary_f32("expm1_f32_large_overflows", "exponential-minus-one",
          lambda r, n: floats(r, n, 60, [88.8, 89.0, -200.0, np.nan]),
          lambda x: Ref(np.expm1(f64(x))))

# --- 64-bit integers ----------------------------------------------------------------------------------
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
elementwise("negate_s64_wraps", "negate", ["s64"], "s64",
            lambda r, n: [ints(r, n, INT64_MIN, INT64_MAX, np.int64, [INT64_MIN, 0])],
            lambda x: (np.uint64(0) - x.view(np.uint64)).view(np.int64))  # modulo 2^64
elementwise("popcnt_s64", "popcnt", ["s64"], "s64",
            lambda r, n: [ints(r, n, INT64_MIN, INT64_MAX, np.int64, [INT64_MIN, -1, 0])],
            R.popcount)
elementwise("clz_u64", "count-leading-zeros", ["u64"], "u64",
            lambda r, n: [ints(r, n, 0, 2**64 - 1, np.uint64, [0, 1, 2**63])
                          >> r.integers(0, 64, n).astype(np.uint64)], R.count_leading_zeros)
elementwise("convert_u64_to_f32_rounds_once", "convert", ["u64"], "f32",
            lambda r, n: [ints(r, n, 0, 2**64 - 1, np.uint64,
                               [2**63 + 2**39, 2**63 + 2**39 + 1, 2**64 - 1])],
            lambda x: round_integers(x, 24).astype(F32))
elementwise("convert_f32_to_s64_saturates", "convert", ["f32"], "s64",
            lambda r, n: [floats(r, n, 1e19, SPECIALS + [9.3e18, -9.3e18])],
            lambda x: np.array([0 if math.isnan(v) else max(INT64_MIN, min(INT64_MAX, int(v)))
                                if math.isfinite(v) else (INT64_MAX if v > 0 else INT64_MIN)
                                for v in f64(x)], np.int64))
elementwise("convert_s64_to_s32_wraps", "convert", ["s64"], "s32",
            lambda r, n: [ints(r, n, INT64_MIN, INT64_MAX, np.int64)], lambda x: x.astype(np.int32))
elementwise("convert_f64_to_s32_nan_and_saturation", "convert", ["f64"], "s32",
            lambda r, n: [np.concatenate([[np.nan, np.inf, -np.inf, 3e9, -3e9, 2147483647.9],
                                          r.standard_normal(n - 6) * 3e9])],
            lambda x: saturating_int(x, INT32_MIN, INT32_MAX, np.int32))
CASES.append(Case("bitcast_convert_round_trip_keeps_nan_payloads", module("""
p = s32[64] parameter(0)
f = f32[64] bitcast-convert(p)
ROOT q = s32[64] bitcast-convert(f)"""),
    lambda r: [ints(r, 64, INT32_MIN, INT32_MAX, specials=[0x7F800001, -0x7FFFFF, 0x7FC01234])],
    lambda p: p, EXACT))
compare_all("compare_u64_above_2_63", "u64",
            int_pair(0, 2**64 - 1, 0, 2**64 - 1, np.uint64, [2**63, 2**64 - 1], [2**63 - 1, 0]))
compare_all("compare_s64", "s64", int_pair(INT64_MIN, INT64_MAX, INT64_MIN, INT64_MAX, np.int64,
                                           [INT64_MIN, INT64_MAX], [INT64_MAX, INT64_MIN]))
elementwise("xor_u8", "xor", ["u8", "u8"], "u8", int_pair(0, 255, 0, 255, np.uint8), np.bitwise_xor)
elementwise("not_u8", "not", ["u8"], "u8", lambda r, n: [ints(r, n, 0, 255, np.uint8)], np.invert)
elementwise("convert_s32_to_pred", "convert", ["s32"], "pred",
            lambda r, n: [ints(r, n, -2, 2)], lambda x: x != 0)
elementwise("clamp_bf16", "clamp", ["bf16", "bf16", "bf16"], "bf16",
            lambda r, n: [R.bf16(np.full(n, -1, F32)), R.bf16(floats(r, n, 2)),
                          R.bf16(np.full(n, 0.5, F32))],
            lambda lo, x, hi: R.bf16(np.clip(R.f32_of(x), -1, 0.5)))
