#!/usr/bin/env bash
# The Vapor integration against vapor/jwt 5.2 over HTTP, driven by wrk on loopback: the same Firebase ID token
# (fresh, signed with the test key), the same Vapor server and route, three verifiers (see
# bench/peers/VaporServers/Sources/vapor-peer-server/main.swift). Prints requests/s and p99 for each.
# Usage: bench/peers/vapor-wrk.sh [SECONDS] [CONNECTIONS]    (needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
connections=${2:-32}
port=${BENCH_PORT:-18080}
package=bench/peers/VaporServers
swift build -c release --package-path "$package" >&2
server="$package/.build/release/vapor-peer-server"
token=$(python3 bench/peers/firebase_token.py)
printf '%-20s %12s %10s %10s\n' mode "requests/s" p50 p99
for mode in idtokenkit jwt-loaded jwt-firebase-auth; do
    BENCH_MODE=$mode BENCH_PORT=$port BENCH_JWKS=Vectors/generated/keysets/firebase_jwks.json \
        "$server" serve --hostname 127.0.0.1 --port "$port" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do curl -sf -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$port/me" && break; sleep 0.1; done
    [ "$(curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/me")" = bench-user-1 ] || {
        echo "error: $mode did not verify the token" >&2; kill "$pid"; exit 1; }
    wrk -t1 -c"$connections" -d2s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/me" >/dev/null   # warm-up
    out=$(wrk -t1 -c"$connections" -d"${seconds}s" --latency -H "Authorization: Bearer $token" "http://127.0.0.1:$port/me")
    kill "$pid"; wait "$pid" 2>/dev/null || true
    if echo "$out" | grep -q 'Non-2xx'; then echo "error: $mode answered non-2xx: $out" >&2; exit 1; fi
    rps=$(echo "$out" | awk '/^Requests\/sec/ {print $2}')
    p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
    p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
    printf '%-20s %12s %10s %10s\n' "$mode" "$rps" "$p50" "$p99"
done
