#!/usr/bin/env bash
# Instructions per operation for a benchmark scenario, counted by valgrind's callgrind: stable on a shared,
# noisy machine where timings are not. Runs the scenario twice (N and 2N iterations) and divides the
# difference by N, so start-up and fixture loading cancel out. Splits the count into libcrypto and the rest;
# libcrypto's count includes the libc functions it calls itself (its allocations inside EVP_PKEY_verify), so
# that the raw primitive (`raw-rsa2048`) is all libcrypto and "outside libcrypto" is the toolkit's own work.
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
done
python3 - "$tmp/cg.1" "$tmp/cg.2" "$n" "$scenario" <<'PY'
# Reads callgrind's own output: each function's self cost (by object file and name), and the inclusive cost of
# every call from a libcrypto function into another object. What libcrypto asks of libc on its own behalf (the
# dozen allocations and frees, memset and memcpy inside one EVP_PKEY_verify: about 1,900 instructions an RSA
# verification) is libcrypto's work, not the pipeline's, and is counted with it.
import collections, os, re, sys

def load(path):
    names = {"ob": {}, "fn": {}}
    def name(kind, text):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", text)
        if not m:
            return text
        if m.group(2):
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), m.group(1))
    self_cost = collections.Counter()
    on_behalf = 0
    ob = fn = cob = None
    call_line = False
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("ob="):
            ob = name("ob", line[3:])
        elif line.startswith("fn="):
            fn = name("fn", line[3:])
            cob = None
        elif line.startswith("cob="):
            cob = name("ob", line[4:])
        elif line.startswith("cfn="):
            name("fn", line[4:])
        elif line.startswith("calls="):
            call_line = True
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            parts = line.split()
            cost = int(parts[1]) if len(parts) > 1 else 0
            if call_line:
                callee = cob if cob is not None else ob
                # Only calls into libc itself, which never calls back into libcrypto: a call through one of
                # valgrind's unnamed stubs would carry libcrypto's own instructions too.
                if "libcrypto" in (ob or "") and "/libc.so" in (callee or ""):
                    on_behalf += cost
                call_line = False
                cob = None
            else:
                self_cost[f"{fn} [{ob}]"] += cost
    return self_cost, on_behalf

(a, a_behalf), (b, b_behalf), n, scenario = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
diff = {k: (b.get(k, 0) - a.get(k, 0)) / n for k in set(a) | set(b)}
total = sum(diff.values())
crypto_self = sum(v for k, v in diff.items() if "libcrypto" in k)
behalf = (b_behalf - a_behalf) / n
crypto = crypto_self + behalf
print(f"{scenario}: {total:,.0f} instructions per operation; libcrypto {crypto:,.0f} "
      f"({behalf:,.0f} of them in libc, called by libcrypto); outside libcrypto {total - crypto:,.0f}")
for k, v in sorted(diff.items(), key=lambda kv: -kv[1])[:int(os.environ.get("IDTK_TOP", "25"))]:
    if abs(v) >= 50:
        print(f"  {v:10,.0f}  {k[:150]}")
PY
