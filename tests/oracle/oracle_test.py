#!/usr/bin/env python3
"""An independent numpy oracle for tpusim's evaluator.

Usage: oracle_test.py TPUSIM [CASE_NAME_SUBSTRING] [--seeds N]

Each case is a small hand-written HLO module, seeded random inputs, and the
result numpy computes from XLA's operation semantics (oracle_refs.py), with a
stated tolerance. The script writes the inputs as param_<N>.npy, runs
`tpusim exec --inputs DIR --out DIR --numerics MODE`, reads output.npy or
output_<i>.npy, compares, and prints one line per case. It exits non-zero if
any case fails, if an expected failure starts passing (so the list below is
kept honest), if a deliberately wrong reference passes (SENSITIVITY), or if
numpy is missing.
"""
import argparse
import dataclasses
import os
import shutil
import sys
import tempfile

try:
    import numpy  # noqa: F401  (the references need it; say so before anything else)
except ImportError:
    print("oracle_test.py: error: numpy is missing; install Debian's python3-numpy "
          "(scripts/setup.sh) or run with a python3 that has it", file=sys.stderr)
    sys.exit(1)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_cases_data  # noqa: E402  (after the numpy check on purpose)
import oracle_cases_math  # noqa: E402
import oracle_cases_matmul  # noqa: E402
import numpy as np  # noqa: E402
from oracle_harness import Ref, f64, run_case  # noqa: E402

# Cases that fail on purpose until the evaluator is fixed: name -> reason.
EXPECTED_FAILURES = {}


# Wrong references that must FAIL: proof that each kind of tolerance is tight
# enough to see the mistake it guards against. (case, wrong reference, mistake)
SENSITIVITY = [
    ("dot_f32_default_is_bf16_pass", oracle_cases_matmul.dot_ref("ik,kj->ij", False),
     "DEFAULT computed from unrounded f32 operands"),
    ("dot_f32_ieee", oracle_cases_matmul.dot_ref("ik,kj->ij", True),
     "ieee computed from bf16-rounded operands"),
    ("exp_f32", lambda x: Ref(np.exp(f64(x)) * (1 + 2.0**-21)), "exp off by 2^-21 relative (2 to 4 ulp)"),
    ("reduce_sum_f32_rows", lambda p: Ref(f64(p)[:, 1:].sum(1), np.abs(f64(p)).sum(1)),
     "a sum missing one term"),
    ("sign_f32", lambda x: np.where(np.isnan(x), x, np.sign(x)).astype(np.float32),
     "sign(-0) = +0"),
    ("sort_key_value_stable",
     lambda k, v: [k[np.argsort(k, kind="quicksort")], v[np.argsort(k, kind="quicksort")]],
     "an unstable sort"),
]


def check_sensitivity(tpusim, cases, tmp):
    """Runs each wrong reference; returns the mistakes the oracle failed to see."""
    by_name = {c.name: c for c in cases}
    missed = []
    for name, wrong, mistake in SENSITIVITY:
        case = dataclasses.replace(by_name[name], expect=wrong)
        ok, detail = run_case(tpusim, case, os.path.join(tmp, f"sensitivity.{name}"))
        print(f"{'MISSED' if ok else 'SEEN':6s} {mistake} ({name}: {detail})", flush=True)
        if ok:
            missed.append(mistake)
    return missed


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tpusim", help="the tpusim binary")
    parser.add_argument("filter", nargs="?", default="", help="run the cases whose name has this")
    parser.add_argument("--seeds", type=int, default=1,
                        help="run each case on this many input seeds (0, 1, ...); CI runs one")
    return parser.parse_args()


def run_seeds(tpusim, case, tmp, seeds):
    """Runs the case on each seed; returns (ok, detail) of the first failing
    seed, or of seed 0 when all pass."""
    first = None
    for seed in range(seeds):
        directory = os.path.join(tmp, f"{case.name}.{seed}")
        try:
            ok, detail = run_case(tpusim, dataclasses.replace(case, seed=seed), directory)
        except Exception as e:  # a broken case fails alone; the others still run
            ok, detail = False, f"the case itself raised {type(e).__name__}: {e}"
        shutil.rmtree(directory, ignore_errors=True)  # many seeds: keep /tmp small
        if not ok:
            return False, (f"seed {seed}: " if seeds > 1 else "") + detail
        first = first or detail
    return True, first


def main():
    args = parse_args()
    cases = oracle_cases_math.CASES + oracle_cases_data.CASES + oracle_cases_matmul.CASES
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    unknown = set(EXPECTED_FAILURES) - set(names)
    assert not unknown, f"expected failures name no case: {unknown}"
    selected = [c for c in cases if args.filter in c.name]
    failed, xfailed = [], []
    with tempfile.TemporaryDirectory(prefix="tpusim-oracle-") as tmp:
        for case in selected:
            ok, detail = run_seeds(args.tpusim, case, tmp, args.seeds)
            if case.name in EXPECTED_FAILURES:
                status = "XPASS" if ok else "XFAIL"
                detail += f"  [expected failure: {EXPECTED_FAILURES[case.name]}]"
                (failed if ok else xfailed).append(case.name)
            else:
                status = "PASS" if ok else "FAIL"
                if not ok:
                    failed.append(case.name)
            print(f"{status:5s} {case.name:34s} {detail}", flush=True)
        missed = [] if args.filter else check_sensitivity(args.tpusim, cases, tmp)
    ran = len(selected)
    print(f"{ran} cases: {ran - len(failed) - len(xfailed)} passed, {len(xfailed)} expected "
          f"failures, {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}")
    if missed:
        print(f"wrong references not caught: {', '.join(missed)}")
    return 1 if failed or missed else 0


if __name__ == "__main__":
    sys.exit(main())
