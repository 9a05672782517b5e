#!/usr/bin/env python3
"""Compares the speed of two builds on a noisy shared machine by alternating them.

Runs OLD and NEW with the same arguments for R rounds, in the order old-new, then new-old
(so that a drift of the machine's speed within a round favours neither). Prints each
binary's median time and the median and interquartile range of the per-round ratios
new/old: below 1 means NEW is faster.

The time of a run is the whole process's wall time, or, with --pattern, the first number
that the regular expression's first group captures in the run's output (for example
'wall ([0-9.]+) s' for the `calendar_profile` example, which times only its simulation).

    cargo build --release -p broadphase-ccd --example calendar_profile
    cp target/release/examples/calendar_profile /tmp/old   # then change, build, copy to /tmp/new
    scripts/ab.py /tmp/old /tmp/new --rounds 20 --pattern 'wall ([0-9.]+) s' -- 32768 0.3 2
"""

import argparse
import re
import statistics
import subprocess
import sys
import time


def run_once(binary, args, pattern):
    start = time.perf_counter()
    try:
        result = subprocess.run([binary, *args], capture_output=True, text=True)
    except OSError as error:
        sys.exit(f"ab.py: cannot run {binary}: {error.strerror}")
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"ab.py: {binary} exited with {result.returncode}: {result.stderr.strip()[:200]}")
    if pattern is None:
        return elapsed
    match = pattern.search(result.stdout)
    if match is None:
        sys.exit(f"ab.py: no match for the pattern in the output of {binary}")
    return float(match.group(1))


def quantile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], usage="%(prog)s OLD NEW [options] [-- ARGS...]"
    )
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--pattern", help="regular expression whose first group is the time")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    options = parser.parse_args(argv[:split])
    options.args = argv[split + 1 :]
    if options.rounds < 1:
        sys.exit("ab.py: --rounds must be at least 1")
    try:
        pattern = re.compile(options.pattern) if options.pattern else None
    except re.error as error:
        sys.exit(f"ab.py: bad --pattern: {error}")
    old_times, new_times = [], []
    for round_index in range(options.rounds):
        order = ["old", "new"] if round_index % 2 == 0 else ["new", "old"]
        for which in order:
            binary = options.old if which == "old" else options.new
            seconds = run_once(binary, options.args, pattern)
            (old_times if which == "old" else new_times).append(seconds)
    ratios = sorted(n / o for o, n in zip(old_times, new_times))
    print(
        f"old median {statistics.median(old_times):.4g} s, new median "
        f"{statistics.median(new_times):.4g} s, new/old per round: median "
        f"{statistics.median(ratios):.3f}, IQR {quantile(ratios, 0.25):.3f}-"
        f"{quantile(ratios, 0.75):.3f}, {len(ratios)} rounds"
    )


if __name__ == "__main__":
    main()
