#!/usr/bin/env python3
"""The gRPC door beside the HTTP door under load, on loopback: one `idtoken serve --grpc-listen` process, the same
valid Firebase token (static keys, so no fetch), `h2load` (nghttp2) sending the same `Check` call as gRPC over
HTTP/2 and `wrk` sending `GET /verify` over HTTP/1.1 keep-alive, each for a fixed number of seconds with the same
connections. Reports requests/s, the clients' latency (h2load: mean; wrk: p50 and p99) and the service's CPU time a
request (from /proc, user + system), the ratio that compares the doors on a shared machine.

Usage: python3 bench/grpc_load.py PATH/TO/idtoken [--seconds 10] [--connections 4] [--streams 16] [--threads 2]
(an idtoken built with the GRPC trait: scripts/package's .build/package/idtoken)
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from check_serve import Key, firebase_claims, firebase_config  # noqa: E402
from check_grpc import stubs  # noqa: E402


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--streams", type=int, default=16, help="concurrent streams a connection (h2load -m)")
    parser.add_argument("--threads", type=int, default=2, help="the service's event-loop threads")
    args = parser.parse_args()
    for tool in ("h2load", "wrk"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is not installed (apt-get install nghttp2-client wrk)")
    work = tempfile.mkdtemp(prefix="idtk-grpc-load-")
    stubs(work)
    from envoy.service.auth.v3 import external_auth_pb2 as auth
    serve = None
    try:
        key = Key("load-key")
        _, config = firebase_config(work, key)
        token = key.token(firebase_claims(exp=2_000_000_000))
        serve = subprocess.Popen([args.binary, "serve", "--config", config, "--listen", "127.0.0.1:0", "--grpc-listen",
                                  "127.0.0.1:0", "--threads", str(args.threads), "--log-level", "warning"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        http_port = int(serve.stdout.readline().decode().strip().rsplit(":", 1)[1])
        grpc_address = serve.stdout.readline().decode().strip().rsplit(" ", 1)[1]

        request = auth.CheckRequest()
        http = request.attributes.request.http
        http.method, http.path, http.host, http.protocol = "GET", "/app/orders", "app.example.com", "HTTP/1.1"
        http.headers["authorization"] = "Bearer " + token
        message = request.SerializeToString()
        body = os.path.join(work, "check.bin")
        with open(body, "wb") as f:
            f.write(b"\x00" + struct.pack(">I", len(message)) + message)   # gRPC length-prefixed message

        results = []
        for door, argv in (
            ("gRPC (h2load)", ["h2load", "-D", str(args.seconds), "-c", str(args.connections), "-m", str(args.streams),
                               "-d", body, "-H", "content-type: application/grpc", "-H", "te: trailers",
                               f"http://{grpc_address}/envoy.service.auth.v3.Authorization/Check"]),
            ("HTTP (wrk)", ["wrk", "-d", f"{args.seconds}s", "-c", str(args.connections * args.streams), "-t", "2",
                            "--latency", "-H", "Authorization: Bearer " + token, f"http://127.0.0.1:{http_port}/verify"]),
        ):
            before = cpu_seconds(serve.pid)
            output = subprocess.run(argv, capture_output=True, text=True).stdout
            cpu = cpu_seconds(serve.pid) - before
            if door.startswith("gRPC"):
                done = int(re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", output).group(2))
                rps = float(re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", output).group(1))
                mean = re.search(r"time for request:\s+\S+\s+\S+\s+(\S+)", output).group(1)
                latency = f"mean {mean}"
                requests = done
            else:
                requests = int(re.search(r"(\d+) requests in", output).group(1))
                rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
                p50 = re.search(r"50%\s+(\S+)", output).group(1)
                p99 = re.search(r"99%\s+(\S+)", output).group(1)
                latency = f"p50 {p50}, p99 {p99}"
            results.append((door, requests, rps, latency, cpu * 1e6 / max(requests, 1)))
        print(f"{'door':16} {'requests':>9} {'req/s':>9}  {'latency':24} {'service CPU a request':>22}")
        for door, requests, rps, latency, micros in results:
            print(f"{door:16} {requests:9d} {rps:9.0f}  {latency:24} {micros:19.1f} µs")
        print(f"gRPC / HTTP service CPU a request: {results[0][4] / results[1][4]:.2f}")
    finally:
        if serve:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
