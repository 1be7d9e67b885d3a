#!/usr/bin/env bash
# The batch path's figures (BENCHMARKS.md, "Batch verification end to end"), every one beside the single path's in
# the same run: each measurement runs the same binaries twice, with the CPU's choice (the IFMA kernel where the CPU
# has AVX-512 IFMA) and with IDTK_RSA_BATCH=libcrypto (one libcrypto call a token). Made for the lent 16-core Xeon
# (../shared/device/README.md), which has no Swift and no Python: everything it needs is built and packed here.
#
#   bench/batch_figures.sh pack        here: release builds, the open-loop client, serve's tokens, a 20,000-line
#                                      audit log, packed into .device/ (ignored by git) with ../shared/device/pack
#   bash bench/batch_figures.sh run    there (the device tool: carry [".device"]); about 4.5 minutes on 16 cores.
#                                      Runs here too, on what `pack` left in .build/batch-figures.
#
# What it prints, as Markdown tables, the CPU named first:
#   1. idtoken-bench: the kernel (raw-rsa2048-batch8) and whole Firebase tokens through the batch API
#      (verify-firebase-batch8) against raw-rsa2048, at 1 thread and at every core.
#   2. idtoken-bench --scenario audit (the 20,000 records, verdict cache off): records per CPU-second over raw's,
#      raw measured around each whole run of the audit.
#   3. idtoken audit of 200,000 records (IDTK_AUDIT_RECORDS) at 1, 2, 4, 8 and 16 threads (fewer on a smaller machine): wall and CPU
#      seconds, records per CPU-second and its ratio to one thread's (the goal: at least 0.9 at 16), peak RSS.
#   4. idtoken serve, distinct tokens, verified-token cache off, event loops on the first half of the cores and the
#      clients on the other half: wrk at 32 and 128 connections (requests/s, p50/p99, server CPU a request), then
#      the open-loop client (bench/tools/paced_client.c, Poisson arrivals, 64 connections) at half the
#      128-connection rate: p50/p99 (the goal: p99 at most 1 ms) and CPU a request.
#   5. idtoken serve with serve.appCheck (an ID token and a distinct App Check token a request, both signatures
#      verified, batched together on IFMA): wrk at 128 connections.
#   6. Both doors of idtoken serve on one event loop beside nginx's empty 200 (one worker), all on the same CPU: a
#      known token (verified-token cache on) and a token verified on every request (cache off; with the CPU's choice
#      and with libcrypto), over HTTP (wrk) and
#      over gRPC (h2load sending Envoy's Check call), at 32 and 128 requests in flight: server CPU a request and its
#      ratio to nginx's (bench/grpc_load.py's rows, on this machine).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}

if [ "$mode" = pack ]; then
    set -e
    cd "$here"
    out=.build/batch-figures
    rm -rf "$out"; mkdir -p "$out"
    swift build -c release --product idtoken
    swift build -c release --product idtoken-bench
    "${CC:-cc}" -O2 -o "$out/paced_client" bench/tools/paced_client.c -lm
    python3 bench/serve_bench.py --write-tokens "$out/serve" --tokens 4000
    # Section 6: the same configuration with the verified-token cache on, and Envoy's Check call for the first token.
    python3 - "$out/serve" <<'PY'
import json, os, sys, tempfile
sys.path.insert(0, "bench")
from grpc_load import write_check_body
directory = sys.argv[1]
configuration = json.load(open(os.path.join(directory, "serve.json")))
configuration["serve"]["verifiedTokenCache"] = 8192
json.dump(configuration, open(os.path.join(directory, "serve-known.json"), "w"))
token = open(os.path.join(directory, "repeat.txt")).read().split()[0]
write_check_body(tempfile.mkdtemp(), token, os.path.join(directory, "check.bin"))
PY
    python3 Vectors/tools/audit_log.py log --lines 20000 --out "$out/audit-20k.log" >/dev/null
    cp Vectors/samples/audit-config.json "$out/"
    cp -r Vectors/samples/keys "$out/keys"
    cp -r bench/fixtures "$out/fixtures"
    for tool in wrk time taskset h2load nginx; do
        type -P "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || { echo "$tool is missing (apt-get install wrk time util-linux nghttp2-client nginx)" >&2; exit 2; }
    done
    "${IDTK_DEVICE_PACK:-$here/../shared/device/pack}" .build/release/idtoken .build/release/idtoken-bench "$out/paced_client" \
        "$(type -P wrk)" "$(type -P time)" "$(type -P h2load)" "$(type -P nginx || echo /usr/sbin/nginx)" \
        --files "$out/audit-20k.log" "$out/audit-config.json" "$out/keys" "$out/fixtures" "$out/serve"
    echo "packed; on the lent machine: bash bench/batch_figures.sh run" >&2
    exit 0
fi
[ "$mode" = run ] || { sed -n '2,13p' "$0" >&2; exit 2; }

# The payload: .device/ on the lent machine, what `pack` built when run here.
if [ -f "$here/.device/env.sh" ] && [ -z "${PAYLOAD_FILES:-}" ] && [ ! -d "$here/.build/batch-figures" ]; then
    cd "$here" && source .device/env.sh
fi
files=${PAYLOAD_FILES:-$here/.build/batch-figures}
if [ -z "${PAYLOAD_FILES:-}" ]; then export PATH="$here/.build/release:$files:$PATH"; fi
gnutime=$(type -P time || true)
for tool in idtoken idtoken-bench paced_client wrk; do
    command -v "$tool" >/dev/null || { echo "$tool is not on PATH: run 'bench/batch_figures.sh pack' first" >&2; exit 2; }
done
[ -f "$files/audit-20k.log" ] && [ -f "$files/serve/serve-appcheck.json" ] || { echo "no payload in $files: run 'bench/batch_figures.sh pack'" >&2; exit 2; }

cores=$(nproc)
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $cores cores," \
     "AVX-512 IFMA: $(grep -q -m1 avx512ifma /proc/cpuinfo && echo yes || echo 'no (the first rows fall back to libcrypto too)')"
echo "binaries: $(idtoken --version 2>/dev/null | head -1)"
# "default" is what the binaries choose: the IFMA kernel where the CPU has it (named so in the tables), else libcrypto.
implementations="default libcrypto"
ifma=$(grep -q -m1 avx512ifma /proc/cpuinfo && echo "ifma" || echo "default (no IFMA: libcrypto)")
label() { [ "$1" = default ] && echo "$ifma" || echo "$1"; }
# env's arguments for an implementation: "default" unsets IDTK_RSA_BATCH whatever the caller's environment says.
implementation_env() { [ "$1" = default ] && echo "-u IDTK_RSA_BATCH" || echo "IDTK_RSA_BATCH=$1"; }
with() { local i=$1; shift; env $(implementation_env "$i") "$@"; }
work=$(mktemp -d); trap 'rm -rf "$work"; [ -n "${server:-}" ] && kill "$server" 2>/dev/null' EXIT

# What sections 4 to 6 share: the cores for the service and for its clients, a process's CPU ticks.
half=$(( cores / 2 > 0 ? cores / 2 : 1 ))
server_cpus="0-$(( half - 1 ))"; client_cpus="$half-$(( cores - 1 ))"
[ "$cores" -ge 2 ] || client_cpus=0
cpu_ticks() { awk '{ split($0, a, ") "); split(a[2], f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
ticks=$(getconf CLK_TCK)

# IDTK_FIGURES="2 3" runs those sections only (all by default): a lent machine's minutes are few.
wants() { [ -z "${IDTK_FIGURES:-}" ] || [[ " $IDTK_FIGURES " == *" $1 "* ]]; }
if wants 1; then
echo; echo "## 1. The kernel and the batch API (idtoken-bench, ratio to raw-rsa2048 in the same run)"
idtoken-bench --fixtures "$files/fixtures/tokens.json" --threads "1,$cores" --rounds 3 \
    --scenario raw-rsa2048-batch8 --scenario verify-firebase-batch8 2>&1 | grep -v '^  '
fi

if wants 2; then
echo; echo "## 2. The audit over raw, same run (idtoken-bench --scenario audit, 20,000 records, verdict cache off)"
for impl in $implementations; do
    echo "### $(label "$impl")"
    with "$impl" idtoken-bench --fixtures "$files/fixtures/tokens.json" --audit-log "$files/audit-20k.log" \
        --audit-config "$files/audit-config.json" --audit-cache 0 --scenario audit --threads "1,$cores" --rounds 3 2>&1 | grep -v '^  '
done
fi

if wants 3; then
# IDTK_AUDIT_RECORDS (a multiple of 20,000; 200,000 by default) sizes section 3's log: at 16 threads 200,000 records
# take a quarter of a second, start-up included, and 1,000,000 give a steadier per-CPU-second rate.
records=${IDTK_AUDIT_RECORDS:-200000}
[ $(( records % 20000 )) = 0 ] && [ "$records" -gt 0 ] || { echo "IDTK_AUDIT_RECORDS must be a multiple of 20000" >&2; exit 2; }
echo; echo "## 3. idtoken audit, $(printf "%'d" "$records") records, verdict cache off (and, last, on at its default size)"
for _ in $(seq $(( records / 20000 ))); do cat "$files/audit-20k.log"; done > "$work/audit.log"
echo "| implementation | threads | verdict cache | wall s | CPU s | records per CPU-second | ÷ 1 thread | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|"
audit_row() {   # implementation threads cache-option-or-empty
    local impl=$1 threads=$2 cache=${3:-}
    local options=(--threads "$threads" --output /dev/null --summary /dev/null)
    [ -n "$cache" ] && options+=(--verdict-cache "$cache")
    if [ -n "$gnutime" ]; then
        (cd "$files" && with "$impl" "$gnutime" -f "%e %U %S %M" -o "$work/time" idtoken audit --config audit-config.json \
            "${options[@]}" "$work/audit.log" >/dev/null 2>&1)
    else
        (cd "$files" && TIMEFORMAT="%R %U %S 0" && { time with "$impl" idtoken audit --config audit-config.json \
            "${options[@]}" "$work/audit.log" >/dev/null 2>&1; } 2> "$work/time")
    fi
    read -r wall user sys rss < <(tail -1 "$work/time")
    rate=$(awk -v n="$records" -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", n / (u + s) }')
    [ -n "$single" ] || single=$rate
    awk -v i="$(label "$impl")" -v t="$threads" -v c="${cache:-default}" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rate" \
        -v o="$single" -v m="$rss" \
        'BEGIN { printf "| %s | %d | %s | %.2f | %.2f | %d | %.2f | %s |\n", i, t, (c == "0" ? "off" : c), w, u + s, r, r / o, (m > 0 ? sprintf("%.0f", m / 1024) : "—") }'
}
for impl in $implementations; do
    single=""
    for threads in 1 2 4 8 16; do
        [ "$threads" -le "$cores" ] || continue
        audit_row "$impl" "$threads" 0
    done
    # The default verdict cache at the most threads: the memory the goal (at most 100 MB at 16 threads) is about.
    audit_row "$impl" "$(( cores < 16 ? cores : 16 ))"
done
fi

if wants 4; then
echo; echo "## 4. idtoken serve, distinct tokens, verified-token cache off"
echo "event loops: $half on CPUs $server_cpus; wrk (4 threads) and the paced client on CPUs $client_cpus"
tokens="$files/serve/distinct.txt"
wrk_run() {   # connections seconds, against the running $server on $port → "requests/s p50 p99 cpu-µs-a-request non2xx socket-errors"
    local before after
    before=$(cpu_ticks "$server")
    IDTK_TOKENS=$tokens IDTK_PATH=/verify IDTK_THREADS=4 taskset -c "$client_cpus" \
        wrk -t4 -c"$1" -d"$2"s -s "$files/serve/tokens.lua" "http://127.0.0.1:$port/verify" > "$work/wrk.out" 2>&1
    after=$(cpu_ticks "$server")
    awk -v b="$before" -v a="$after" -v t="$ticks" '/^IDTK / { printf "%.0f %d %d %.1f %d %d\n", $2 / ($3 / 1e6), $6, $8, (a - b) / t / $2 * 1e6, $4, $5 }' "$work/wrk.out"
}
start_serve() {   # implementation configuration → $server, $port
    (cd "$files/serve" && exec env $(implementation_env "$1") taskset -c "$server_cpus" \
        idtoken serve --config "$2" --listen 127.0.0.1:0 --threads "$half" --log-level error --at "$(cat at)") \
        > "$work/serve.out" 2> "$work/serve.err" &
    server=$!
    port=""
    for _ in $(seq 100); do port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/serve.out" | head -1); [ -n "$port" ] && break; sleep 0.1; done
    [ -n "$port" ] || { echo "idtoken serve did not start: $(cat "$work/serve.err")" >&2; exit 1; }
    wrk_run 32 1 >/dev/null   # warm-up
}
stop_serve() { kill "$server"; wait "$server" 2>/dev/null; server=""; }
echo "| implementation | load | requests/s | p50 / p99 µs | server CPU µs a request |"
echo "|---|---|---|---|---|"
for impl in $implementations; do
    start_serve "$impl" serve.json
    saturated=0
    for connections in 32 128; do
        read -r rps p50 p99 cpu non2xx errors < <(wrk_run "$connections" 4)
        [ "$non2xx" = 0 ] && [ "$errors" = 0 ] || echo "warning: $non2xx answers not 2xx, $errors socket errors" >&2
        echo "| $(label "$impl") | wrk, $connections connections | $rps | $p50 / $p99 | $cpu |"
        saturated=$rps
    done
    rate=$(( saturated / 2 ))
    before=$(cpu_ticks "$server")
    taskset -c "$client_cpus" paced_client "$port" /verify "$tokens" "$rate" 4 64 > "$work/paced.out" 2>&1
    after=$(cpu_ticks "$server")
    awk -v b="$before" -v a="$after" -v t="$ticks" -v i="$(label "$impl")" -v r="$rate" '/^PACED / {
        printf "| %s | open loop at %d/s (half of 128 connections) | %.0f | %d / %d | %.1f |\n", i, r, $2 / ($3 / 1e6), $6, $8, (a - b) / t / $12 * 1e6
        if ($4 + $5 > 0) printf "warning: %d answers not 2xx, %d errors\n", $4, $5 > "/dev/stderr" }' "$work/paced.out"
    stop_serve
done
fi

if wants 5; then
echo; echo "## 5. idtoken serve with serve.appCheck: an ID token and a distinct App Check token a request, both verified"
echo "| implementation | load | requests/s | p50 / p99 µs | server CPU µs a request (two signatures) |"
echo "|---|---|---|---|---|"
tokens="$files/serve/appcheck.txt"
for impl in $implementations; do
    start_serve "$impl" serve-appcheck.json
    read -r rps p50 p99 cpu non2xx errors < <(wrk_run 128 4)
    [ "$non2xx" = 0 ] && [ "$errors" = 0 ] || echo "warning: $non2xx answers not 2xx, $errors socket errors" >&2
    echo "| $(label "$impl") | wrk, 128 connections | $rps | $p50 / $p99 | $cpu |"
    stop_serve
done
fi

if wants 6; then
echo; echo "## 6. Both doors on one event loop beside nginx's empty 200 (bench/grpc_load.py's rows), all on CPU 0"
nginx_bin=$(type -P nginx || echo /usr/sbin/nginx)
echo "| server | tokens | in flight | requests/s | server CPU µs a request | ÷ nginx |"
echo "|---|---|---|---|---|---|"
known=$(head -1 "$files/serve/repeat.txt" | cut -d' ' -f1)
measure() {   # label tokens in-flight command... → a row; $server is the process measured
    local label=$1 tokens=$2 flight=$3 before after requests
    shift 3
    before=$(cpu_ticks "$server")
    taskset -c "$client_cpus" "$@" > "$work/load.out" 2>&1
    after=$(cpu_ticks "$server")
    requests=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p; s/^requests: [0-9]* total, [0-9]* started, [0-9]* done, \([0-9]*\) succeeded.*/\1/p' "$work/load.out" | head -1)
    [ -n "$requests" ] && [ "$requests" -gt 0 ] || { echo "warning: $label $tokens: no requests: $(tail -3 "$work/load.out")" >&2; return; }
    grep -q "Non-2xx" "$work/load.out" && echo "warning: $label $tokens: answers not 2xx" >&2
    awk -v l="$label" -v k="$tokens" -v f="$flight" -v n="$requests" -v b="$before" -v a="$after" -v t="$ticks" -v floor="${floor_us:-0}" \
        'BEGIN { us = (a - b) / t / n * 1e6; printf "| %s | %s | %d | %.0f | %.1f | %s |\n", l, k, f, n / 4, us, (floor > 0 ? sprintf("%.2f", us / floor) : "—") }'
    last_us=$(awk -v n="$requests" -v b="$before" -v a="$after" -v t="$ticks" 'BEGIN { printf "%.3f", (a - b) / t / n * 1e6 }')
}
mkdir -p "$work/nginx"/{tmp-body,tmp-proxy,tmp-fastcgi,tmp-uwsgi,tmp-scgi}
nginx_port=$(( 20000 + RANDOM % 20000 ))
cat > "$work/nginx/nginx.conf" <<NGINX
daemon off; master_process off; worker_processes 1; error_log $work/nginx/e.log error; pid $work/nginx/n.pid;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $work/nginx/tmp-body; proxy_temp_path $work/nginx/tmp-proxy;
  fastcgi_temp_path $work/nginx/tmp-fastcgi; uwsgi_temp_path $work/nginx/tmp-uwsgi; scgi_temp_path $work/nginx/tmp-scgi;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:$nginx_port; location / { return 200; } } }
NGINX
taskset -c 0 "$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" 2> "$work/nginx/start.err" &
server=$!
sleep 0.5
declare -A floors
for flight in 32 128; do
    floor_us=""
    measure nginx "empty 200" "$flight" wrk -t4 -c"$flight" -d4s -H "Authorization: Bearer $known" "http://127.0.0.1:$nginx_port/verify"
    floors[$flight]=$last_us
done
kill "$server"; wait "$server" 2>/dev/null; server=""
# The raw primitive on the same CPU, for DESIGN §18's distinct-token goal: raw + 1.5 × nginx's CPU a request.
raw_us=$(taskset -c 0 idtoken-bench --fixtures "$files/fixtures/tokens.json" --scenario raw-rsa2048 --threads 1 --rounds 3 2>&1 |
    awk '$1 == "raw-rsa2048" && $2 == 1 { printf "%.1f", 1e6 / $4 }')
for flight in 32 128; do
    echo "| raw-rsa2048 (libcrypto) | one verification | — | — | $raw_us | goal for a distinct token: $(awk -v r="$raw_us" -v n="${floors[$flight]}" 'BEGIN { printf "%.1f µs (raw + 1.5 × nginx at %d)", r + 1.5 * n, '"$flight"' }') |"
done
# A known token is answered from the verified-token cache, with no signature to verify: one row. A token verified on
# every request has a row for each implementation (DESIGN §18's distinct-token goal is for either).
for run in "serve-known.json default" "serve.json default" "serve.json libcrypto"; do
    read -r config impl <<< "$run"
    kind=$([ "$config" = serve-known.json ] && echo "known token" || echo "verified each time (cache off, $(label "$impl"))")
    (cd "$files/serve" && exec env $(implementation_env "$impl") taskset -c 0 idtoken serve --config "$config" --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 \
        --threads 1 --log-level error --at "$(cat at)") > "$work/serve.out" 2> "$work/serve.err" &
    server=$!
    port="" grpc=""
    for _ in $(seq 100); do
        port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/serve.out" | head -1)
        grpc=$(sed -n 's/^grpc listening on \(.*\)$/\1/p' "$work/serve.out" | head -1)
        [ -n "$port" ] && [ -n "$grpc" ] && break; sleep 0.1
    done
    [ -n "$port" ] && [ -n "$grpc" ] || { echo "idtoken serve did not start: $(cat "$work/serve.out" "$work/serve.err")" >&2; kill "$server"; continue; }
    for flight in 32 128; do
        floor_us=${floors[$flight]}
        measure "HTTP door" "$kind" "$flight" wrk -t4 -c"$flight" -d4s -H "Authorization: Bearer $known" "http://127.0.0.1:$port/verify"
        measure "gRPC door" "$kind" "$flight" h2load -D 4 -c $(( flight / 16 )) -m 16 -t 2 -d "$files/serve/check.bin" \
            -H "content-type: application/grpc" -H "te: trailers" "http://$grpc/envoy.service.auth.v3.Authorization/Check"
    done
    kill "$server"; wait "$server" 2>/dev/null; server=""
done
fi

echo; echo "== done"
