#!/usr/bin/env python3
"""Checks tpusim's .npy reader and writer against numpy itself.

Usage: npy_numpy_test.py NPY_TOOL

1. Files numpy writes, for every dtype numpy has and several shapes, are read
   by tpusim and written back byte-identical (so our writer produces exactly
   np.save's bytes, and our reader loses nothing).
2. Files tpusim writes for every element type load in plain numpy (no
   ml_dtypes) with the expected dtype and values; bf16/f8/f4 arrive as a
   one-field structured array whose field names the ml_dtypes type and holds
   the raw bits, checked against an encoder written here from the format
   definitions.
3. Raw-bits files as people save ml_dtypes arrays ('<V2' bytes, uint16 views)
   are read when the element type is given.
"""
import fractions
import os
import subprocess
import sys
import tempfile

import numpy as np

TOOL = sys.argv[1]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def tool(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True)


# --- 1. numpy -> tpusim -> bytes identical to numpy's ------------------------
rng = np.random.default_rng(5)
NATIVE = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
SHAPES = [(), (0,), (5,), (2, 3), (2, 1, 4), (3, 0, 2)]


def sample(dtype, shape):
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True).reshape(shape)
    base = "float32" if dtype == "complex64" else "float64" if dtype == "complex128" else dtype
    special = np.array([np.nan, -np.inf, np.inf, -0.0, np.finfo(base).tiny / 4], dtype=base)
    values = np.concatenate([special, rng.standard_normal(max(n, 1)).astype(base)])[:n]
    if dtype.startswith("complex"):
        c = np.empty(n, dtype=dtype)
        c.real, c.imag = values, values[::-1]
        return c.reshape(shape)
    return values.reshape(shape)


with tempfile.TemporaryDirectory() as tmp:
    for dtype in NATIVE:
        for shape in SHAPES:
            a = sample(dtype, shape)
            src, dst = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
            np.save(src, a)
            result = tool("copy", src, dst)
            what = f"copy {dtype}{list(shape)}"
            check(result.returncode == 0, f"{what}: {result.stderr.strip()}")
            if result.returncode == 0:
                with open(src, "rb") as f1, open(dst, "rb") as f2:
                    check(f1.read() == f2.read(), f"{what}: bytes differ from np.save's")

    # --- 2. tpusim samples -> plain numpy --------------------------------------
    result = tool("samples", tmp)
    check(result.returncode == 0, "samples: " + result.stderr.strip())
    values = [0, 1, -1, 2.5, -6, 3]

    def ints(lo, hi):
        return [min(max(int(v), lo), hi) for v in values]  # truncate, then clamp

    expected_native = {
        "pred": ("bool", [v != 0 for v in values]),
        "s1": ("int8", ints(-1, 0)), "s2": ("int8", ints(-2, 1)), "s4": ("int8", ints(-8, 7)),
        "s8": ("int8", ints(-128, 127)), "s16": ("int16", ints(-2**15, 2**15 - 1)),
        "s32": ("int32", ints(-2**31, 2**31 - 1)), "s64": ("int64", ints(-2**63, 2**63 - 1)),
        "u1": ("uint8", ints(0, 1)), "u2": ("uint8", ints(0, 3)), "u4": ("uint8", ints(0, 15)),
        "u8": ("uint8", ints(0, 255)), "u16": ("uint16", ints(0, 2**16 - 1)),
        "u32": ("uint32", ints(0, 2**32 - 1)), "u64": ("uint64", ints(0, 2**64 - 1)),
        "f16": ("float16", values), "f32": ("float32", values), "f64": ("float64", values),
        "c64": ("complex64", values), "c128": ("complex128", values),
    }
    for name, (dtype, expect) in expected_native.items():
        a = np.load(os.path.join(tmp, name + ".npy"))
        check(a.dtype == np.dtype(dtype), f"sample {name}: dtype {a.dtype}, expected {dtype}")
        check(a.shape == (2, 3), f"sample {name}: shape {a.shape}")
        check(np.array_equal(a.reshape(-1), np.array(expect, dtype=dtype)),
              f"sample {name}: values {a.reshape(-1).tolist()}, expected {expect}")

    # (kind, total bits, exponent bits, mantissa bits, bias) from each format's
    # definition (ml_dtypes float8.h / mxfloat.h).
    FORMATS = {
        "bf16": ("bfloat16", "ieee", 16, 8, 7, 127),
        "f8e5m2": ("float8_e5m2", "ieee", 8, 5, 2, 15),
        "f8e4m3": ("float8_e4m3", "ieee", 8, 4, 3, 7),
        "f8e3m4": ("float8_e3m4", "ieee", 8, 3, 4, 3),
        "f8e4m3fn": ("float8_e4m3fn", "fn", 8, 4, 3, 7),
        "f8e4m3fnuz": ("float8_e4m3fnuz", "fnuz", 8, 4, 3, 8),
        "f8e5m2fnuz": ("float8_e5m2fnuz", "fnuz", 8, 5, 2, 16),
        "f8e4m3b11fnuz": ("float8_e4m3b11fnuz", "fnuz", 8, 4, 3, 11),
        "f8e8m0fnu": ("float8_e8m0fnu", "e8m0", 8, 8, 0, 127),
        "f4e2m1fn": ("float4_e2m1fn", "finite", 4, 2, 1, 1),
    }

    def decode(code, kind, total, eb, mb, bias):
        """Exact value of a code, or None for NaN and infinity."""
        signed = kind != "e8m0"
        sign = -1 if signed and code >> (total - 1) else 1
        mag = code & ((1 << (total - 1)) - 1) if signed else code
        exp, frac = mag >> mb, mag & ((1 << mb) - 1)
        if (kind == "ieee" and exp == (1 << eb) - 1) or (kind == "fn" and mag == (1 << (total - 1)) - 1) \
                or (kind == "fnuz" and code == 1 << (total - 1)) or (kind == "e8m0" and code == 0xFF):
            return None
        if exp == 0 and kind != "e8m0":
            return sign * frac * fractions.Fraction(2) ** (1 - bias - mb)
        return sign * ((1 << mb) + frac) * fractions.Fraction(2) ** (exp - bias - mb)

    def encode(v, kind, total, eb, mb, bias):
        """Nearest code (ties to the even significand) of a value that does not overflow."""
        if kind == "e8m0" and v <= 0:
            return 0xFF
        if v == 0:
            return 0
        best = None
        for code in range(1 << total):
            d = decode(code, kind, total, eb, mb, bias)
            if d is None:
                continue
            key = (abs(d - fractions.Fraction(v)), (code % 2) if kind != "e8m0" else -code)
            if best is None or key < best[0]:
                best = (key, code)
        return best[1]

    for name, (field, *fmt) in FORMATS.items():
        a = np.load(os.path.join(tmp, name + ".npy"))
        bits_dtype = "uint16" if fmt[1] == 16 else "uint8"
        check(a.dtype.names == (field,), f"sample {name}: fields {a.dtype.names}, expected ({field},)")
        if a.dtype.names != (field,):
            continue
        check(a[field].dtype == np.dtype(bits_dtype), f"sample {name}: bits dtype {a[field].dtype}")
        expect = [encode(v, *fmt) for v in values]
        got = a[field].reshape(-1).tolist()
        check(got == expect, f"sample {name}: bits {[hex(g) for g in got]}, expected {[hex(e) for e in expect]}")
        # The documented way to get values: a view of the same item size.
        check(a.view(bits_dtype).reshape(-1).tolist() == expect, f"sample {name}: view as {bits_dtype}")

    # --- 3. raw bits saved by numpy users --------------------------------------
    bits = np.array([0x3F80, 0xC000, 0x7FC0], dtype="uint16")  # bf16: 1, -2, NaN
    for label, array in [("V2", bits.view("V2")), ("uint16", bits)]:
        src, dst = os.path.join(tmp, "raw.npy"), os.path.join(tmp, "raw_out.npy")
        np.save(src, array)
        result = tool("copy", src, dst, "bf16")
        check(result.returncode == 0, f"raw {label} as bf16: {result.stderr.strip()}")
        if result.returncode == 0:
            out = np.load(dst)
            check(out["bfloat16"].tolist() == bits.tolist(), f"raw {label} as bf16: {out}")
    result = tool("copy", src, dst)
    check(result.returncode == 0, "uint16 without a type stays uint16")
    np.save(src, bits.view("V2"))
    result = tool("copy", src, dst)
    check(result.returncode == 2 and "raw bytes of unknown type" in result.stderr,
          f"raw V2 without a type is refused: {result.stderr.strip()}")
    np.save(src, np.asfortranarray(np.ones((2, 3), dtype="float32")))
    result = tool("copy", src, dst)
    check(result.returncode == 2 and "Fortran-order" in result.stderr,
          f"Fortran order is refused: {result.stderr.strip()}")
    np.save(src, np.ones(3, dtype=">f4"))
    result = tool("copy", src, dst)
    check(result.returncode == 2 and "big-endian" in result.stderr,
          f"big-endian is refused: {result.stderr.strip()}")

checks = len(NATIVE) * len(SHAPES)
if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print(f"npy_numpy_test: all checks passed ({checks} numpy round trips, "
      f"{len(expected_native) + len(FORMATS)} element types)")
