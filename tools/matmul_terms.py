#!/usr/bin/env python3
"""Split tpusim's time for each row of the matmul-v4 validation family into its
terms, and ask the measurements which combination of them they follow.

Each term is the difference between two `tpusim validate --json` runs that
differ in one switch (every run with the f16 conversions fully exposed, so
that they add to the MXU time instead of hiding under it):
  conv   the f16 conversions (vpu.f16_load_ops and f16_store_ops set to 0)
  start  the kernel start (overhead.kernel_start=0)
  steps  the per-block pipeline steps (overhead.pipeline_step=0)
  edges  the pipeline's prologue and epilogue (vmem.pipeline_block=0B)
  mxu    what is left: the MXU passes with their fill and drain
Then, per source set of the family and for all sets but the last (the large
irregular shapes, which run at two rates their shapes do not tell apart,
docs/validation.md), a least-squares fit of the measured time on the terms
with weights 1/measured (so that it minimises relative error), and the mean
absolute error of that fit beside tpusim's own.

Last, how far any smooth function of the shape gets: log(measured) fitted by
least squares on a polynomial of degree 2, 3 and 4 in log M, log K and log N
(10, 20 and 35 coefficients), in sample and in 5-fold cross-validation (row i
in fold i mod 5). It bounds what a model that sees only the shape can reach
without XLA's choices between shapes, and tpusim's residual fitted as a power
of the left operand's size M*K and of N.

  tools/matmul_terms.py --tpusim build/bin/tpusim   (needs numpy: python3-numpy)
"""
import argparse
import csv
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

SWITCHES = [
    ("conv", ["vpu.f16_load_ops=0", "vpu.f16_store_ops=0"]),
    ("start", ["overhead.kernel_start=0"]),
    ("steps", ["overhead.pipeline_step=0"]),
    ("edges", ["vmem.pipeline_block=0B"]),
]
FITS = [["mxu", "conv", "edges", "steps", "const"], ["mxu", "conv", "const"], ["mxu", "conv", "start"]]


def predicted(args, overrides):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [args.tpusim, "validate", "--family", "matmul-v4", "--worst", "0", "-j", str(args.jobs),
               "--json", out.name]
        for o in overrides:
            cmd += ["-p", o]
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
        return {r["id"]: r["predicted_us"] for r in json.load(open(out.name))["rows"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tpusim", required=True)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()

    # Switch the terms off one after another: each difference is one term.
    preset = predicted(args, [])
    switched = ["mxu.convert_exposed_percent=100"]
    runs = [predicted(args, switched)]
    for _, overrides in SWITCHES:
        switched += overrides
        runs.append(predicted(args, switched))
    suite_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "validation")
    rows = []
    for m in csv.DictReader(open(os.path.join(suite_dir, "matmul_v4.csv"))):
        i = m["id"]
        terms = {name: runs[k][i] - runs[k + 1][i] for k, (name, _) in enumerate(SWITCHES)}
        terms["mxu"] = runs[-1][i]
        terms["const"] = 1.0
        source = m["source"].split("/")[-1].split(".")[0]
        (mm, k), (_, n) = re.findall(r"\[(\d+),(\d+)\]", m["shapes"])[:2]
        shape = (int(mm), int(k), int(n))
        rows.append((source, float(m["measured_us"]), terms, preset[i], shape))
    sets = list(dict.fromkeys(r[0] for r in rows))
    for label, chosen in [(s, [s]) for s in sets] + [("all but " + sets[-1], sets[:-1])]:
        subset = [r for r in rows if r[0] in chosen]
        y = np.array([r[1] for r in subset])
        own = 100 * np.mean([abs(r[3] - r[1]) / r[1] for r in subset])
        print(f"{label} ({len(subset)} rows): tpusim's preset MAPE {own:.1f}%")
        for names in FITS:
            fixed = "start" in names  # the kernel start as tpusim has it, not fitted
            free = [n for n in names if n != "start"]
            a = np.array([[r[2][n] for n in free] for r in subset])
            target = y - (np.array([r[2]["start"] for r in subset]) if fixed else 0)
            w = 1 / y
            coef, *_ = np.linalg.lstsq(a * w[:, None], target * w, rcond=None)
            fit = a @ coef + (y - target)
            mape = 100 * np.mean(np.abs(fit - y) / y)
            terms = " + ".join(f"{c:.3g} {n}" for n, c in zip(free, coef))
            print(f"  {'start + ' if fixed else ''}{terms}: MAPE {mape:.1f}%")
    for label, chosen in [("the family", sets), ("all but " + sets[-1], sets[:-1])]:
        shape_floor(label, [r for r in rows if r[0] in chosen])
    return 0


def shape_floor(label, rows):
    """MAPE of log-polynomial fits of the measured time on the shape alone."""
    y = np.log([r[1] for r in rows])
    logs = np.log([r[4] for r in rows])
    own = 100 * np.mean([abs(r[3] - r[1]) / r[1] for r in rows])
    print(f"{label} ({len(rows)} rows), smooth functions of log M, log K, log N; tpusim {own:.1f}%")
    fold = np.arange(len(rows)) % 5
    for degree in (2, 3, 4):
        columns = [np.ones(len(rows))]
        for d in range(1, degree + 1):
            for dims in itertools.combinations_with_replacement(range(3), d):
                columns.append(np.prod(logs[:, list(dims)], axis=1))
        a = np.stack(columns, axis=1)
        coef, *_ = np.linalg.lstsq(a, y, rcond=None)
        in_sample = 100 * np.mean(np.abs(np.exp(a @ coef - y) - 1))
        held = np.zeros(len(rows))
        for f in range(5):
            train = fold != f
            coef, *_ = np.linalg.lstsq(a[train], y[train], rcond=None)
            held[~train] = np.abs(np.exp(a[~train] @ coef - y[~train]) - 1)
        print(f"  degree {degree} ({a.shape[1]} coefficients): MAPE {in_sample:.1f}% in sample, "
              f"{100 * held.mean():.1f}% cross-validated")
    # tpusim's own residual against the left operand's size and N.
    residual = y - np.log([r[3] for r in rows])
    a = np.stack([np.ones(len(rows)), logs[:, 0] + logs[:, 1], logs[:, 2]], axis=1)
    coef, *_ = np.linalg.lstsq(a, residual, rcond=None)
    mape = 100 * np.mean(np.abs(np.exp(a @ coef - residual) - 1))
    print(f"  measured/tpusim = {np.exp(coef[0]):.3g} (MK)^{coef[1]:.3f} N^{coef[2]:.3f}: MAPE {mape:.1f}%")


if __name__ == "__main__":
    sys.exit(main())
