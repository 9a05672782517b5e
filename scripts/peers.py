#!/usr/bin/env python3
"""The peer comparison: every algorithm against the best peer, per scene kind and size.

Runs `broadphase bench --rounds 3 --format csv` on each scene kind of `scenes/` at each
object count, with the library's algorithms (all but `brute-force`) and the peers
(`parry-bvh`, `rapier`, and PhysX's `physx-sap`, `physx-mbp`, `physx-abp`,
`physx-abp-parallel`), keeps each run's CSV under docs/benchmarks/peers/, and writes
docs/benchmarks/peers.md from every CSV there: per scene and size, each algorithm's broad-phase
time (set_aabbs_ms_median + update_ms_median; the narrow phase is the same for every exact
algorithm) divided by the best peer's. Below 1: faster than every peer. A second table divides
each incremental algorithm's time by the best peer of its own family (`sap` by PhysX's SAP,
`dynamic-tree` by `parry-bvh` or `rapier`, `grid` by PhysX's MBP).

A cell already measured is kept unless --force; so an interrupted grid is resumed by running
the same command again, and `--table-only` rewrites the table from the CSVs alone.

    cargo build --release -p broadphase-cli --features physx   # CXX=g++ without clang++
    scripts/peers.py                                           # the whole grid
    scripts/peers.py --scenes default,static-90 --sizes 100000 # some cells
    scripts/peers.py --sizes 10000 --without octree,loose-octree,masking
    scripts/peers.py --scenes settling-pile --sizes 100000 --steps 50
    scripts/peers.py --scenes default --sizes 1000000 --steps 5 --warmup 3 --max-step-ms 10000 \
        --without octree,loose-octree,masking,hgrid,grid,rapier,physx-sap
    scripts/peers.py --scenes open-world --sizes 1000000 --steps 5 --warmup 3 --no-narrow
    scripts/peers.py --table-only
"""

import argparse
import csv
import datetime
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Scene kinds of issue #29: (file stem in scenes/, what it stands for, its sizes).
SCENES = [
    ("default", "default: every object moving, incoherent", None),
    ("settling-pile", "settling pile: dense, coherent, everything awake", None),
    ("open-world", "open world: terrain, 70% static props, few movers, churn", None),
    ("static-90", "the default with 90% static", None),
    ("teleport", "teleport-heavy: 10% of the movers jump per step", None),
    ("small-game", "small game: 100 objects in a room", [100]),
]
SIZES = [100, 1000, 10000, 100000]
# Measured only when asked for (`--sizes 1000000`), shown where measured.
EXTRA_SIZES = [1000000]
LIBRARY = [
    "sort-and-sweep",
    "sap",
    "adaptive",
    "grid",
    "hgrid",
    "octree",
    "loose-octree",
    "masking",
    "dynamic-tree",
    "bvh",
]
PEERS = ["parry-bvh", "rapier", "physx-sap", "physx-mbp", "physx-abp", "physx-abp-parallel"]
# The incremental algorithms and the peers of their own family (issue #29: each within 1.5x
# of the best of them): sweep and prune against PhysX's SAP, the dynamic tree against the
# BVHs of parry and rapier, the grid against PhysX's multi-box pruning.
FAMILIES = [
    ("sap", ["physx-sap"]),
    ("dynamic-tree", ["parry-bvh", "rapier"]),
    ("grid", ["physx-mbp"]),
]
DATA = os.path.join(ROOT, "docs", "benchmarks", "peers")
TABLE = os.path.join(ROOT, "docs", "benchmarks", "peers.md")


def cpu_model():
    """The model name, with the family and model numbers (a VM may name only the vendor)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    name = fields.get("model name", "unknown CPU")
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']}, model {fields['model']})"
    return name


def csv_path(scene, size):
    return os.path.join(DATA, f"{scene}-{size}.csv")


def measure(binary, scene, size, rounds, algorithms, steps=None, warmup=None, max_step_ms=None,
            no_narrow=False):
    """Runs one cell; returns bench's exit code (1: two algorithms disagreed on pairs)."""
    command = [
        binary,
        "bench",
        "--scene",
        os.path.join(ROOT, "scenes", f"{scene}.toml"),
        "--objects",
        str(size),
        "--rounds",
        str(rounds),
        "--algorithms",
        ",".join(algorithms),
        "--format",
        "csv",
    ]
    if steps is not None:
        command += ["--steps", str(steps)]
    if warmup is not None:
        command += ["--warmup", str(warmup)]
    if max_step_ms is not None:
        command += ["--max-step-ms", str(max_step_ms)]
    if no_narrow:
        command.append("--no-narrow")
    print(" ".join(command[1:]), file=sys.stderr, flush=True)
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode not in (0, 1) or not result.stdout.strip():
        sys.exit(f"peers.py: bench failed ({result.returncode}): {result.stderr.strip()[-500:]}")
    if result.returncode == 1:
        print(f"peers.py: {scene} at {size}: {result.stderr.strip()}", file=sys.stderr)
    os.makedirs(DATA, exist_ok=True)
    with open(csv_path(scene, size), "w") as f:
        f.write(result.stdout)
    return result.returncode


def read_cell(scene, size):
    """{algorithm: broad-phase ms per step} of one cell's CSV (only its first block: a
    phased scene's second block holds the phases); None when it was not measured."""
    path = csv_path(scene, size)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        first_block = f.read().split("\n\n", 1)[0]
    times = {}
    for row in csv.DictReader(first_block.splitlines()):
        try:
            ms = float(row["set_aabbs_ms_median"]) + float(row["update_ms_median"])
        except (KeyError, ValueError):
            continue  # stopped before its first measured step: no time
        if row.get("stopped_at_step"):
            continue  # stopped as too slow: its median is not over the whole scene
        times[row["algorithm"]] = ms
    return times


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}"


def family_table(cells):
    """The lines of the table of each incremental algorithm against the best peer of its own
    family that finished, per measured cell, and the largest such ratio."""
    out = ["## Each incremental algorithm against its own family", "",
           "Each cell: the algorithm's broad-phase time over the best time of its family's peers "
           "in the same run (" + "; ".join(
               f"`{a}` against " + " or ".join(f"`{p}`" for p in peers)
               for a, peers in FAMILIES) + "). `-`: the algorithm or every peer of its family "
           "was left out or stopped as too slow.", "",
           "| scene | objects | " + " | ".join(f"`{a}`" for a, _ in FAMILIES) + " |",
           "|---|---:|" + "---:|" * len(FAMILIES)]
    largest = {a: None for a, _ in FAMILIES}
    for scene, _, sizes in SCENES:
        for size in (sizes or SIZES) + EXTRA_SIZES:
            times = cells.get((scene, size))
            if times is None:
                continue
            row = []
            for algorithm, peers in FAMILIES:
                best = min((times[p] for p in peers if p in times), default=None)
                t = times.get(algorithm)
                ratio = t / best if t is not None and best else None
                if ratio is not None and (largest[algorithm] is None
                                          or ratio > largest[algorithm][0]):
                    largest[algorithm] = (ratio, scene, size)
                row.append(fmt_ratio(ratio))
            out.append(f"| `{scene}` | {size:,} | " + " | ".join(row) + " |")
    out.append("")
    parts = []
    for algorithm, _ in FAMILIES:
        if largest[algorithm] is None:
            parts.append(f"`{algorithm}` -")
        else:
            ratio, scene, size = largest[algorithm]
            parts.append(f"`{algorithm}` {ratio:.2f} (`{scene}`, {size:,})")
    out.append("Largest: " + "; ".join(parts) + ".")
    out.append("")
    return out


def write_table(rounds):
    cells = {}
    missing = []
    for scene, _, sizes in SCENES:
        for size in sizes or SIZES:
            times = read_cell(scene, size)
            if times is None:
                missing.append((scene, size))
            else:
                cells[(scene, size)] = times
        for size in EXTRA_SIZES:
            times = read_cell(scene, size)
            if times is not None:
                cells[(scene, size)] = times
    out = []
    out.append("# Every algorithm against the best peer")
    out.append("")
    out.append(f"CPU: {cpu_model()}, {os.cpu_count()} logical cores (machine shared with other "
               "jobs). Written by `scripts/peers.py` on "
               f"{datetime.date.today().isoformat()} from the CSVs in [peers/](peers/) "
               f"(`broadphase bench --rounds {rounds} --format csv`, release build with "
               "`--features physx`).")
    out.append("")
    out.append("The machine is shared with other jobs: the algorithms of one cell are measured in "
               "one `bench` run, rotated over the rounds, so load falls on them alike on average, "
               "but a single ratio can be off by tens of per cent; compare cells of one column "
               "rather than columns.")
    out.append("")
    out.append("Each cell: the algorithm's broad-phase time per step (`set_aabbs_ms_median + "
               "update_ms_median`, of the round with the median total time) divided by the best "
               "peer's at that scene and size. Below 1.00: faster than every peer; above: slower. "
               "Peers: `parry-bvh`, `rapier`, `physx-sap`, `physx-mbp`, `physx-abp`, "
               "`physx-abp-parallel` (one thread). `-`: not measured, or stopped as too slow "
               "(three steps in a row over `--max-step-ms`).")
    out.append("")
    summary = ["| scene | objects | best peer | its ms | best of the library | ratio |",
               "|---|---:|---|---:|---|---:|"]
    for scene, title, sizes in SCENES:
        sizes = (sizes or SIZES) + EXTRA_SIZES
        measured = [s for s in sizes if (scene, s) in cells]
        out.append(f"## `{scene}`: {title}")
        out.append("")
        if not measured:
            out.append("Not measured yet.")
            out.append("")
            continue
        best_peer = {}
        for size in measured:
            peers = {a: t for a, t in cells[(scene, size)].items() if a in PEERS}
            best_peer[size] = min(peers.items(), key=lambda kv: kv[1]) if peers else None
        out.append("| algorithm | " + " | ".join(f"{s:,}" for s in measured) + " |")
        out.append("|---|" + "---:|" * len(measured))
        for algorithm in LIBRARY + PEERS:
            row = []
            for size in measured:
                t = cells[(scene, size)].get(algorithm)
                bp = best_peer[size]
                row.append(fmt_ratio(t / bp[1] if t is not None and bp and bp[1] > 0 else None))
            out.append(f"| `{algorithm}` | " + " | ".join(row) + " |")
        out.append("| best peer | " + " | ".join(
            f"`{best_peer[s][0]}` {best_peer[s][1]:.3g} ms" if best_peer[s] else "-"
            for s in measured) + " |")
        out.append("")
        for size in measured:
            lib = {a: t for a, t in cells[(scene, size)].items() if a in LIBRARY}
            bp = best_peer[size]
            if lib and bp and bp[1] > 0:
                name, t = min(lib.items(), key=lambda kv: kv[1])
                summary.append(f"| `{scene}` | {size:,} | `{bp[0]}` | {bp[1]:.3g} | `{name}` | "
                               f"{t / bp[1]:.2f} |")
    out.append("## Summary: the library's best against the best peer")
    out.append("")
    out.extend(summary)
    out.append("")
    out.extend(family_table(cells))
    if missing:
        out.append("## Not measured")
        out.append("")
        out.append("Cells without a CSV in [peers/](peers/); to measure them (and rewrite this "
                   "file):")
        out.append("")
        for scene, size in missing:
            out.append(f"    scripts/peers.py --scenes {scene} --sizes {size}")
        out.append("")
        out.append("Add `--without octree,loose-octree,masking,hgrid` to leave out the algorithms "
                   "already far behind at smaller sizes (their cells then show `-`); that is how "
                   "the 10,000-object cells other than `default` were measured.")
        out.append("")
    with open(TABLE, "w") as f:
        f.write("\n".join(out))
    print(f"wrote {os.path.relpath(TABLE, ROOT)}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "broadphase"),
                        help="the broadphase binary, built with --features physx")
    parser.add_argument("--scenes", help="comma-separated scene kinds (default: all)")
    parser.add_argument("--sizes", help="comma-separated object counts (default: 100,1000,"
                        "10000,100000; small-game runs at 100 only)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--without", help="comma-separated algorithms to leave out of the "
                        "cells measured now (their cells show `-`)")
    parser.add_argument("--steps", type=int, help="measured steps per run (default: the "
                        "scene's; fewer for cells whose narrow phase takes hours)")
    parser.add_argument("--warmup", type=int, help="warm-up steps per run (default: the scene's)")
    parser.add_argument("--max-step-ms", type=float, help="bench's --max-step-ms (default: "
                        "bench's 500; larger for cells whose every peer takes longer)")
    parser.add_argument("--no-narrow", action="store_true", help="bench's --no-narrow: no narrow "
                        "phase between the steps (for cells whose narrow phase takes hours; the "
                        "table reads only the broad-phase times)")
    parser.add_argument("--force", action="store_true", help="measure cells already measured")
    parser.add_argument("--table-only", action="store_true", help="only rewrite the table")
    args = parser.parse_args()
    known = [s[0] for s in SCENES]
    scenes = known if args.scenes is None else [s.strip() for s in args.scenes.split(",")]
    for s in scenes:
        if s not in known:
            sys.exit(f"peers.py: unknown scene kind '{s}' (known: {', '.join(known)})")
    try:
        sizes = SIZES if args.sizes is None else [int(s) for s in args.sizes.split(",")]
    except ValueError:
        sys.exit("peers.py: --sizes takes comma-separated whole numbers")
    without = [] if args.without is None else [a.strip() for a in args.without.split(",")]
    for a in without:
        if a not in LIBRARY + PEERS:
            sys.exit(f"peers.py: unknown algorithm '{a}' in --without")
    algorithms = [a for a in LIBRARY + PEERS if a not in without]
    if args.rounds < 1 or any(s < 1 for s in sizes) or (args.steps is not None and args.steps < 1):
        sys.exit("peers.py: --rounds, --sizes and --steps must be at least 1")
    if (args.warmup is not None and args.warmup < 0) or (
            args.max_step_ms is not None and not args.max_step_ms > 0):
        sys.exit("peers.py: --warmup must be at least 0 and --max-step-ms above 0")
    if not args.table_only:
        if not os.access(args.binary, os.X_OK):
            sys.exit(f"peers.py: no binary at {args.binary} (see the build command above)")
        own = {scene: own_sizes for scene, _, own_sizes in SCENES}
        # Small sizes first: the grid fills from the cheap cells up, in the order of --scenes.
        for size in sorted(sizes):
            for scene in scenes:
                if own[scene] and size not in own[scene]:
                    continue
                if args.force or not os.path.exists(csv_path(scene, size)):
                    measure(args.binary, scene, size, args.rounds, algorithms, args.steps,
                            args.warmup, args.max_step_ms, args.no_narrow)
                    write_table(args.rounds)
    write_table(args.rounds)


if __name__ == "__main__":
    main()
