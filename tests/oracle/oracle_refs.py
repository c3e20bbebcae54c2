"""numpy references for the oracle suite, written from XLA's operation semantics.

Nothing here is derived from tpusim's kernels: each function states the rule it
implements. Floats that XLA rounds are rounded here with integer bit operations
or numpy's own IEEE arithmetic, never through a library that knows bf16.
"""
import numpy as np

F32, F64 = np.float32, np.float64
BF16_DTYPE = np.dtype([("bfloat16", "<u2")])  # how tpusim's .npy files hold bf16 (docs/values.md)


# --- bf16 --------------------------------------------------------------------
def bf16_bits_from_f32(x):
    """f32 -> bf16 bit patterns, round to nearest, ties to even (XLA's convert).

    Adding 0x7FFF plus the lowest kept bit and truncating is RNE on the bit
    pattern; a carry out of the fraction correctly bumps the exponent (up to
    inf). NaN stays a (quiet) NaN with its sign.
    """
    bits = np.asarray(x, F32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    quiet_nan = (bits >> 16) | 0x40
    return np.where(np.isnan(x), quiet_nan, rounded).astype(np.uint16)


def bf16(x):
    """A bf16 array as tpusim reads and writes it: raw bits in a structured dtype."""
    out = np.empty(np.shape(x), BF16_DTYPE)
    out["bfloat16"] = bf16_bits_from_f32(x)
    return out


def f32_of(a):
    """The f32 values of a bf16 structured array (exact: bf16 is the top half of f32)."""
    bits = a["bfloat16"].astype(np.uint32) << 16
    return bits.view(F32)


def round_to_precision(x, mantissa_bits, min_normal_exp, max_finite):
    """x (f64) rounded once, nearest-even, to a float with `mantissa_bits`
    explicit fraction bits, gradual underflow below 2^min_normal_exp, and
    overflow to inf beyond max_finite. Used to round f64 references directly to
    bf16 (7, -126) or f32 (23, -126) without double rounding."""
    x = np.asarray(x, F64)
    frac, exp = np.frexp(x)                      # x = frac * 2^exp, |frac| in [0.5, 1)
    exp = np.maximum(exp, min_normal_exp + 1)    # subnormal range: fixed quantum
    quantum_exp = exp - (mantissa_bits + 1)
    r = np.rint(np.ldexp(x, -quantum_exp))       # np.rint is ties-to-even
    r = np.ldexp(r, quantum_exp)
    r = np.where(np.abs(r) > max_finite, np.copysign(np.inf, x), r)
    return np.where(np.isfinite(x), r, x)


BF16_MAX = float.fromhex("0x1.fep127")


def round_bf16(x):
    """f64 -> nearest-even bf16 value (as f32, which holds it exactly)."""
    return round_to_precision(x, 7, -126, BF16_MAX).astype(F32)


# --- f8 ------------------------------------------------------------------------
# name: (exponent bits, fraction bits, bias, has inf). e4m3fn has no inf and one
# NaN code per sign (all ones); e5m2 is IEEE-like (docs/values.md's table).
F8_FORMATS = {"float8_e4m3fn": (4, 3, 7, False), "float8_e5m2": (5, 2, 15, True)}


def f8(codes, name):
    """An f8 array as tpusim reads and writes it: raw codes in a structured dtype."""
    out = np.empty(np.shape(codes), np.dtype([(name, "|u1")]))
    out[name] = codes
    return out


def f8_decode(codes, name):
    """f8 codes -> their exact values as f32, from the format's definition."""
    ebits, mbits, bias, has_inf = F8_FORMATS[name]
    c = np.asarray(codes, np.int64)
    sign = np.where(c >> 7, -1.0, 1.0)
    e, f = (c >> mbits) & ((1 << ebits) - 1), c & ((1 << mbits) - 1)
    value = np.where(e == 0, f * 2.0 ** (1 - bias - mbits),
                     (1 + f / 2.0 ** mbits) * np.exp2(e - bias))
    top = e == (1 << ebits) - 1
    if has_inf:
        value = np.where(top, np.where(f == 0, np.inf, np.nan), value)
    else:
        value = np.where(top & (f == (1 << mbits) - 1), np.nan, value)
    return (sign * value).astype(F32)


def round_f8(x, name):
    """XLA's convert to f8: nearest even, once; beyond the range inf, or NaN for
    a format without inf (non-saturating, as ml_dtypes)."""
    ebits, mbits, bias, has_inf = F8_FORMATS[name]
    largest = f8_decode(0x7B if has_inf else 0x7E, name)
    r = round_to_precision(np.asarray(x, F64), mbits, 1 - bias, float(largest))
    if not has_inf:
        r = np.where(np.isinf(r), np.nan, r)
    return r.astype(F32)


def ulp(want, kind):
    """The spacing of the output type at |want|: f32, f16, f64 or bf16."""
    a = np.abs(np.asarray(want, F64))
    if kind == "bf16":
        return np.spacing(a.astype(F32)).astype(F64) * 65536.0
    return np.spacing(a.astype(np.dtype(kind))).astype(F64)


# --- integer and bit-level semantics -----------------------------------------
def wrap(x, dtype):
    """Integer arithmetic in XLA wraps modulo 2^bits."""
    return np.asarray(x, np.int64).astype(dtype)


def int_divide(a, b, dtype):
    """XLA: truncating division; x / 0 = -1 (all ones: the max for unsigned);
    INT_MIN / -1 = INT_MIN (the wrapped quotient)."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    q = (np.abs(a64) // np.abs(safe)) * np.sign(a64) * np.sign(safe)
    q = np.where(b64 == 0, -1, q)
    return wrap(q, dtype) if np.dtype(dtype).kind == "i" else q.astype(np.uint64).astype(dtype)


def int_remainder(a, b, dtype):
    """XLA: remainder takes the dividend's sign (C's %); x % 0 = x; INT_MIN % -1 = 0."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    r = np.sign(a64) * (np.abs(a64) % np.abs(safe))
    return wrap(np.where(b64 == 0, a64, r), dtype)


def shifts(x, amount):
    """XLA shifts of a signed integer array read the amount as unsigned; an
    amount >= the bit width gives 0 (arithmetic right shift: 0 or -1 by the
    sign). Returns (shift-left, shift-right-arithmetic, shift-right-logical)."""
    bits = x.dtype.itemsize * 8
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    mask = (1 << bits) - 1
    u = x.view(unsigned).astype(np.uint64)
    n = amount.view(unsigned).astype(np.uint64)
    big = n >= bits
    n_ok = np.where(big, 0, n)
    left = np.where(big, 0, (u << n_ok) & mask).astype(unsigned).view(x.dtype)
    logical = np.where(big, 0, u >> n_ok).astype(unsigned).view(x.dtype)
    arith = np.where(big, np.where(x < 0, -1, 0), x.astype(np.int64) >> n_ok.astype(np.int64))
    return left, arith.astype(x.dtype), logical


def popcount(x):
    """Set bits in the integer's own width (a negative s8 counts 8 bits, not 64)."""
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    return sum(((u >> i) & 1) for i in range(x.dtype.itemsize * 8)).astype(x.dtype)


def count_leading_zeros(x):
    """Zero bits above the highest set bit, in the integer's own width."""
    bits = x.dtype.itemsize * 8
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    count = np.zeros(u.shape, np.int64)
    seen = np.zeros(u.shape, bool)
    for i in range(bits - 1, -1, -1):
        seen |= ((u >> i) & 1) == 1
        count += ~seen
    return count.astype(x.dtype)


def total_order_key(x):
    """IEEE totalOrder as a signed integer key: negative floats have their
    magnitude bits flipped, so -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN."""
    i = np.asarray(x, F32).view(np.int32).astype(np.int64)
    return np.where(i < 0, i ^ 0x7FFFFFFF, i)


def reduce_precision(x, exponent_bits, mantissa_bits):
    """XLA's reduce-precision on f32: round the fraction to `mantissa_bits` bits
    (nearest even), then exponents above the new maximum become inf and below the
    new minimum normal become 0 (no subnormals); NaN stays NaN."""
    bits = np.asarray(x, F32).view(np.uint32).astype(np.uint64)
    drop = 23 - mantissa_bits
    if drop > 0:
        bias = (1 << (drop - 1)) - 1 + ((bits >> drop) & 1)
        bits = (bits + bias) & ~np.uint64((1 << drop) - 1) & 0xFFFFFFFF
    sign = bits & 0x80000000
    exp = ((bits >> 23) & 0xFF).astype(np.int64) - 127
    max_exp = (1 << (exponent_bits - 1)) - 1
    bits = np.where(exp > max_exp, sign | 0x7F800000, bits)
    bits = np.where(exp < 1 - max_exp, sign, bits)
    out = bits.astype(np.uint32).view(F32)
    return np.where(np.isnan(x), x, out)


# --- data movement -------------------------------------------------------------
def xla_pad(x, value, config):
    """XLA pad: per dimension (low, high, interior); interior values go between
    elements first, then negative edges crop and positive ones add `value`."""
    for d, (low, high, interior) in enumerate(config):
        n = x.shape[d]
        if interior and n > 0:
            shape = list(x.shape)
            shape[d] = n + (n - 1) * interior
            y = np.full(shape, value, x.dtype)
            index = [slice(None)] * x.ndim
            index[d] = slice(None, None, interior + 1)
            y[tuple(index)] = x
            x = y
        for amount, at_end in ((low, False), (high, True)):
            if amount > 0:
                shape = list(x.shape)
                shape[d] = amount
                block = np.full(shape, value, x.dtype)
                x = np.concatenate([x, block] if at_end else [block, x], axis=d)
            elif amount < 0:
                index = [slice(None)] * x.ndim
                index[d] = slice(0, x.shape[d] + amount) if at_end else slice(-amount, None)
                x = x[tuple(index)]
    return x


def reduce_window(x, init, combine, size, stride, padding, base_dilation=None,
                  window_dilation=None):
    """XLA reduce-window: dilate the base (holes) and pad, both with the init
    value, then combine each window, whose taps are window_dilation apart
    (combine is a numpy reduction such as np.max over the window axes)."""
    base_dilation = base_dilation or [1] * x.ndim
    window_dilation = window_dilation or [1] * x.ndim
    padded = xla_pad(x, init, [(lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation)])
    span = [(k - 1) * d + 1 for k, d in zip(size, window_dilation)]
    windows = np.lib.stride_tricks.sliding_window_view(padded, span)
    windows = windows[tuple(slice(None, None, s) for s in stride)]
    windows = windows[(Ellipsis,) + tuple(slice(None, None, d) for d in window_dilation)]
    axes = tuple(range(x.ndim, 2 * x.ndim))
    return combine(windows, axis=axes)


def select_and_scatter_ge_add(operand, source, size, stride, padding):
    """XLA select-and-scatter with select=GE (the first maximum of each window
    wins: a candidate replaces the selection only when select(current, it) is
    false) and scatter=add onto zeros; padding positions are never selected.
    Returns the sum and the sum of |source| landing at each place (the scale of
    the summation error)."""
    out = np.zeros(operand.shape, F64)
    scale = np.zeros(operand.shape, F64)
    for s_index in np.ndindex(*source.shape):
        best = None
        for w_index in np.ndindex(*size):
            pos = tuple(s * st + w - lo for s, st, w, (lo, _) in
                        zip(s_index, stride, w_index, padding))
            if any(p < 0 or p >= n for p, n in zip(pos, operand.shape)):
                continue
            if best is None or not operand[best] >= operand[pos]:
                best = pos
        out[best] += source[s_index]
        scale[best] += abs(source[s_index])
    return out, scale


# --- dot and convolution ---------------------------------------------------------
def conv2d(lhs, rhs, stride=(1, 1), padding=((0, 0), (0, 0)), lhs_dilation=(1, 1),
           rhs_dilation=(1, 1), feature_groups=1, batch_groups=1):
    """XLA convolution, lhs [N,H,W,C], rhs [KH,KW,I,O] -> [N/batch_groups,OH,OW,O],
    in f64. lhs dilation inserts zeros between input elements, padding (which may
    be negative) is applied to the dilated input, rhs dilation spaces kernel taps.
    Feature group g (of C/I) feeds output features [g*O/G, (g+1)*O/G); batch group
    g (of N) feeds output features [g*O/B, (g+1)*O/B). Returns (value, scale)
    with scale = the same sum over |terms|."""
    lhs, rhs = np.asarray(lhs, F64), np.asarray(rhs, F64)
    n, h, w, c = lhs.shape
    kh, kw, i, o = rhs.shape
    dilated = np.zeros((n, (h - 1) * lhs_dilation[0] + 1, (w - 1) * lhs_dilation[1] + 1, c))
    dilated[:, ::lhs_dilation[0], ::lhs_dilation[1], :] = lhs
    x = xla_pad(dilated, 0.0, [(0, 0, 0), (*padding[0], 0), (*padding[1], 0), (0, 0, 0)])
    span = ((kh - 1) * rhs_dilation[0] + 1, (kw - 1) * rhs_dilation[1] + 1)
    oh = (x.shape[1] - span[0]) // stride[0] + 1
    ow = (x.shape[2] - span[1]) // stride[1] + 1
    out_n = n // batch_groups
    value = np.zeros((out_n, oh, ow, o))
    scale = np.zeros_like(value)
    for y in range(oh):
        for z in range(ow):
            patch = x[:, y * stride[0]:y * stride[0] + span[0]:rhs_dilation[0],
                      z * stride[1]:z * stride[1] + span[1]:rhs_dilation[1], :]
            for f in range(o):
                fg = f // (o // feature_groups)
                bg = f // (o // batch_groups)
                p = patch[bg * out_n:(bg + 1) * out_n, :, :, fg * i:(fg + 1) * i]
                k = rhs[:, :, :, f]
                value[:, y, z, f] = np.einsum("nhwc,hwc->n", p, k)
                scale[:, y, z, f] = np.einsum("nhwc,hwc->n", np.abs(p), np.abs(k))
    return value, scale
