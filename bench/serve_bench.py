#!/usr/bin/env python3
"""The `serve` benchmark and its peers: HTTP servers that verify Firebase ID tokens, driven by wrk with keep-alive
on loopback, one after the other in one run, with the same RS256 tokens signed here with a fresh TEST-ONLY key:

  idtoken serve             `idtoken serve` (release), one Firebase profile, keys from a file
  IDTokenKitVapor           the Vapor integration's authenticator and guard, keys loaded once   } bench/peers/
  vapor/jwt, keys loaded    Vapor + vapor/jwt 5.2, `req.jwt.verify(as: FirebaseAuthIdentityToken.self)` } VaporServers
  vapor/jwt firebaseAuth    vapor/jwt's documented `req.jwt.firebaseAuth.verify()`                 } (--vapor-peer)
  Vapor, no verification    the same Vapor route answering a constant: the framework's own cost (--vapor-peer)
  nginx, empty 200          the HTTP floor: nginx answering 200 to the same requests
  raw RSA-2048 verify       `openssl speed rsa2048` (the same libcrypto)

Tokens: "distinct" cycles through N different valid tokens (a wrk Lua script; each wrk thread starts at its own
place in the list) with every verified-token cache off, so that every request verifies a signature; "repeat" sends
one token over and over, with the verified-token cache on where the server has one (idtoken serve,
IDTokenKitVapor; vapor/jwt has none); "invalid" is the distinct tokens with one signature bit flipped (401). Two
more `idtoken serve` rows send the distinct tokens another way: in a session cookie after two other cookies
(serve.cookies), and each beside a distinct Firebase App Check token (serve.appCheck: two signatures a request).
Before timing, each server is asked for three tokens and must answer 2xx with the token's subject (401 for the
invalid ones); during timing every answer must be 2xx (non-2xx for the invalid ones), else the run fails.

Reported per row: requests/s and wrk's p50/p99/p99.9 latency with `--connections` connections and 2 wrk threads
(saturation), the server process's CPU a request (user + system from /proc, kernel included, over the saturated
run), and the same with one connection (a light load). With --rounds R every row is measured R times, the rows
interleaved, and the median is shown.

--paced adds `idtoken serve` with distinct tokens at 50 % and 90 % of its measured saturating rate, and nginx at the
same two rates beside it (the machine's own floor for the tail). wrk cannot hold a request rate (it keeps a fixed
number of requests in flight, and its Lua delay() counts whole milliseconds, so a paced wrk sends each
millisecond's requests together and measures its own bursts), so these rows use bench/tools/paced_client.c,
compiled here with cc: an open-loop client that sends at times drawn from a Poisson process at the rate, over 64
connections, and times each answer from when its request was due, waiting included (no coordinated omission).

--pin gives the server and the client cores of their own: every server runs on the last CPU (`idtoken serve` with
`--threads 1`, nginx with its one worker), wrk on the others with one thread. Without it, wrk's threads and the
server's event loops share every core, and the latency percentiles measure the scheduler as much as the server.

Usage: bench/serve_bench.py .build/release/idtoken [--vapor-peer bench/peers/VaporServers/.build/release/vapor-peer-server]
           [--seconds 5] [--connections 32] [--tokens 4000] [--rounds 1] [--paced] [--pin] [--json serve-bench.json]
Bounded in time: per round about 1.5 × seconds + 3 s per row (12 rows with --vapor-peer, 6 without), then 3 s of
openssl; --paced adds 4 × (seconds + 1) s and about 12 s of start-up and warm-up.
"""
import argparse
import base64
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

PROJECT = "bench-serve-project"
# The Firebase project's number and a registered app, for the App Check tokens of --write-tokens.
APP_CHECK_PROJECT_NUMBER = "123456789012"
APP_CHECK_APP_ID = "1:123456789012:web:0a1b2c3d4e5f6a7b"
TICKS = os.sysconf("SC_CLK_TCK")

# Each wrk thread has a Lua state of its own; setup() numbers them so that they start at different tokens.
# done() prints what wrk's text omits or rounds (p99.9, exact microseconds, non-2xx count).
LUA = """
-- A line is an ID token, or an ID token and a Firebase App Check token after a space (serve.appCheck). The ID token
-- goes in Authorization, or with IDTK_COOKIE=NAME in that cookie after two others (a session cookie).
local cookie = os.getenv("IDTK_COOKIE") or ""
local headers = {}
for line in io.lines(os.getenv("IDTK_TOKENS")) do
  local token, app = line:match("^(%S+) *(%S*)$")
  if token then
    local h = {}
    if cookie ~= "" then h["Cookie"] = "@OTHER_COOKIES@; " .. cookie .. "=" .. token
    else h["Authorization"] = "Bearer " .. token end
    if app ~= "" then h["X-Firebase-AppCheck"] = app end
    headers[#headers + 1] = h
  end
end
local path = os.getenv("IDTK_PATH")
local threads = tonumber(os.getenv("IDTK_THREADS") or "1")
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
local i = 0
function init(args)
  i = math.floor((id or 0) * #headers / threads)
end
function request()
  i = i % #headers + 1
  return wrk.format("GET", path, headers[i])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("IDTK %d %d %d %d %d %d %d %d %d\\n", summary.requests, summary.duration, e.status,
    e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9), latency.max))
end
"""
# The cookies a browser sends beside the session cookie, which the server must look past.
OTHER_COOKIES = "theme=dark; _ga=GA1.2.1234567890.1700000000"
SESSION_COOKIE = "__session"
LUA = LUA.replace("@OTHER_COOKIES@", OTHER_COOKIES)


def request_headers(line, cookie=None):
    """The headers a line of a tokens file is sent with, as tokens.lua sends them: the ID token as a bearer token or,
    with `cookie`, in that cookie after OTHER_COOKIES; an App Check token after a space in X-Firebase-AppCheck."""
    token, _, app_check = line.strip().partition(" ")
    headers = {"Cookie": "%s; %s=%s" % (OTHER_COOKIES, cookie, token)} if cookie else {"Authorization": "Bearer " + token}
    if app_check:
        headers["X-Firebase-AppCheck"] = app_check
    return headers


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def nginx_argv(work, port, body=0):
    """nginx answering 200 on 127.0.0.1:`port`, with `body` bytes of body (0: the empty 200, the HTTP floor), one
    worker and no master process, its files in `work`: the command that runs it (the configuration written)."""
    for sub in ("tmp-body", "tmp-proxy", "tmp-fastcgi", "tmp-uwsgi", "tmp-scgi"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)
    answer = 'return 200 "%s";' % ("x" * body) if body else "return 200;"
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write("""daemon off; master_process off; worker_processes 1; error_log %(w)s/e.log error; pid %(w)s/n.pid;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path %(w)s/tmp-body; proxy_temp_path %(w)s/tmp-proxy;
  fastcgi_temp_path %(w)s/tmp-fastcgi; uwsgi_temp_path %(w)s/tmp-uwsgi; scgi_temp_path %(w)s/tmp-scgi;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:%(p)d; location / { %(a)s } } }
""" % {"w": work, "p": port, "a": answer})
    return [shutil.which("nginx") or "/usr/sbin/nginx", "-p", work, "-c", os.path.join(work, "nginx.conf")]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Target:
    """A server under test: how to start it, where to send requests, how to read the subject from an answer."""

    def __init__(self, name, start, path, subject, tokens, expect_ok=True, cookie=None):
        self.name, self.start, self.path, self.subject, self.tokens, self.expect_ok = name, start, path, subject, tokens, expect_ok
        # The cookie that carries the ID token (tokens.lua's IDTK_COOKIE); None: the Authorization header.
        self.cookie = cookie


# With --pin: the CPUs the servers run on and the CPUs wrk runs on (see the module's text).
PINNING = {"server": None, "client": None}


def pin_to_last_cpu():
    """--pin: the servers on the last CPU this process may use, the clients on the others (PINNING)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        sys.exit("error: --pin needs at least two CPUs (this process may use %s)" % cpus)
    if not shutil.which("taskset"):
        sys.exit("error: --pin needs taskset (util-linux)")
    PINNING["server"], PINNING["client"] = cpus[-1:], cpus[:-1]


def pinned(command, role):
    cpus = PINNING[role]
    return command if cpus is None else ["taskset", "-c", ",".join(map(str, sorted(cpus)))] + command


def wrk(port, path, seconds, connections, threads, script, tokens, cookie=None):
    if PINNING["client"] is not None:
        threads = 1
    command = pinned(["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds, "-s", script,
               "http://127.0.0.1:%d%s" % (port, path)], "client")
    env = dict(os.environ, IDTK_TOKENS=tokens, IDTK_PATH=path, IDTK_THREADS=str(threads), IDTK_COOKIE=cookie or "")
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout
    fields = [int(x) for x in re.search(r"^IDTK ([\d ]+)$", out, re.M).group(1).split()]
    requests, duration_us, non2xx, socket_errors, p50, p90, p99, p999, maximum = fields
    return {"requests": requests, "rps": requests / (duration_us / 1e6), "non2xx": non2xx, "socket_errors": socket_errors,
            "p50_us": p50, "p90_us": p90, "p99_us": p99, "p999_us": p999, "max_us": maximum, "connections": connections}


def check_answers(target, port, tokens_file):
    """Three tokens, asked one by one: 2xx with the token's subject (or a refusal, for invalid tokens)."""
    tokens = open(tokens_file).read().splitlines()
    for index in sorted({0, len(tokens) // 2, len(tokens) - 1}):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", target.path, headers=request_headers(tokens[index], target.cookie))
        response = connection.getresponse()
        body = response.read().decode(errors="replace")
        connection.close()
        if not target.expect_ok:
            if response.status < 400:
                sys.exit("error: %s accepted an invalid token (%d)" % (target.name, response.status))
            continue
        expected = subject_of(tokens[index])
        got = target.subject(response, body)
        if not 200 <= response.status < 300 or got != expected:
            sys.exit("error: %s answered %d with subject %r for a token of %r: %s" % (
                target.name, response.status, got, expected, body[:200]))


def subject_of(token):
    """The subject of a token, or of the ID token of a tokens-file line."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["sub"]


def wait_ready(port, path, headers, process, name):
    for _ in range(600):
        if process.poll() is not None:
            sys.exit("error: %s exited with status %d before answering" % (name, process.returncode))
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", path, headers=headers)
            connection.getresponse().read()
            connection.close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("error: %s did not answer on port %d" % (name, port))


def measure(target, args, script, tokens_file, paced=None):
    process, port = target.start()
    try:
        wait_ready(port, target.path, request_headers(open(tokens_file).readline(), target.cookie), process, target.name)
        check_answers(target, port, tokens_file)
        wrk(port, target.path, 1, args.connections, 2, script, tokens_file, target.cookie)   # warm-up
        if paced:
            return [paced_run(process.pid, port, target, args, tokens_file, rate) for rate in paced]
        before = cpu_seconds(process.pid)
        saturated = wrk(port, target.path, args.seconds, args.connections, 2, script, tokens_file, target.cookie)
        saturated["cpu_us_per_request"] = (cpu_seconds(process.pid) - before) / saturated["requests"] * 1e6
        light = wrk(port, target.path, max(2, args.seconds // 2), 1, 1, script, tokens_file, target.cookie)
        for run in (saturated, light):
            wrong = run["requests"] - run["non2xx"] if not target.expect_ok else run["non2xx"]
            if wrong or run["socket_errors"]:
                sys.exit("error: %s: %d answers of the wrong class, %d socket errors in %r" % (
                    target.name, wrong, run["socket_errors"], run))
        return {"saturated": saturated, "light": light}
    finally:
        process.terminate()
        process.wait()


def paced_run(pid, port, target, args, tokens_file, rate):
    """`rate` requests/s from the open-loop client (bench/tools/paced_client.c), `args.seconds` measured."""
    command = pinned([PACED_CLIENT["path"], str(port), target.path, tokens_file, "%.0f" % rate, str(args.seconds), "64"], "client")
    before = cpu_seconds(pid)
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    fields = [int(x) for x in re.search(r"^PACED ([\d ]+)$", out, re.M).group(1).split()]
    requests, duration_us, non2xx, errors, p50, p90, p99, p999, maximum, backlog, answered = fields
    run = {"requests": requests, "rps": requests / (duration_us / 1e6), "non2xx": non2xx, "socket_errors": errors,
           "p50_us": p50, "p90_us": p90, "p99_us": p99, "p999_us": p999, "max_us": maximum, "most_waiting": backlog,
           "target_rps": rate, "server": target.name}
    # The client's warm-up second is on the server's clock too: CPU over every answer.
    run["cpu_us_per_request"] = (cpu_seconds(pid) - before) / answered * 1e6
    if (non2xx if target.expect_ok else requests - non2xx) or errors:
        sys.exit("error: %s paced at %d/s: %r" % (target.name, rate, run))
    return run


# The open-loop client's executable, compiled by main() when --paced asks for it.
PACED_CLIENT = {"path": None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", nargs="?", help="the idtoken executable (a release build)")
    parser.add_argument("--vapor-peer", help="bench/peers/VaporServers' vapor-peer-server (a release build)")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--paced", action="store_true", help="idtoken serve and nginx at 50 %% and 90 %% of serve's saturating rate, open loop")
    parser.add_argument("--pin", action="store_true", help="servers on the last CPU (idtoken serve with one thread), wrk on the others")
    parser.add_argument("--json", default="serve-bench.json", help="where every run's figures are written")
    parser.add_argument("--write-tokens", metavar="DIR",
                        help="only write the key, the --tokens tokens (and App Check tokens beside them), the wrk script "
                             "and two serve configurations (serve.json; serve-appcheck.json, with serve.appCheck; judged "
                             "at the tokens' time with --at $(cat DIR/at)) into DIR, for a machine "
                             "without Python's cryptography (bench/batch_figures.sh)")
    args = parser.parse_args()
    if args.write_tokens:
        os.makedirs(args.write_tokens, exist_ok=True)
        write_tokens(args.write_tokens, args.tokens, app_check=True)
        for name, app_check in (("serve.json", False), ("serve-appcheck.json", True)):
            with open(os.path.join(args.write_tokens, name), "w") as f:
                json.dump(serve_configuration("keys.json", 0, app_check=app_check), f)
        with open(os.path.join(args.write_tokens, "at"), "w") as f:
            f.write("%d\n" % int(time.time()))
        return
    if not args.binary:
        parser.error("the idtoken executable is required")
    if args.pin:
        pin_to_last_cpu()
    work = tempfile.mkdtemp(prefix="serve-bench-")
    try:
        run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def serve_configuration(keys_file, cache, app_check=False, cookie=None):
    """`idtoken serve`'s configuration: one Firebase profile of the bench's project, keys from `keys_file`; with
    `app_check`, a Firebase App Check profile of the same project (same keys) that every request must also pass; with
    `cookie`, the Firebase profile's tokens read from that cookie too (serve.cookies)."""
    profiles = [{"provider": "firebase", "projectId": PROJECT, "keys": keys_file}]
    serve = {"verifiedTokenCache": cache, "maxConnections": 1000}
    if cookie:
        serve["cookies"] = {"firebase": cookie}
    if app_check:
        profiles.append({"name": "app-check", "provider": "firebase-app-check", "projectNumber": APP_CHECK_PROJECT_NUMBER,
                         "appId": [APP_CHECK_APP_ID], "keys": keys_file})
        serve["appCheck"] = {"profile": "app-check"}
    return {"profiles": profiles, "serve": serve}


def write_tokens(work, count, app_check=False):
    """A fresh TEST-ONLY RSA-2048 key in `work`/keys.json, `count` distinct valid Firebase ID tokens signed with it
    (distinct.txt), the first of them alone (repeat.txt), each with one signature bit flipped (invalid.txt), and
    the wrk script that sends them (tokens.lua). With `app_check`, also each ID token beside a distinct valid
    Firebase App Check token (appcheck.txt, "ID-TOKEN APP-CHECK-TOKEN" a line). Returns the key file, the token
    files by name and the script."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    jwk = {"kty": "RSA", "kid": "bench-1", "use": "sig", "alg": "RS256",
           "n": b64url(numbers.n.to_bytes(256, "big")), "e": b64url(numbers.e.to_bytes(3, "big"))}
    keys_file = os.path.join(work, "keys.json")
    with open(keys_file, "w") as f:
        json.dump({"keys": [jwk]}, f)
    header = b64url(json.dumps({"alg": "RS256", "kid": "bench-1", "typ": "JWT"}).encode())

    def signed(claims):   # → (signing input, signature)
        signing_input = header + "." + b64url(json.dumps(claims).encode())
        return signing_input, key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())

    now = int(time.time())
    distinct, invalid = [], []
    for i in range(count):
        claims = {"iss": "https://securetoken.google.com/" + PROJECT, "aud": PROJECT, "sub": "user-%06d" % i,
                  "user_id": "user-%06d" % i, "name": "Bench User %d" % i, "email": "user%d@example.com" % i,
                  "email_verified": True, "iat": now - 60, "exp": now + 3000, "auth_time": now - 60,
                  "firebase": {"sign_in_provider": "google.com", "identities": {"email": ["user%d@example.com" % i]}}}
        signing_input, signature = signed(claims)
        distinct.append(signing_input + "." + b64url(signature))
        invalid.append(signing_input + "." + b64url(bytes([signature[0] ^ 1]) + signature[1:]))
    files = [("distinct", distinct), ("repeat", distinct[:1]), ("invalid", invalid)]
    if app_check:
        pairs = []
        for i, id_token in enumerate(distinct):
            claims = {"iss": "https://firebaseappcheck.googleapis.com/" + APP_CHECK_PROJECT_NUMBER,
                      "aud": ["projects/" + APP_CHECK_PROJECT_NUMBER, "projects/" + PROJECT], "sub": APP_CHECK_APP_ID,
                      "provider": "play_integrity", "iat": now - 60, "exp": now + 3000, "jti": "bench-%06d" % i}
            signing_input, signature = signed(claims)
            pairs.append(id_token + " " + signing_input + "." + b64url(signature))
        files.append(("appcheck", pairs))
    token_files = {}
    for name, tokens in files:
        token_files[name] = os.path.join(work, name + ".txt")
        with open(token_files[name], "w") as f:
            f.write("\n".join(tokens) + "\n")
    script = os.path.join(work, "tokens.lua")
    with open(script, "w") as f:
        f.write(LUA)
    return keys_file, token_files, script


def run(args, work):
    keys_file, token_files, script = write_tokens(work, args.tokens, app_check=True)
    distinct = open(token_files["distinct"]).read().split()

    def serve(cache, app_check=False, cookie=None):
        def start():
            config = os.path.join(work, "serve-%d%s%s.json" % (cache, "-appcheck" if app_check else "", "-cookie" if cookie else ""))
            with open(config, "w") as f:
                json.dump(serve_configuration(keys_file, cache, app_check=app_check, cookie=cookie), f)
            threads = ["--threads", "1"] if args.pin else []
            process = subprocess.Popen(pinned([args.binary, "serve", "--config", config, "--listen", "127.0.0.1:0",
                                               "--log-level", "error"] + threads, "server"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            line = process.stdout.readline().decode()
            return process, int(line.strip().rsplit(":", 1)[1])
        return start

    def vapor(mode, cache=0):
        def start():
            port = free_port()
            # LOG_LEVEL=error: Vapor's default route logging (a line a request at info) would cost every mode alike.
            env = dict(os.environ, BENCH_MODE=mode, BENCH_PORT=str(port), BENCH_JWKS=keys_file, BENCH_PROJECT=PROJECT,
                       BENCH_CACHE=str(cache), LOG_LEVEL="error")
            process = subprocess.Popen(pinned([args.vapor_peer, "serve", "--hostname", "127.0.0.1", "--port", str(port)],
                                              "server"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return process, port
        return start

    def nginx():
        port = free_port()
        process = subprocess.Popen(pinned(nginx_argv(work, port), "server"), stderr=subprocess.DEVNULL)
        return process, port

    serve_subject = lambda response, body: response.getheader("X-Auth-Subject")
    SESSION_ROW = "distinct tokens in a cookie after two others, cache off"
    APP_CHECK_ROW = "distinct tokens, each with a distinct App Check token (two signatures), cache off"
    vapor_distinct, vapor_repeat = "distinct tokens, cache off", "one token repeated, verified-token cache on"
    body_subject = lambda response, body: body
    rows = [
        (Target("idtoken serve", serve(0), "/verify", serve_subject, "distinct"), "distinct tokens, cache off"),
        (Target("idtoken serve", serve(8192), "/verify", serve_subject, "repeat"), "one token repeated, verified-token cache on"),
        (Target("idtoken serve", serve(0), "/verify", serve_subject, "invalid", expect_ok=False), "invalid (bad signature), 401"),
        (Target("idtoken serve", serve(0, cookie=SESSION_COOKIE), "/verify", serve_subject, "distinct", cookie=SESSION_COOKIE),
         SESSION_ROW),
        (Target("idtoken serve", serve(0, app_check=True), "/verify", serve_subject, "appcheck"), APP_CHECK_ROW),
    ]
    if args.vapor_peer:
        rows += [
            (Target("IDTokenKitVapor", vapor("idtokenkit"), "/me", body_subject, "distinct"), vapor_distinct),
            (Target("IDTokenKitVapor", vapor("idtokenkit", 8192), "/me", body_subject, "repeat"), vapor_repeat),
            (Target("vapor/jwt 5.2, keys loaded once", vapor("jwt-loaded"), "/me", body_subject, "distinct"), "distinct tokens"),
            (Target("vapor/jwt 5.2, keys loaded once", vapor("jwt-loaded"), "/me", body_subject, "repeat"), "one token repeated (no cache)"),
            (Target("vapor/jwt 5.2, req.jwt.firebaseAuth.verify()", vapor("jwt-firebase-auth"), "/me", body_subject, "distinct"), "distinct tokens"),
            (Target("Vapor, no verification", vapor("none"), "/me", lambda r, b: subject_of(distinct[0]) if b == "bench-user" else b,
                    "repeat"), "Vapor's floor: the token not read"),
        ]
    # nginx ignores the header; it gets the same requests so that the floor is measured on the same bytes.
    rows.append((Target("nginx, empty 200", nginx, "/verify", lambda r, b: subject_of(distinct[0]), "repeat"), "HTTP floor"))

    load = [os.getloadavg()]
    results = {}
    for round_index in range(args.rounds):
        for target, label in rows:
            key_ = (target.name, label)
            results.setdefault(key_, []).append(measure(target, args, script, token_files[target.tokens]))
            print("round %d: %s, %s: %.0f requests/s, %.1f µs CPU/request" % (
                round_index + 1, target.name, label, results[key_][-1]["saturated"]["rps"],
                results[key_][-1]["saturated"]["cpu_us_per_request"]), file=sys.stderr)
        load.append(os.getloadavg())

    def median(key_, phase, field):
        return statistics.median(r[phase][field] for r in results[key_])

    paced = []
    if args.paced:
        saturating = median(("idtoken serve", rows[0][1]), "saturated", "rps")
        PACED_CLIENT["path"] = os.path.join(work, "paced_client")
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools", "paced_client.c")
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-o", PACED_CLIENT["path"], source, "-lm"], check=True)
        rates = [0.5 * saturating, 0.9 * saturating]
        paced = measure(rows[0][0], args, script, token_files["distinct"], paced=rates)
        paced += measure(rows[-1][0], args, script, token_files["repeat"], paced=rates)
        load.append(os.getloadavg())

    speed = subprocess.run(pinned(["openssl", "speed", "-seconds", "3", "-mr", "rsa2048"], "server"), capture_output=True, text=True).stdout
    match = re.search(r"\+F2:\d+:2048:([\d.]+):([\d.]+)", speed)
    raw_verify_us = float(match.group(2)) if match else float("nan")
    if match and raw_verify_us > 1:   # -mr gives seconds per op in newer versions, ops/s otherwise
        raw_verify_us = 1e6 / raw_verify_us
    else:
        raw_verify_us *= 1e6

    print("load average (1 min) during the run: %s" % ", ".join("%.1f" % l[0] for l in load))
    if args.pin:
        print("pinned: servers (idtoken serve with one event-loop thread) on CPU %s, wrk (one thread) on CPU %s" % (
            ",".join(map(str, PINNING["server"])), ",".join(map(str, PINNING["client"]))))
    print()
    print("| server | tokens | requests/s (%d conns, %d wrk threads) | server CPU µs/request | p50 / p99 / p99.9 µs | "
          "1 conn: requests/s, p50 / p99 µs |" % (args.connections, 1 if args.pin else 2))
    print("|---|---|---|---|---|---|")
    for target, label in rows:
        k = (target.name, label)
        print("| %s | %s | %s | %.1f | %s / %s / %s | %s, %s / %s |" % (
            target.name, label, "{:,.0f}".format(median(k, "saturated", "rps")), median(k, "saturated", "cpu_us_per_request"),
            *("{:,.0f}".format(median(k, "saturated", f)) for f in ("p50_us", "p99_us", "p999_us")),
            "{:,.0f}".format(median(k, "light", "rps")), *("{:,.0f}".format(median(k, "light", f)) for f in ("p50_us", "p99_us"))))
    print("| raw RSA-2048 verify (openssl speed) | | | %.1f | | |" % raw_verify_us)
    if args.rounds > 1:
        print()
        print("medians of %d rounds; requests/s in each round:" % args.rounds)
        for target, label in rows:
            print("- %s, %s: %s" % (target.name, label, ", ".join("{:,.0f}".format(r["saturated"]["rps"]) for r in results[(target.name, label)])))
    if paced:
        print()
        print("| open loop (Poisson arrivals, 64 connections) | share of serve's saturating rate | requests/s | "
              "server CPU µs/request | p50 / p90 / p99 / p99.9 µs | max µs | most requests waiting for a connection |")
        print("|---|---|---|---|---|---|---|")
        for fraction, p in zip((50, 90, 50, 90), paced):
            print("| %s | %d %% (%s/s) | %s | %.1f | %s / %s / %s / %s | %s | %d |" % (
                p["server"] + (", distinct tokens" if p["server"] == "idtoken serve" else ""), fraction,
                "{:,.0f}".format(p["target_rps"]), "{:,.0f}".format(p["rps"]), p["cpu_us_per_request"],
                *("{:,.0f}".format(p[f]) for f in ("p50_us", "p90_us", "p99_us", "p999_us", "max_us")), p["most_waiting"]))
        half = paced[0]
        print("idtoken serve at half saturation: p99 %d µs; target 1,000 µs (%s)" % (half["p99_us"], "met" if half["p99_us"] <= 1000 else "not met"))
    print()
    floor = median(("nginx, empty 200", "HTTP floor"), "saturated", "cpu_us_per_request")
    distinct_cpu = median(("idtoken serve", rows[0][1]), "saturated", "cpu_us_per_request")
    repeat_cpu = median(("idtoken serve", rows[1][1]), "saturated", "cpu_us_per_request")
    print("idtoken serve, distinct token: %.1f µs CPU/request; target raw + 1.5 × nginx = %.1f µs (%s)" % (
        distinct_cpu, raw_verify_us + 1.5 * floor, "met" if distinct_cpu <= raw_verify_us + 1.5 * floor else "not met"))
    print("idtoken serve, token seen before: %.1f µs CPU/request; target 2 × nginx = %.1f µs (%s)" % (
        repeat_cpu, 2 * floor, "met" if repeat_cpu <= 2 * floor else "not met"))
    session_cpu = median(("idtoken serve", SESSION_ROW), "saturated", "cpu_us_per_request")
    app_check_cpu = median(("idtoken serve", APP_CHECK_ROW), "saturated", "cpu_us_per_request")
    print("idtoken serve, the token in a cookie: %.1f µs CPU/request, %.2f × the bearer token's" % (session_cpu, session_cpu / distinct_cpu))
    print("idtoken serve with serve.appCheck: %.1f µs CPU/request, %.1f µs over one token (raw verify %.1f µs)" % (
        app_check_cpu, app_check_cpu - distinct_cpu, raw_verify_us))
    if args.vapor_peer:
        jwt = ("vapor/jwt 5.2, keys loaded once", "distinct tokens")
        firebase_auth = ("vapor/jwt 5.2, req.jwt.firebaseAuth.verify()", "distinct tokens")
        for name, k in (("IDTokenKitVapor", ("IDTokenKitVapor", vapor_distinct)), ("idtoken serve", ("idtoken serve", rows[0][1]))):
            print("%s ÷ vapor/jwt keys loaded once, distinct tokens: %.2f × requests/s, %.2f × requests per server CPU-second "
                  "(goal ≥ 2 ×); ÷ firebaseAuth.verify(): %.2f ×, %.2f ×" % (
                      name, median(k, "saturated", "rps") / median(jwt, "saturated", "rps"),
                      median(jwt, "saturated", "cpu_us_per_request") / median(k, "saturated", "cpu_us_per_request"),
                      median(k, "saturated", "rps") / median(firebase_auth, "saturated", "rps"),
                      median(firebase_auth, "saturated", "cpu_us_per_request") / median(k, "saturated", "cpu_us_per_request")))
        vapor_floor = median(("Vapor, no verification", "Vapor's floor: the token not read"), "saturated", "cpu_us_per_request")
        ours = median(("IDTokenKitVapor", vapor_distinct), "saturated", "cpu_us_per_request")
        theirs = median(jwt, "saturated", "cpu_us_per_request")
        print("server CPU a request above Vapor's own (%.1f µs), distinct tokens: IDTokenKitVapor %.1f µs, vapor/jwt keys "
              "loaded once %.1f µs (%.2f ×), firebaseAuth.verify() %.1f µs" % (
                  vapor_floor, ours - vapor_floor, theirs - vapor_floor, (theirs - vapor_floor) / (ours - vapor_floor),
                  median(firebase_auth, "saturated", "cpu_us_per_request") - vapor_floor))
        k = ("IDTokenKitVapor", vapor_repeat)
        jwt_repeat = ("vapor/jwt 5.2, keys loaded once", "one token repeated (no cache)")
        print("IDTokenKitVapor (cache on) ÷ vapor/jwt keys loaded once, one token repeated: %.2f × requests/s" % (
            median(k, "saturated", "rps") / median(jwt_repeat, "saturated", "rps")))
    with open(args.json, "w") as f:
        json.dump({"rows": [{"server": k[0], "tokens": k[1], "rounds": v} for k, v in results.items()],
                   "paced": paced, "raw_verify_us": raw_verify_us, "load_average": load, "pinned": PINNING}, f, indent=1)


if __name__ == "__main__":
    main()
