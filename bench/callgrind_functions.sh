#!/usr/bin/env bash
# Inclusive instructions per operation of each function of a benchmark scenario, by callgrind: what a function and
# everything it calls cost, for before-and-after tables of where a change took instructions off (the closing notes
# of performance work give them). Like bench/callgrind.sh, runs the scenario for N and 2N iterations and divides the
# difference by N, so start-up and fixture loading cancel out; names are demangled (swift demangle --simplified).
#
# Usage: bench/callgrind_functions.sh SCENARIO [N] [REGEX]   (build first: swift build -c release --product idtoken-bench)
#   REGEX keeps only the functions whose demangled name matches it (Python syntax), e.g. 'CompactJWS|JSONReader'.
#   IDTK_MIN (default 40) drops functions under that many instructions an operation; functions in libcrypto are
#   marked [libcrypto]. The audit scenario reads IDTK_BENCH_AUDIT_LOG, as bench/callgrind.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:?usage: bench/callgrind_functions.sh SCENARIO [N] [REGEX]}
n=${2:-200}
pattern=${3:-}
bin=${IDTK_BENCH_BIN:-.build/release/idtoken-bench}
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 2; }
command -v callgrind_annotate >/dev/null || { echo "callgrind_annotate is missing: apt-get install valgrind" >&2; exit 2; }
[ -x "$bin" ] || { echo "$bin is missing: swift build -c release --product idtoken-bench" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The same stripped copy as bench/callgrind.sh: valgrind misreads some dependencies' DWARF; the symbols stay.
objcopy --strip-debug "$bin" "$tmp/idtoken-bench"
for k in 1 2; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$k" "$tmp/idtoken-bench" --scenario "$scenario" \
        --iterations $((n * k)) >/dev/null 2>&1
    callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg.$k" >"$tmp/annotated.$k" 2>/dev/null
done
python3 - "$tmp/annotated.1" "$tmp/annotated.2" "$n" "$pattern" <<'PY'
import os, re, subprocess, sys

def load(path):
    costs = {}
    for line in open(path):
        match = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
        if match:
            name = match.group(2)
            costs[name] = costs.get(name, 0) + int(match.group(1).replace(",", ""))
    return costs

first, second, n, pattern = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
minimum = float(os.environ.get("IDTK_MIN", "40"))
per_op = {name: (second.get(name, 0) - first.get(name, 0)) / n for name in set(first) | set(second)}
kept = [(name, cost) for name, cost in per_op.items() if cost >= minimum]
# "file:function [object]" as callgrind_annotate writes it: the function's name, then demangled all at once.
raw = [name.split(" [")[0].split(":")[-1] for name, _ in kept]
demangled = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(raw),
                           capture_output=True, text=True).stdout.split("\n") if raw else []
rows = []
for (name, cost), plain in zip(kept, demangled):
    if pattern and not re.search(pattern, plain):
        continue
    rows.append((cost, plain + (" [libcrypto]" if "libcrypto" in name else "")))
for cost, plain in sorted(rows, key=lambda row: -row[0]):
    print(f"{cost:10,.0f}  {plain[:180]}")
PY
