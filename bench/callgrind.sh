#!/usr/bin/env bash
# Instructions per operation for a benchmark scenario, counted by valgrind's callgrind: stable on a shared,
# noisy machine where timings are not. Runs the scenario twice (N and 2N iterations) and divides the
# difference by N, so start-up and fixture loading cancel out. Splits the count into libcrypto and the rest.
#
# Usage: bench/callgrind.sh SCENARIO [N]      (build first: swift build -c release --product idtoken-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:?usage: bench/callgrind.sh SCENARIO [N]}
n=${2:-200}
bin=${IDTK_BENCH_BIN:-.build/release/idtoken-bench}
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 2; }
[ -x "$bin" ] || { echo "$bin is missing: swift build -c release --product idtoken-bench" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# valgrind 3.19 reads the DWARF of some of the binary's dependencies as "possibly corrupted"; a copy without
# debug info measures the same instructions and keeps the symbol names.
objcopy --strip-debug "$bin" "$tmp/idtoken-bench"
bin="$tmp/idtoken-bench"
for k in 1 2; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$k" "$bin" --scenario "$scenario" --iterations $((n * k)) >/dev/null 2>&1
    callgrind_annotate --auto=no --threshold=100 "$tmp/cg.$k" 2>/dev/null > "$tmp/an.$k"
done
python3 - "$tmp/an.1" "$tmp/an.2" "$n" "$scenario" <<'PY'
import re, sys
def load(path):
    rows = {}
    for line in open(path):
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
        if m and "PROGRAM TOTALS" not in m.group(2):
            rows[m.group(2)] = rows.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return rows
a, b, n, name = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
diff = {k: (b.get(k, 0) - a.get(k, 0)) / n for k in set(a) | set(b)}
total = sum(diff.values())
crypto = sum(v for k, v in diff.items() if "libcrypto" in k)
print(f"{name}: {total:,.0f} instructions per operation; libcrypto {crypto:,.0f}; outside libcrypto {total - crypto:,.0f}")
for k, v in sorted(diff.items(), key=lambda kv: -kv[1])[:int(__import__("os").environ.get("IDTK_TOP", "25"))]:
    if abs(v) >= 50:
        print(f"  {v:10,.0f}  {k[:150]}")
PY
