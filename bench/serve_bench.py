#!/usr/bin/env python3
"""The `serve` benchmark: `idtoken serve` driven by wrk with keep-alive on loopback, beside nginx answering an empty
200 to the same wrk (the HTTP floor) and the raw RSA-2048 verify of `openssl speed` (the same libcrypto), all in
one run. Reports requests/s, the server process's CPU a request (user + system, from /proc), and wrk's p50/p99
latency at saturation and with one connection (a light load).

Usage: bench/serve_bench.py .build/release/idtoken [--seconds 5] [--connections 32] [--tokens 4000]
Bounded in time: about 7 × seconds + token signing (a few seconds) + 3 s of openssl.
"""
import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

PROJECT = "bench-serve-project"
TICKS = os.sysconf("SC_CLK_TCK")

LUA = """
local tokens = {}
for line in io.lines(os.getenv("IDTK_TOKENS")) do tokens[#tokens + 1] = line end
local i = 0
request = function()
  i = i % #tokens + 1
  return wrk.format("GET", "/verify", {["Authorization"] = "Bearer " .. tokens[i]})
end
"""


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def wrk(port, seconds, connections, threads, script=None, env=None):
    command = ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds, "--latency"]
    if script:
        command += ["-s", script]
    command.append("http://127.0.0.1:%d/verify" % port)
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)

    def percentile(p):
        m = re.search(r"\s%s%%\s+([\d.]+)(us|ms|s)\b" % p, out)
        value, unit = float(m.group(1)), m.group(2)
        return value * {"us": 1, "ms": 1000, "s": 1_000_000}[unit]

    return {"requests": requests, "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50_us": percentile(50), "p99_us": percentile(99), "non2xx": int(non2xx.group(1)) if non2xx else 0}


def measure(pid, port, seconds, connections, script=None, env=None):
    saturated_cpu = cpu_seconds(pid)
    saturated = wrk(port, seconds, connections, 2, script, env)
    saturated["cpu_us_per_request"] = (cpu_seconds(pid) - saturated_cpu) / saturated["requests"] * 1e6
    light = wrk(port, max(2, seconds // 2), 1, 1, script, env)
    return saturated, light


def start_serve(binary, config):
    process = subprocess.Popen([binary, "serve", "--config", config, "--listen", "127.0.0.1:0", "--log-level", "error"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = process.stdout.readline().decode()
    return process, int(line.strip().rsplit(":", 1)[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=4000)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="serve-bench-")
    try:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        numbers = key.public_key().public_numbers()
        jwk = {"kty": "RSA", "kid": "bench-1", "use": "sig", "alg": "RS256",
               "n": b64url(numbers.n.to_bytes(256, "big")), "e": b64url(numbers.e.to_bytes(3, "big"))}
        with open(os.path.join(work, "keys.json"), "w") as f:
            json.dump({"keys": [jwk]}, f)
        header = b64url(json.dumps({"alg": "RS256", "kid": "bench-1", "typ": "JWT"}).encode())
        now = int(time.time())
        distinct, invalid = [], []
        for i in range(args.tokens):
            claims = {"iss": "https://securetoken.google.com/" + PROJECT, "aud": PROJECT, "sub": "user-%06d" % i,
                      "name": "Bench User %d" % i, "email": "user%d@example.com" % i, "email_verified": True,
                      "iat": now - 60, "exp": now + 3000, "auth_time": now - 60,
                      "firebase": {"sign_in_provider": "google.com", "identities": {"email": ["user%d@example.com" % i]}}}
            signing_input = header + "." + b64url(json.dumps(claims).encode())
            signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
            distinct.append(signing_input + "." + b64url(signature))
            invalid.append(signing_input + "." + b64url(bytes([signature[0] ^ 1]) + signature[1:]))
        for name, tokens in (("distinct", distinct), ("repeat", distinct[:1]), ("invalid", invalid)):
            with open(os.path.join(work, name + ".txt"), "w") as f:
                f.write("\n".join(tokens) + "\n")
        script = os.path.join(work, "tokens.lua")
        with open(script, "w") as f:
            f.write(LUA)

        results = {}
        for scenario, cache in (("distinct", 0), ("repeat", 8192), ("invalid", 0)):
            config = os.path.join(work, "serve-%s.json" % scenario)
            with open(config, "w") as f:
                json.dump({"profiles": [{"provider": "firebase", "projectId": PROJECT, "keys": "keys.json"}],
                           "serve": {"verifiedTokenCache": cache, "maxConnections": 1000}}, f)
            process, port = start_serve(args.binary, config)
            try:
                env = dict(os.environ, IDTK_TOKENS=os.path.join(work, scenario + ".txt"))
                results[scenario] = measure(process.pid, port, args.seconds, args.connections, script, env)
            finally:
                process.terminate()
                process.wait()

        # nginx answering an empty 200, driven the same way: the HTTP floor on this machine.
        for sub in ("tmp-body", "tmp-proxy", "tmp-fastcgi", "tmp-uwsgi", "tmp-scgi"):
            os.makedirs(os.path.join(work, sub), exist_ok=True)
        nginx_port = 20000 + os.getpid() % 20000
        with open(os.path.join(work, "nginx.conf"), "w") as f:
            f.write("""daemon off; master_process off; worker_processes 1; error_log %(w)s/e.log error; pid %(w)s/n.pid;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path %(w)s/tmp-body; proxy_temp_path %(w)s/tmp-proxy;
  fastcgi_temp_path %(w)s/tmp-fastcgi; uwsgi_temp_path %(w)s/tmp-uwsgi; scgi_temp_path %(w)s/tmp-scgi;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:%(p)d; location / { return 200; } } }
""" % {"w": work, "p": nginx_port})
        nginx = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-p", work, "-c", os.path.join(work, "nginx.conf")],
                                 stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        try:
            results["nginx-empty-200"] = measure(nginx.pid, nginx_port, args.seconds, args.connections)
        finally:
            nginx.terminate()
            nginx.wait()

        speed = subprocess.run(["openssl", "speed", "-seconds", "3", "-mr", "rsa2048"], capture_output=True, text=True).stdout
        match = re.search(r"\+F2:\d+:2048:([\d.]+):([\d.]+)", speed)
        raw_verify_us = float(match.group(2)) if match else float("nan")
        if match and raw_verify_us > 1:   # -mr gives seconds per op in newer versions, ops/s otherwise
            raw_verify_us = 1e6 / raw_verify_us
        else:
            raw_verify_us *= 1e6

        floor = results["nginx-empty-200"][0]["cpu_us_per_request"]
        print("| scenario | requests/s (2 wrk threads, %d conns) | server CPU µs/request | p50 µs | p99 µs | 1 conn: requests/s, p50 µs, p99 µs | non-2xx |"
              % args.connections)
        print("|---|---|---|---|---|---|---|")
        for name, (saturated, light) in results.items():
            print("| %s | %.0f | %.1f | %.0f | %.0f | %.0f, %.0f, %.0f | %d |" % (
                name, saturated["rps"], saturated["cpu_us_per_request"], saturated["p50_us"], saturated["p99_us"],
                light["rps"], light["p50_us"], light["p99_us"], saturated["non2xx"]))
        print()
        print("raw RSA-2048 verify (openssl speed, same libcrypto): %.1f µs" % raw_verify_us)
        distinct_cpu = results["distinct"][0]["cpu_us_per_request"]
        repeat_cpu = results["repeat"][0]["cpu_us_per_request"]
        print("distinct token: %.1f µs CPU/request; target raw + 1.5 × nginx = %.1f µs (%s)" % (
            distinct_cpu, raw_verify_us + 1.5 * floor, "met" if distinct_cpu <= raw_verify_us + 1.5 * floor else "not met"))
        print("token seen before: %.1f µs CPU/request; target 2 × nginx = %.1f µs (%s)" % (
            repeat_cpu, 2 * floor, "met" if repeat_cpu <= 2 * floor else "not met"))
        print("requests per server CPU-second: distinct %.0f, seen before %.0f; raw verifies per CPU-second %.0f" % (
            1e6 / distinct_cpu, 1e6 / repeat_cpu, 1e6 / raw_verify_us))
        with open(os.path.join(os.getcwd(), "serve-bench.json"), "w") as f:
            json.dump({"results": results, "raw_verify_us": raw_verify_us}, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
