#!/usr/bin/env python3
"""Both doors of `idtoken serve` under load on loopback, beside nginx's empty 200 (the HTTP floor) and libcrypto's raw
RSA-2048 verify: one `idtoken serve --grpc-listen` process per cache setting, one valid Firebase token (static keys,
so no fetch), `h2load` (nghttp2) sending Envoy's `Check` call as gRPC over HTTP/2 and `wrk` sending `GET /verify` over
HTTP/1.1 keep-alive, each for a fixed number of seconds with as many requests in flight (connections × streams).

Rows: "known token" (the verified-token cache on: what a mesh sees, the same token on every request of a session) and
"distinct token" (the cache off, `serve.verifiedTokenCache: 0`: every request verifies the signature, as a token not
seen before does), for each door; then the gRPC door at half its saturating rate (h2load --rps, each request's time
from its log: p50 and p99), and one request at a time on one connection to nginx and to each door with the known token
(p50 and p99 of the round trip: the latency the machine's loopback and scheduler give any server, the floor under
that p99). Reported: requests/s, the clients' latency, and the server's CPU time a request (user + system from
/proc), the figure that compares the doors on a shared machine; the ratios DESIGN §9/§18 and issue 42 set: known
token / nginx, distinct token against raw + 1.5 × nginx, gRPC / HTTP.

--pin runs the service, nginx and openssl on the last CPU and h2load and wrk on the others (give --threads 1), so that
the latencies are not the clients' and the service's threads taking turns on one core.

Usage: python3 bench/grpc_load.py PATH/TO/idtoken [--seconds 10] [--connections 4] [--streams 16] [--threads 2] [--rounds 1] [--pin]
(a release build: `swift build -c release --product idtoken`, or scripts/package's .build/package/idtoken)
"""
import argparse
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from check_serve import Key, firebase_claims, firebase_config  # noqa: E402
from check_grpc import stubs  # noqa: E402
from serve_bench import PINNING, free_port, nginx_argv, pin_to_last_cpu, pinned  # noqa: E402


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def h2load(args, grpc_address, body, log=None, rps=None, single=False):
    """h2load for `args.seconds`; `single`: one connection with one call at a time (the round trip)."""
    connections, streams = (1, 1) if single else (args.connections, args.streams)
    argv = ["h2load", "-D", str(args.seconds), "-c", str(connections), "-m", str(streams), "-t", "1",
            "-d", body, "-H", "content-type: application/grpc", "-H", "te: trailers"]
    if log:
        argv += ["--log-file", log]
    if rps:
        argv += ["--rps", str(max(1, int(rps / connections)))]
    return subprocess.run(pinned(argv + [f"http://{grpc_address}/envoy.service.auth.v3.Authorization/Check"], "client"),
                          capture_output=True, text=True).stdout


def wrk(args, port, token=None, single=False):
    """wrk for `args.seconds`; `single`: one connection (the round trip)."""
    argv = ["wrk", "-d", f"{args.seconds}s", "-c", "1" if single else str(args.connections * args.streams), "-t", "1", "--latency"]
    if token:
        argv += ["-H", "Authorization: Bearer " + token]
    return subprocess.run(pinned(argv + [f"http://127.0.0.1:{port}/verify"], "client"), capture_output=True, text=True).stdout


def logged_micros(args, grpc_address, body, work, **options):
    """Each call's time in µs, from the log of an h2load run with `options` (rps=, single=)."""
    log = os.path.join(work, "h2load.log")
    if os.path.exists(log):
        os.unlink(log)
    h2load(args, grpc_address, body, log=log, **options)
    return [int(line.split("\t")[2]) for line in open(log) if line.count("\t") >= 2]


def wrk_p50_p99(output):
    """The p50 and p99 in µs of wrk's latency distribution."""
    micros = []
    for name in ("50", "99"):
        value, unit = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)" % name, output, re.M).groups()
        micros.append(float(value) * {"us": 1, "ms": 1e3, "s": 1e6}[unit])
    return tuple(micros)


def measured(pid, run):
    """(requests, requests/s, latency text, µs of the server's CPU a request) of one timed run."""
    before = cpu_seconds(pid)
    output = run()
    cpu = cpu_seconds(pid) - before
    if "h2load" in output or "finished in" in output:
        match = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", output)
        if not match or int(match.group(2)) == 0:
            raise SystemExit("h2load failed:\n" + output)
        requests = int(match.group(2))
        rps = float(re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", output).group(1))
        latency = "mean " + re.search(r"time for request:\s+\S+\s+\S+\s+(\S+)", output).group(1)
    else:
        requests = int(re.search(r"(\d+) requests in", output).group(1))
        if "Non-2xx" in output:
            raise SystemExit("wrk saw refusals:\n" + output)
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
        # The latency distribution's rows ("     50%  560.00us"), not a "+/- Stdev" column that ends in "50%".
        latency = "p50 %s, p99 %s" % (re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1),
                                      re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1))
    return requests, rps, latency, cpu * 1e6 / max(requests, 1)


def nginx_floor(args, work, body=0, trip=None):
    """nginx answering 200 with `body` bytes of body (0: the empty 200, the HTTP floor); with a dict `trip`, its round
    trip (one request at a time) is measured too, into trip["nginx"]."""
    port = free_port()
    nginx = subprocess.Popen(pinned(nginx_argv(work, port, body), "server"), stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        if trip is not None:
            trip["nginx"] = wrk_p50_p99(wrk(args, port, single=True))
        return measured(nginx.pid, lambda: wrk(args, port))
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)


def raw_verify_us():
    speed = subprocess.run(pinned(["openssl", "speed", "-seconds", "3", "-mr", "rsa2048"], "server"), capture_output=True, text=True).stdout
    match = re.search(r"\+F2:\d+:2048:([\d.]+):([\d.]+)", speed)
    value = float(match.group(2)) if match else float("nan")
    return 1e6 / value if match and value > 1 else value * 1e6   # -mr: seconds an op in newer versions, ops/s before


def write_check_body(work, token, path):
    """Writes to `path` the gRPC request body h2load sends: a `CheckRequest` shaped as Envoy sends one (the request's
    headers, `token` in Authorization), after gRPC's 5-byte length prefix. Returns `path`."""
    stubs(work)
    from envoy.service.auth.v3 import external_auth_pb2 as auth
    request = auth.CheckRequest()
    http = request.attributes.request.http
    http.method, http.path, http.host, http.protocol = "GET", "/app/orders", "app.example.com", "HTTP/1.1"
    http.headers["authorization"] = "Bearer " + token
    for name, value in (("user-agent", "Mozilla/5.0 (bench)"), ("accept", "application/json"), ("x-request-id", "4f1c2d"),
                        (":authority", "app.example.com"), (":method", "GET"), (":path", "/app/orders"), ("x-forwarded-proto", "https")):
        http.headers[name] = value
    message = request.SerializeToString()
    with open(path, "wb") as f:
        f.write(b"\x00" + struct.pack(">I", len(message)) + message)   # gRPC length-prefixed message
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--streams", type=int, default=16, help="concurrent streams a connection (h2load -m); wrk gets connections × streams connections")
    parser.add_argument("--threads", type=int, default=2, help="the service's event-loop threads")
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat the whole measurement (nginx, both doors, raw) and print each ratio's median over the rounds")
    parser.add_argument("--libcrypto", action="store_true",
                        help="signatures one at a time through libcrypto, as on a CPU without AVX-512 IFMA (IDTK_RSA_BATCH=libcrypto)")
    parser.add_argument("--pin", action="store_true",
                        help="the service, nginx and openssl on the last CPU, h2load and wrk on the others (with --threads 1)")
    args = parser.parse_args()
    if args.pin:
        pin_to_last_cpu()
    for tool in ("h2load", "wrk", "nginx"):
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            raise SystemExit(f"{tool} is not installed (apt-get install nghttp2-client wrk nginx)")
    work = tempfile.mkdtemp(prefix="idtk-grpc-load-")
    try:
        key = Key("load-key")
        _, config = firebase_config(work, key)
        with open(config) as f:
            base = json.load(f)
        token = key.token(firebase_claims(exp=2_000_000_000))

        body = write_check_body(work, token, os.path.join(work, "check.bin"))

        summary = []
        for round_number in range(args.rounds):
            if args.rounds > 1:
                print(f"round {round_number + 1} of {args.rounds}")
            rows, trip = {}, {}
            half = None
            for label, cache in (("known token", 8192), ("distinct token", 0)):
                configuration = dict(base, serve={"verifiedTokenCache": cache})
                path = os.path.join(work, f"serve-{cache}.json")
                with open(path, "w") as f:
                    json.dump(configuration, f)
                serve = subprocess.Popen(pinned([args.binary, "serve", "--config", path, "--listen", "127.0.0.1:0", "--grpc-listen",
                                                 "127.0.0.1:0", "--threads", str(args.threads), "--log-level", "warning"], "server"),
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         env=dict(os.environ, IDTK_RSA_BATCH="libcrypto") if args.libcrypto else None)
                try:
                    http_port = int(serve.stdout.readline().decode().strip().rsplit(":", 1)[1])
                    grpc_address = serve.stdout.readline().decode().strip().rsplit(" ", 1)[1]
                    rows[("HTTP", label)] = measured(serve.pid, lambda: wrk(args, http_port, token))
                    rows[("gRPC", label)] = measured(serve.pid, lambda: h2load(args, grpc_address, body))
                    if cache:
                        # The round trip of one request at a time on each door: the machine's own latency floor.
                        trip["HTTP"] = wrk_p50_p99(wrk(args, http_port, token, single=True))
                        times = logged_micros(args, grpc_address, body, work, single=True)
                        trip["gRPC"] = (percentile(times, 0.5), percentile(times, 0.99))
                        # Half the gRPC door's saturating rate, open loop per client: each request's time from h2load's log.
                        rate = rows[("gRPC", label)][1] / 2
                        times = logged_micros(args, grpc_address, body, work, rps=rate)
                        half = (rate, len(times), percentile(times, 0.5), percentile(times, 0.99))
                finally:
                    serve.send_signal(signal.SIGTERM)
                    serve.wait(timeout=30)
            floor = nginx_floor(args, work, trip=trip)
            # nginx sending as many bytes as the HTTP door's allow answer (595 for this token: the identity headers and
            # X-Auth-Claims): what the kernel's loopback path costs for the answer's size alone, with no work.
            sized = nginx_floor(args, work, body=595 - 149)
            raw = raw_verify_us()

            in_flight = args.connections * args.streams
            print(f"{in_flight} requests in flight: h2load {args.connections} connections × {args.streams} streams; "
                  f"wrk {in_flight} connections; the service on {args.threads} event-loop threads"
                  + (", signatures through libcrypto one at a time" if args.libcrypto else "")
                  + (f"; pinned: servers on CPU {PINNING['server'][0]}, clients on the others" if args.pin else ""))
            print(f"| {'door':5} | {'tokens':15} | {'requests':>9} | {'req/s':>8} | {'latency':26} | server CPU µs a request |")
            print("|---|---|---:|---:|---|---:|")
            print(f"| nginx | empty 200 (floor) | {floor[0]:9d} | {floor[1]:8.0f} | {floor[2]:26} | {floor[3]:.1f} |")
            print(f"| nginx | 200, 595 bytes   | {sized[0]:9d} | {sized[1]:8.0f} | {sized[2]:26} | {sized[3]:.1f} |")
            for (door, label), (requests, rps, latency, micros) in rows.items():
                print(f"| {door:5} | {label:15} | {requests:9d} | {rps:8.0f} | {latency:26} | {micros:.1f} |")
            print(f"| raw   | RSA-2048 verify (openssl speed) | | | | {raw:.1f} |")
            nginx_us = floor[3]
            for door in ("HTTP", "gRPC"):
                known, distinct = rows[(door, "known token")][3], rows[(door, "distinct token")][3]
                print(f"{door}: known token {known / nginx_us:.2f} × nginx (goal ≤ 1.25); distinct token {distinct:.1f} µs against "
                      f"raw + 1.5 × nginx = {raw + 1.5 * nginx_us:.1f} µs")
            for label in ("known token", "distinct token"):
                print(f"gRPC / HTTP server CPU a request, {label}: {rows[('gRPC', label)][3] / rows[('HTTP', label)][3]:.2f} (goal ≤ 1.5)")
            if half:
                print(f"gRPC at half saturation ({half[0]:.0f} calls/s, {half[1]} calls): p50 {half[2] / 1000:.2f} ms, "
                      f"p99 {half[3] / 1000:.2f} ms (goal p99 ≤ 1 ms)")
            if len(trip) == 3:
                print("one request at a time on one connection, known token (the machine's round trip), p50 / p99 µs: "
                      + ", ".join(f"{name} {trip[name][0]:.0f} / {trip[name][1]:.0f}" for name in ("nginx", "HTTP", "gRPC")))
            summary.append(dict(known=rows[("HTTP", "known token")][3] / floor[3],
                                distinct=rows[("HTTP", "distinct token")][3] - raw - 1.5 * floor[3],
                                grpc=rows[("gRPC", "known token")][3] / rows[("HTTP", "known token")][3],
                                p99=half[3] / 1000 if half else float("nan")))
        if args.rounds > 1:
            # Each ratio's median over the rounds: nginx's own figure moves by a fifth from run to run here.
            def median(name):
                values = sorted(r[name] for r in summary)
                return values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
            print(f"over {args.rounds} rounds, medians: HTTP known token {median('known'):.2f} × nginx (goal ≤ 1.25); "
                  f"HTTP distinct token {median('distinct'):+.1f} µs beyond raw + 1.5 × nginx (goal ≤ 0); "
                  f"gRPC / HTTP known token {median('grpc'):.2f} (goal ≤ 1.5); gRPC p99 at half saturation {median('p99'):.2f} ms (goal ≤ 1)")
            print("rounds: " + "; ".join(f"{r['known']:.2f} ×, {r['distinct']:+.1f} µs, {r['grpc']:.2f}, {r['p99']:.2f} ms" for r in summary))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
