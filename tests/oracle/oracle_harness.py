"""The oracle's machinery: what a case is, how its inputs are written, how tpusim
runs, how outputs (bf16 included) are read, and how they are compared."""
import os
import subprocess
from dataclasses import dataclass
from typing import Callable

import numpy as np

from oracle_refs import BF16_DTYPE, f8_decode, f32_of, ulp

SUM_EPS = 2.0 ** -24  # f32 unit roundoff: one rounded f32 addition moves a sum this much


@dataclass(frozen=True)
class Tol:
    """How far an output may be from the reference, elementwise:
    |got - want| <= ulps * ulp(want) + sums * 2^-24 * scale, where ulp is the
    spacing of the output type at want and scale is the sum of |terms| the
    reference supplies (Ref). All zero means exact: same bits (any NaN matches
    any NaN), same dtype and shape."""
    ulps: float = 0.0
    sums: float = 0.0

    def exact(self):
        return self.ulps == 0 and self.sums == 0

    def __str__(self):
        if self.exact():
            return "exact"
        parts = [f"{self.ulps:g} ulp"] if self.ulps else []
        parts += [f"{self.sums:g}*2^-24*sum|terms|"] if self.sums else []
        return " + ".join(parts)


EXACT = Tol()


@dataclass
class Ref:
    """A reference value (f64 or the output's type) and, for sums, the sum of the
    absolute values of its terms, which scales the accumulation-order bound."""
    value: np.ndarray
    scale: np.ndarray = None


@dataclass
class Case:
    name: str
    hlo: str
    make_inputs: Callable  # rng -> [arrays], one per entry parameter (bf16 as refs.bf16)
    expect: Callable       # *inputs -> array, Ref, or a list of them (tuple results)
    tol: Tol
    numerics: str = "tpu"
    out_type: str = None   # the output dtype when it is not the reference's (e.g. "bf16")
    seed: int = 0


def case_adder(cases):
    """A function adding a Case to `cases`; its hlo is the ENTRY body, or a
    tuple (ENTRY body, helper computations...)."""
    def add(name, hlo, make, expect, tol=EXACT, **kw):
        text = module(*hlo) if isinstance(hlo, tuple) else module(hlo)
        cases.append(Case(name, text, make, expect, tol, **kw))
    return add


def normal(rng, *shape, scale=1.0):
    """Standard normal f32 values of the given shape."""
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def f64(x):
    return np.asarray(x, np.float64)


def module(body, *computations):
    """HLO text: helper computations, then `ENTRY main { body }`."""
    return "HloModule oracle\n\n" + "".join(c.strip() + "\n\n" for c in computations) + \
        "ENTRY main {\n" + body.strip() + "\n}\n"


# --- files ----------------------------------------------------------------------
def write_inputs(directory, inputs):
    """param_<N>.npy per parameter; a tuple parameter (a Python tuple of arrays)
    as param_<N>_<i>.npy per element."""
    os.makedirs(directory, exist_ok=True)
    for n, value in enumerate(inputs):
        leaves = value if isinstance(value, tuple) else [value]
        for i, array in enumerate(leaves):
            name = f"param_{n}_{i}" if isinstance(value, tuple) else f"param_{n}"
            np.save(os.path.join(directory, name + ".npy"), np.asarray(array))  # 0-d stays 0-d


def read_outputs(directory):
    """output.npy, or output_0.npy, output_1.npy, ... for a tuple result."""
    single = os.path.join(directory, "output.npy")
    if os.path.exists(single):
        return [np.load(single)]
    outputs = []
    while os.path.exists(os.path.join(directory, f"output_{len(outputs)}.npy")):
        outputs.append(np.load(os.path.join(directory, f"output_{len(outputs)}.npy")))
    return outputs


def run_tpusim(tpusim, hlo_path, inputs_dir, out_dir, numerics):
    """Runs `tpusim exec`; returns None on success or the error text."""
    r = subprocess.run([tpusim, "exec", hlo_path, "--inputs", inputs_dir, "--out", out_dir,
                        "--numerics", numerics], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return f"tpusim exited {r.returncode}: {r.stderr.strip().splitlines()[-1:]}"
    return None


# --- comparison -------------------------------------------------------------------
def type_name(array):
    """numpy's name, or for the raw-bits structured dtypes "bf16" / the f8 name."""
    if array.dtype == BF16_DTYPE:
        return "bf16"
    return array.dtype.names[0] if array.dtype.names else array.dtype.name


def decode(array):
    """Values as numpy can hold them: bf16 and f8 bits become exact f32."""
    if array.dtype == BF16_DTYPE:
        return f32_of(array)
    if array.dtype.names:
        return f8_decode(array[array.dtype.names[0]], array.dtype.names[0])
    return array


# The smallest magnitude that rounds to inf (max finite + half an ulp) per type.
OVERFLOW = {"float32": 2.0**128 - 2.0**103, "bf16": 2.0**128 - 2.0**119,
            "float16": 65520.0, "float64": np.inf}


def overflow_to_inf(want, type_name):
    """An f64 reference beyond the output type's range is inf in that type."""
    limit = OVERFLOW[type_name]
    return np.where(np.abs(want) >= limit, np.copysign(np.inf, want), want)


def compare(got, want, tol, out_type):
    """Returns (ok, one-line text) for one output: dtype and shape first, then
    values, exactly or within the tolerance."""
    if isinstance(want, Ref):
        expected_type = out_type or "float32"  # references in f64 of an f32 result
    else:
        want = Ref(want)
        expected_type = out_type or type_name(np.asarray(want.value))
    if type_name(got) != expected_type:
        return False, f"dtype {type_name(got)}, want {expected_type}"
    if got.shape != np.shape(want.value):
        return False, f"shape {got.shape}, want {np.shape(want.value)}"
    got_values, want_values = decode(got), decode(np.asarray(want.value))
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf is masked out
        if tol.exact():
            return compare_exact(got_values, want_values)
        return compare_within(got_values.astype(np.float64),
                              overflow_to_inf(want_values.astype(np.float64), expected_type),
                              tol, want.scale, expected_type)


def compare_exact(got, want):
    """Same values; floats bit for bit (so -0 differs from +0) except that any
    NaN matches any NaN."""
    if got.dtype.kind not in "fc":
        bad = got != want.astype(got.dtype)
        return not bad.any(), f"{int(bad.sum())} of {bad.size} differ" if bad.any() else "max_err=0"
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~((g.view(np.uint64) == w.view(np.uint64)) | (np.isnan(g) & np.isnan(w)))
    if not bad.any():
        return True, "max_err=0"
    finite = np.isfinite(g) & np.isfinite(w)
    max_err = float(np.max(np.where(finite, np.abs(g - w), 0), initial=0))
    return False, f"{int(bad.sum())} of {bad.size} differ, max_err={max_err:.3g}"


def compare_within(g, w, tol, scale, type_name):
    """|g - w| <= the tolerance's bound where both are finite; NaN where the
    reference is NaN; the same infinity where it is infinite."""
    bound = tol.ulps * ulp(w, type_name)
    if tol.sums:
        bound = bound + tol.sums * SUM_EPS * np.asarray(scale, np.float64)
    both_finite = np.isfinite(g) & np.isfinite(w)
    err = np.where(both_finite, np.abs(g - w), 0.0)
    special_mismatch = (np.isnan(g) != np.isnan(w)) | (~both_finite & (g != w) & ~np.isnan(w))
    bad = (err > bound) | special_mismatch
    ratio = err / np.maximum(np.where(both_finite, bound, 1.0), np.finfo(np.float64).tiny)
    worst = float(np.max(ratio, initial=0))
    text = f"max_err={float(np.max(err, initial=0)):.3g} (worst err/tol {worst:.2f})"
    if special_mismatch.any():
        text += f", {int(special_mismatch.sum())} NaN/inf mismatches"
    return not bad.any(), text


def run_case(tpusim, case, directory):
    """Runs one case end to end; returns (ok, one-line detail)."""
    rng = np.random.default_rng(case.seed)
    inputs = case.make_inputs(rng)
    inputs_dir, out_dir = os.path.join(directory, "in"), os.path.join(directory, "out")
    write_inputs(inputs_dir, inputs)
    hlo_path = os.path.join(directory, "module.hlo")
    with open(hlo_path, "w") as f:
        f.write(case.hlo)
    error = run_tpusim(tpusim, hlo_path, inputs_dir, out_dir, case.numerics)
    if error:
        return False, error
    with np.errstate(all="ignore"):  # log(-1) and friends are meant to give NaN
        wants = case.expect(*inputs)
    if not isinstance(wants, (list, tuple)):
        wants = [wants]
    gots = read_outputs(out_dir)
    if len(gots) != len(wants):
        return False, f"{len(gots)} outputs, want {len(wants)}"
    ok, details = True, []
    for i, (got, want) in enumerate(zip(gots, wants)):
        good, text = compare(got, want, case.tol, case.out_type)
        ok &= good
        details.append(text if len(wants) == 1 else f"[{i}] {text}")
    return ok, "; ".join(details) + f"  tol: {case.tol}" + \
        (f"  numerics={case.numerics}" if case.numerics != "tpu" else "")
