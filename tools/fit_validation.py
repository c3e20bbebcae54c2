#!/usr/bin/env python3
"""Fit a chip preset's calibrated fields on the validation suite, reproducibly.

Runs `tpusim validate --chip CHIP --json` with `-p FIELD=VALUE` overrides and
searches the named fields by coordinate descent in multiplicative steps,
minimising the mean of the families' MAPEs (each family counts once, however
many rows it has). Deterministic: the same suite, binary and start give the
same result. Prints the fitted values (to copy into models/CHIP.yaml with a
"[FIT]" note), then, with --lofo, the leave-one-family-out table (each family
predicted by fields fitted without it, from priors that saw no data: the
--lofo-start values, or the best point of the --lofo-grid values) and, with
--ablation, the suite's error with each field set to its "off" value.

  tools/fit_validation.py --tpusim build/bin/tpusim --chip tpu-v4 \\
      --field overhead.kernel_start=850:0 --field hbm.efficiency_percent=83:100 ...

A field is NAME=START[UNIT][:OFF]; OFF is the value that switches the mechanism
off for --ablation (omit it to leave the field out of the ablation).
"""
import argparse
import itertools
import json
import re
import subprocess
import sys
import tempfile

def parse_field(text):
    name, rest = text.split("=", 1)
    value, _, off = rest.partition(":")
    m = re.fullmatch(r"([0-9.]+)(.*)", value)
    if not m:
        sys.exit(f"fit_validation: bad field {text!r}")
    return {"name": name, "value": float(m.group(1)), "unit": m.group(2), "off": off or None}


def render(field, value):
    return f"{field['name']}={value:.6g}{field['unit']}" if field["unit"] else f"{field['name']}={int(round(value))}"


RUNS = {}  # (rendered fields, extra, families) -> run()'s result: each point is timed once


def run(args, values, extra=(), families=None):
    key = (tuple(render(f, v) for f, v in zip(args.fields, values)), tuple(extra), tuple(families or []))
    if key not in RUNS:
        RUNS[key] = timed(args, values, extra, families)
    return RUNS[key]


def timed(args, values, extra, families):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [args.tpusim, "validate", "--chip", args.chip, "--worst", "0", "-j", str(args.jobs),
               "--json", out.name]
        if args.suite:
            cmd.insert(2, args.suite)
        for f, v in zip(args.fields, values):
            cmd += ["-p", render(f, v)]
        for e in extra:
            cmd += ["-p", e]
        for fam in families or []:
            cmd += ["--family", fam]
        done = subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if done.returncode not in (0, 1):  # a value the preset rejects: no result
            return None
        doc = json.load(open(out.name))
    return {f["name"]: f for f in doc["families"] if f["name"] != "all"}


def objective(stats, exclude=()):
    if stats is None:
        return float("inf")
    mapes = [f["mape_percent"] for name, f in stats.items() if name not in exclude and f["rows"]]
    return sum(mapes) / len(mapes)


def grid_start(args, start, grid, exclude):
    """The best point of `grid` (field index -> candidate values; the other
    fields at `start`) by the objective without `exclude`: where the descent
    of a leave-one-family-out fit begins, so that it does not stop in the
    first basin its priors fall in."""
    exclude = set(exclude) | set(args.hold_out)
    best, best_score = list(start), float("inf")
    indices = sorted(grid)
    for combo in itertools.product(*(grid[i] for i in indices)):
        trial = list(start)
        for i, v in zip(indices, combo):
            trial[i] = v
        score = objective(run(args, trial), exclude)
        if score < best_score - 1e-6:
            best, best_score = trial, score
    return best


def fit(args, start, exclude=(), rounds=None):
    """Coordinate descent: per field, step up or down by the round's factor
    (1.4, then 1.18, 1.09, ...) while the objective improves. Families in
    `exclude` and the --hold-out ones do not count."""
    exclude = set(exclude) | set(args.hold_out)
    values = list(start)
    best = objective(run(args, values), exclude)
    for r in range(rounds or args.rounds):
        factor = 1.4 ** (1.0 / 2 ** r)
        for i in range(len(values)):
            for direction in (factor, 1 / factor):
                while True:
                    trial = list(values)
                    trial[i] = values[i] * direction
                    if not args.fields[i]["unit"] and round(trial[i]) == round(values[i]):
                        break
                    score = objective(run(args, trial), exclude)
                    if score >= best - 1e-6:
                        break
                    best, values = score, trial
            print(f"  round {r + 1}, {args.fields[i]['name']}: {render(args.fields[i], values[i])}"
                  f" -> mean MAPE {best:.2f}%", file=sys.stderr)
    return values, best


def table(title, rows):
    print(f"\n{title}\n")
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for row in rows[1:]:
        print("| " + " | ".join(row) + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tpusim", required=True)
    p.add_argument("--suite", default=None)
    p.add_argument("--chip", required=True)
    p.add_argument("--field", action="append", required=True, type=parse_field, dest="fields")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--no-fit", action="store_true", help="evaluate the start values only")
    p.add_argument("--lofo", action="store_true")
    p.add_argument("--lofo-start", action="append", default=[], metavar="NAME=VALUE",
                   help="start value of a field for the leave-one-family-out fits (default: "
                        "its --field start); give a prior that saw no data")
    p.add_argument("--lofo-grid", action="append", default=[], metavar="NAME=V1/V2,NAME=V1/V2/...",
                   help="a grid of priors: each named field's values tried in every combination "
                        "(the other fields at --lofo-start). Each leave-one-family-out fit descends "
                        "from every grid's best point and keeps the fit whose objective (without "
                        "the family) is lowest (repeatable; default: the --lofo-start values alone)")
    p.add_argument("--ablation", action="store_true")
    p.add_argument("--hold-out", action="append", default=[], metavar="FAMILY",
                   help="a family no fit sees: reported, never in the objective (repeatable)")
    args = p.parse_args()
    start = [f["value"] for f in args.fields]
    values, best = (start, objective(run(args, start), args.hold_out)) if args.no_fit else fit(args, start)
    print("fitted fields (mean family MAPE %.2f%%):" % best)
    for f, v in zip(args.fields, values):
        print("  -p " + render(f, v))
    stats = run(args, values)
    rows = [["family", "rows", "MAPE", "bias", "r2 (log)"]]
    for name, f in stats.items():
        rows.append([name, str(f["rows"]), "%.1f%%" % f["mape_percent"], "%+.1f%%" % f["bias_percent"],
                     "%.3f" % f["r2_log"]])
    table("Fitted on every family", rows)
    if args.lofo:
        names = [f["name"] for f in args.fields]
        lofo_start = list(start)
        for item in args.lofo_start:
            key, value = item.split("=", 1)
            lofo_start[names.index(key)] = parse_field(f"{key}={value}")["value"]
        grids = []
        for spec in args.lofo_grid:
            grid = {}
            for item in spec.split(","):
                key, values_text = item.split("=", 1)
                grid[names.index(key)] = [parse_field(f"{key}={v}")["value"] for v in values_text.split("/")]
            grids.append(grid)
        rows = [["family left out", "its MAPE, fitted with it", "its MAPE, fitted without it"]]
        for name in stats:
            if name in args.hold_out:
                continue
            fits = [fit(args, grid_start(args, lofo_start, grid, exclude={name}), exclude={name}, rounds=1)
                    for grid in grids or [{}]]
            held, score = min(fits, key=lambda f: f[1])
            print(f"  {name} left out (the other families at {score:.2f}%): " +
                  " ".join("-p " + render(f, v) for f, v in zip(args.fields, held)), file=sys.stderr)
            rows.append([name, "%.1f%%" % stats[name]["mape_percent"],
                         "%.1f%%" % run(args, held, families=[name])[name]["mape_percent"]])
        table("Leave one family out (one round of fitting from each --lofo-grid's best point; the "
              "lowest objective kept)", rows)
    if args.ablation:
        names = list(stats)
        rows = [["mechanism off"] + names]
        rows.append(["(none)"] + ["%.1f%%" % stats[n]["mape_percent"] for n in names])
        for f in args.fields:
            if f["off"] is None:
                continue
            off = run(args, values, extra=[f"{f['name']}={f['off']}"])
            rows.append([f"{f['name']}={f['off']}"] + ["%.1f%%" % off[n]["mape_percent"] for n in names])
        table("Ablation: MAPE per family with one field switched off", rows)


if __name__ == "__main__":
    main()
