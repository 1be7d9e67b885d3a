#!/usr/bin/env python3
"""Drives the real `idtoken serve` binary behind a real nginx (auth_request + auth_request_set), and with requests
shaped as Envoy ext_authz (HTTP service) and Traefik forwardAuth send them. Tokens are signed here with Python's
`cryptography` (not with this project's code) at the current time; keys are served over loopback HTTP by this
script, so that the key endpoint can be down at start, come up, rotate, and go down again.

Usage: scripts/check_serve.py PATH/TO/idtoken     (exit status 0 when every check passed)
"""
import base64
import http.client
import http.server
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

PROJECT = "check-serve-project"
FAILURES = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        FAILURES.append(what)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Key:
    def __init__(self, kid):
        self.kid = kid
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwk(self):
        numbers = self.private.public_key().public_numbers()
        n = numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")
        e = numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")
        return {"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256", "n": b64url(n), "e": b64url(e)}

    def token(self, claims):
        header = b64url(json.dumps({"alg": "RS256", "kid": self.kid, "typ": "JWT"}).encode())
        payload = b64url(json.dumps(claims).encode())
        signing_input = (header + "." + payload).encode()
        signature = self.private.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        return header + "." + payload + "." + b64url(signature)


def firebase_config(work, key, keys_name="keys.json", config_name="serve.json", serve=None):
    """A configuration file of one Firebase profile whose keys are `key`'s (a JWKS file beside it), named
    `config_name` and `keys_name` in `work`, with `serve` as its `serve` member when given: the paths of the key file
    and of the configuration."""
    keys = os.path.join(work, keys_name)
    with open(keys, "w") as f:
        json.dump({"keys": [key.jwk()]}, f)
    config = os.path.join(work, config_name)
    with open(config, "w") as f:
        json.dump({"profiles": [{"provider": "firebase", "projectId": PROJECT, "keys": keys}], **({"serve": serve} if serve else {})}, f)
    return keys, config


def firebase_claims(sub="user-42", **extra):
    now = int(time.time())
    claims = {"iss": "https://securetoken.google.com/" + PROJECT, "aud": PROJECT, "sub": sub, "iat": now - 30,
              "exp": now + 3600, "auth_time": now - 30, "firebase": {"sign_in_provider": "apple.com"}}
    claims.update(extra)
    return claims


class KeyServer:
    """Serves /keys.json on loopback; `keys` is what it publishes; stop() makes the endpoint refuse connections."""

    def __init__(self, port):
        self.port = port
        self.keys = []
        self.max_age = 3600
        self.server = None

    def start(self):
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = json.dumps({"keys": [k.jwk() for k in owner.keys]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "public, max-age=%d" % owner.max_age)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


class Upstream:
    """The application behind nginx: records the identity headers of every request that reaches it."""

    def __init__(self, port):
        self.seen = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                owner.seen.append({"path": self.path, "subject": self.headers.get("X-Auth-Subject"),
                                   "email": self.headers.get("X-Auth-Email")})
                body = b"hello from the upstream\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def request(port, method="GET", path="/", headers=None, timeout=10):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request(method, path, headers=headers or {})
    response = connection.getresponse()
    body = response.read()
    result = (response.status, {k.lower(): v for k, v in response.getheaders()}, body)
    connection.close()
    return result


def wait_until(predicate, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except (OSError, TypeError):    # TypeError: a metric missing from /metrics
            pass
        time.sleep(0.2)
    return False


class Serve:
    def __init__(self, binary, config, log_path, preexec_fn=None):
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen([binary, "serve", "--config", config, "--listen", "127.0.0.1:0", "--threads", "2"],
                                        stdout=subprocess.PIPE, stderr=self.log, preexec_fn=preexec_fn)
        line = self.process.stdout.readline().decode()
        if not line.startswith("listening on "):
            raise SystemExit("idtoken serve did not start: " + line + open(log_path).read())
        self.port = int(line.strip().rsplit(":", 1)[1])

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


def metric(port, name):
    """The value of one sample of /metrics (`name` with its labels, as written), or None."""
    status, _, body = request(port, path="/metrics")
    if status != 200:
        return None
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split(" ", 1)[1])
    return None


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def open_files_limit(pid):
    """(soft, hard) RLIMIT_NOFILE of a process, from /proc/PID/limits."""
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return int(soft), int(hard)
    return None


IDLE_CONNECTIONS = 10_000
# The service's resident memory with every idle connection open, in MiB: the bound this check holds it to (the
# debug build measured 103 MiB, 37 MiB of it before the first connection: about 7 KiB a connection).
IDLE_RSS_BOUND_MIB = 200


def check_unprivileged(binary, work, key):
    """The service as an unprivileged user (as the systemd unit's DynamicUser, the image's user 65532) answers
    requests. (It once set TCP_NODELAY at the socket level, where option 1 is SO_DEBUG: allowed for root, refused
    for anyone else, and every accepted connection was closed unanswered.) Checked when this script runs as root."""
    if os.geteuid() != 0:
        print("note: not root, so the service already ran unprivileged above", flush=True)
        return
    os.chmod(work, 0o755)
    # A copy of the binary in the 0755 work directory: the checkout may lie where nobody cannot reach (root's home,
    # a mktemp -d folder), and what is checked is the service, not the checkout's permissions.
    binary = shutil.copy(binary, os.path.join(work, "idtoken-unprivileged"))
    os.chmod(binary, 0o755)
    keys, config_path = firebase_config(work, key, "unprivileged-keys.json", "unprivileged.json")
    for path in (keys, config_path):
        os.chmod(path, 0o644)

    def nobody():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)

    serve = Serve(binary, config_path, os.path.join(work, "unprivileged.log"), preexec_fn=nobody)
    try:
        try:
            status, headers, _ = request(serve.port, path="/verify", headers={"Authorization": "Bearer " + key.token(firebase_claims())})
        except OSError:     # the connection closed unanswered
            status, headers = 0, {}
        check(status == 200 and headers.get("x-auth-subject") == "user-42",
              "as an unprivileged user (nobody) the service answers a valid token 200 (status %d)" % status)
    finally:
        serve.stop()


def check_idle_connections(binary, work, key):
    """10,000 concurrent connections that send nothing or half a header: the service holds them, answers a real
    request on a fresh connection within seconds, stays under a memory bound, and closes them all when the idle
    and request timeouts pass. The service is started with a soft open-files limit of 1024 (the common default),
    so that it only holds them if it raises its own limit at start."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    count = IDLE_CONNECTIONS
    if soft != resource.RLIM_INFINITY and soft < count + 200:
        # Neither this process nor the service can hold 10,000 sockets under this hard limit.
        count = soft - 200
        print("note: the open-files hard limit is %d: %d idle connections instead of %d" % (hard, count, IDLE_CONNECTIONS),
              flush=True)
    with open(os.path.join(work, "idle-keys.json"), "w") as f:
        json.dump({"keys": [key.jwk()]}, f)
    config_path = os.path.join(work, "idle.json")
    with open(config_path, "w") as f:
        json.dump({"profiles": [{"provider": "firebase", "projectId": PROJECT, "keys": "idle-keys.json"}],
                   "serve": {"maxConnections": count + 100, "idleTimeoutSeconds": 20, "requestTimeoutSeconds": 20}}, f)

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, soft), hard))

    serve = Serve(binary, config_path, os.path.join(work, "idle.log"), preexec_fn=low_limit)
    sockets = []
    try:
        server_soft, server_hard = open_files_limit(serve.process.pid)
        check(server_soft == server_hard, "the service raised its open-files limit to the hard limit at start (%d)" % server_soft)
        rss_before = rss_kib(serve.process.pid)
        started = time.time()
        refused = 0
        for i in range(count):
            if refused > 20:
                break               # the service is not accepting: stop rather than wait for each connect
            s = socket.socket()
            s.settimeout(3)
            try:
                s.connect(("127.0.0.1", serve.port))
                if i % 2:
                    s.sendall(b"GET /verify HTTP/1.1\r\nHost: x\r\nX-Half: ")   # half a header, never finished
            except OSError:
                refused += 1
                s.close()
                continue
            sockets.append(s)
        opened = time.time() - started
        check(refused == 0, "%d connections opened in %.1f s (half send nothing, half half a header)" % (len(sockets), opened))
        asked = time.time()
        try:
            status, _, _ = request(serve.port, path="/verify", headers={"Authorization": "Bearer " + key.token(firebase_claims())},
                                   timeout=5)
        except OSError as error:
            status = repr(error)
        took = time.time() - asked
        check(status == 200 and took < 3, "with %d idle connections open, a valid request on a fresh one: %s in %.3f s"
              % (len(sockets), status, took))
        held = metric(serve.port, "idtoken_open_connections")
        check(held is not None and held >= len(sockets), "/metrics counts them open (%s)" % held)
        rss = rss_kib(serve.process.pid)
        check(rss < IDLE_RSS_BOUND_MIB * 1024, "service RSS with %d idle connections: %.0f MiB (%.0f MiB at start), bound %d MiB"
              % (len(sockets), rss / 1024, rss_before / 1024, IDLE_RSS_BOUND_MIB))
        # The idle and request timeouts (20 s) close every one of them, from the service's side; meanwhile the
        # service keeps answering (closing 10,000 connections must not stall its event loops).
        closed, slowest, unanswered = False, 0.0, 0
        deadline = time.time() + 45
        while not closed and time.time() < deadline:
            asked = time.time()
            try:
                closed = metric(serve.port, "idtoken_open_connections") in (0, 1)
            except OSError:
                unanswered += 1
            slowest = max(slowest, time.time() - asked)
            time.sleep(0.3)
        check(closed, "the idle and request timeouts closed them all (%.1f s after the last opened)" % (time.time() - started - opened))
        check(unanswered == 0 and slowest < 3, "while they were being closed /metrics answered every time (%d unanswered, "
              "slowest %.2f s)" % (unanswered, slowest))
        rss_after = rss_kib(serve.process.pid)
        check(rss_after <= max(rss, IDLE_RSS_BOUND_MIB * 1024), "service RSS after they closed: %.0f MiB" % (rss_after / 1024))
        eof = 0
        for s in sockets:
            s.setblocking(False)
            try:
                while s.recv(4096):         # a 408 for the half headers, then the end of the stream
                    pass
                eof += 1
            except BlockingIOError:
                pass                        # still open
            except OSError:
                eof += 1                    # reset: closed too
        check(eof == len(sockets), "every idle socket sees the service close it (%d of %d)" % (eof, len(sockets)))
        check(serve.stop() == 0, "SIGTERM after the idle connections: exit 0")
    finally:
        for s in sockets:
            s.close()
        if serve.process.poll() is None:
            serve.process.kill()
            serve.process.wait()


NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
error_log {dir}/nginx-error.log warn;
pid {dir}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    access_log {dir}/nginx-access.log;
    client_body_temp_path {dir}/tmp-body;
    proxy_temp_path {dir}/tmp-proxy;
    fastcgi_temp_path {dir}/tmp-fastcgi;
    uwsgi_temp_path {dir}/tmp-uwsgi;
    scgi_temp_path {dir}/tmp-scgi;

    upstream idtoken {{ server 127.0.0.1:{serve}; keepalive 16; }}

    server {{
        listen 127.0.0.1:{nginx};

        location = /_idtoken {{
            internal;
            proxy_pass http://idtoken/verify;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-URI $request_uri;
            proxy_set_header X-Original-Method $request_method;
        }}

        location / {{
            auth_request /_idtoken;
            auth_request_set $auth_subject $upstream_http_x_auth_subject;
            auth_request_set $auth_email $upstream_http_x_auth_email;
            auth_request_set $auth_error $upstream_http_x_auth_error;
            add_header X-Auth-Error $auth_error always;
            proxy_set_header X-Auth-Subject $auth_subject;
            proxy_set_header X-Auth-Email $auth_email;
            proxy_pass http://127.0.0.1:{upstream};
        }}
    }}
}}
"""


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    work = tempfile.mkdtemp(prefix="check-serve-")
    processes = []
    try:
        key1, key2, attacker = Key("check-key-1"), Key("check-key-2"), Key("check-key-1")
        keys = KeyServer(free_port())
        keys.keys = [key1]
        upstream_port = free_port()
        upstream = Upstream(upstream_port)
        with open(os.path.join(work, "corp.json"), "w") as f:
            json.dump({"keys": [key1.jwk()]}, f)
        config = {
            "profiles": [
                {"provider": "firebase", "projectId": PROJECT, "keys": "http://127.0.0.1:%d/keys.json" % keys.port},
                {"name": "corp", "provider": "oidc", "issuers": ["https://corp.example.test"], "audiences": ["corp-api"],
                 "keys": "corp.json"},
            ],
            "serve": {"keyCacheFiles": {"firebase": "firebase-cache.json"}, "unknownKidCooldownSeconds": 1,
                      "keyRetryIntervalSeconds": 1, "minKeyLifetimeSeconds": 1, "retryAfterSeconds": 3, "cookies": {"firebase": "__session"}},
        }
        config_path = os.path.join(work, "serve.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        log_path = os.path.join(work, "serve.log")

        # A bad configuration is refused at start, the member named, nothing listening.
        bad = dict(config, serve={"maxConnections": 0})
        with open(os.path.join(work, "bad.json"), "w") as f:
            json.dump(bad, f)
        refused = subprocess.run([binary, "serve", "--config", os.path.join(work, "bad.json")], capture_output=True, timeout=30)
        check(refused.returncode == 2 and b"serve.maxConnections" in refused.stderr,
              "a bad serve member is refused at start with its name (exit 2)")

        # 1. The key endpoint is down at start: not ready, and a Firebase token gets keys_unavailable.
        serve = Serve(binary, config_path, log_path)
        processes.append(serve.process)
        status, _, _ = request(serve.port, path="/healthz")
        check(status == 200, "/healthz answers at once")
        status, _, body = request(serve.port, path="/readyz")
        check(status == 503 and b"firebase" in body, "/readyz is 503 while the Firebase keys cannot be fetched")
        token = key1.token(firebase_claims(email="ann@example.com", email_verified=True))
        status, headers, _ = request(serve.port, path="/verify", headers={"Authorization": "Bearer " + token})
        check(status == 503 and headers.get("retry-after") == "3" and headers.get("x-auth-error") == "keys_unavailable",
              "keys down at start: 503, Retry-After, X-Auth-Error: keys_unavailable")

        # nginx in front: the service's 503 is an error for auth_request (nginx answers 500) and never reaches the app.
        nginx_port = free_port()
        for sub in ("tmp-body", "tmp-proxy", "tmp-fastcgi", "tmp-uwsgi", "tmp-scgi"):
            os.makedirs(os.path.join(work, sub), exist_ok=True)
        nginx_conf = os.path.join(work, "nginx.conf")
        with open(nginx_conf, "w") as f:
            f.write(NGINX_CONF.format(dir=work, serve=serve.port, nginx=nginx_port, upstream=upstream_port))
        nginx_process = subprocess.Popen([nginx, "-p", work, "-c", nginx_conf], stderr=subprocess.DEVNULL)
        processes.append(nginx_process)
        check(wait_until(lambda: socket.create_connection(("127.0.0.1", nginx_port), timeout=1).close() is None, 10),
              "nginx listens")
        status, _, _ = request(nginx_port, path="/app", headers={"Authorization": "Bearer " + token})
        check(status == 500 and not upstream.seen, "nginx: keys unavailable is an error (500), the upstream is not reached")
        check(b"keys_unavailable" in open(log_path, "rb").read(), "the service logged keys_unavailable")

        # 2. The key endpoint comes up: ready within a few seconds, without a restart.
        keys.start()
        check(wait_until(lambda: request(serve.port, path="/readyz")[0] == 200, 20), "ready once the keys are fetched")

        # 3. Through nginx: a valid token reaches the upstream with X-Auth-Subject set by auth_request_set.
        status, _, body = request(nginx_port, path="/app/orders", headers={"Authorization": "Bearer " + token})
        check(status == 200 and body.startswith(b"hello"), "nginx: a valid token reaches the upstream")
        check(upstream.seen and upstream.seen[-1]["subject"] == "user-42" and upstream.seen[-1]["email"] == "ann@example.com",
              "nginx: the upstream got X-Auth-Subject and X-Auth-Email from auth_request_set")
        reached = len(upstream.seen)
        forged = attacker.token(firebase_claims(sub="admin"))
        status, headers, _ = request(nginx_port, path="/app", headers={"Authorization": "Bearer " + forged})
        check(status == 401 and 'error_description="bad_signature"' in headers.get("www-authenticate", "")
              and headers.get("x-auth-error") == "bad_signature",
              "nginx: a forged token gets 401 with WWW-Authenticate and X-Auth-Error")
        status, headers, _ = request(nginx_port, path="/app")
        check(status == 401 and headers.get("www-authenticate", "").startswith("Bearer realm="),
              "nginx: no token gets 401 with a Bearer challenge")
        check(len(upstream.seen) == reached, "nginx: refused requests never reach the upstream")

        # Hostile claim text cannot write a header.
        hostile = key1.token(firebase_claims(sub="x\r\nX-Injected: yes", email="\u00e9ve\r\n@example.com", email_verified=True))
        status, headers, _ = request(serve.port, path="/verify", headers={"Authorization": "Bearer " + hostile})
        check(status == 200 and "x-injected" not in headers and headers.get("x-auth-subject") == "x%0D%0AX-Injected: yes"
              and headers.get("x-auth-email") == "%C3%A9ve%0D%0A@example.com", "hostile claims are percent-encoded")

        # 4. Key rotation: a token signed with a key published after start is accepted after one refetch.
        time.sleep(1.2)
        keys.keys = [key1, key2]
        rotated = key2.token(firebase_claims(sub="user-rotated"))
        status, headers, _ = request(nginx_port, path="/app", headers={"Authorization": "Bearer " + rotated})
        check(status == 200 and upstream.seen[-1]["subject"] == "user-rotated", "unknown kid: refetched, then accepted")

        # 5. Envoy ext_authz (HTTP service): original method, path_prefix /verify + original path, Authorization only.
        status, headers, _ = request(serve.port, method="POST", path="/verify/api/orders?id=7",
                                     headers={"Authorization": "Bearer " + token, "Content-Length": "0"})
        check(status == 200 and headers.get("x-auth-subject") == "user-42", "Envoy-shaped request: 200 with identity headers")
        status, headers, _ = request(serve.port, method="PUT", path="/verify/api/orders",
                                     headers={"Authorization": "Bearer " + forged, "Content-Length": "0"})
        check(status == 401 and headers.get("x-auth-error") == "bad_signature", "Envoy-shaped forged token: 401")
        # Traefik forwardAuth: GET to the address, the original request in X-Forwarded-*.
        status, headers, _ = request(serve.port, path="/verify", headers={
            "Authorization": "Bearer " + token, "X-Forwarded-Method": "POST", "X-Forwarded-Proto": "https",
            "X-Forwarded-Host": "app.example.com", "X-Forwarded-Uri": "/api/orders", "X-Forwarded-For": "203.0.113.4"})
        check(status == 200 and headers.get("x-auth-email") == "ann@example.com", "Traefik-shaped request: 200")
        # A Firebase session cookie instead of a bearer token.
        status, _, _ = request(serve.port, path="/verify", headers={"Cookie": "a=1; __session=" + token})
        check(status == 200, "the configured cookie carries the token")

        # 6. The key endpoint goes down after start: once the keys' lifetime has passed and the background refresh
        # has failed, the last good set is still served (stale-if-error, DESIGN §5), and /metrics says so.
        stale = 'idtoken_keys_stale{profile="firebase"}'
        stale_seconds = 'idtoken_keys_stale_seconds{profile="firebase"}'
        failed = 'idtoken_key_fetch_failures_total{profile="firebase"}'
        consecutive = 'idtoken_key_fetch_consecutive_failures{profile="firebase"}'
        fetches = 'idtoken_key_fetches_total{profile="firebase"}'
        keys.max_age = 2
        started_fetches = metric(serve.port, fetches)
        # A kid the set lacks makes the service refetch (cooldown 1 s), which brings the 2-second lifetime; from
        # then on the set is refreshed in the background at 80-90 % of it.
        unpublished = Key("check-key-unpublished").token(firebase_claims())
        time.sleep(1.2)     # past the cooldown of the refetch in step 4
        status, headers, _ = request(serve.port, path="/verify", headers={"Authorization": "Bearer " + unpublished})
        check(status == 401 and headers.get("x-auth-error") == "unknown_key", "a kid no set has: 401 unknown_key")
        check(wait_until(lambda: metric(serve.port, fetches) >= started_fetches + 2, 10),
              "keys served with max-age=2 are refreshed in the background")
        check(wait_until(lambda: metric(serve.port, stale) == 0 and metric(serve.port, stale_seconds) == 0, 5),
              "/metrics: the keys are fresh")
        failed_before = metric(serve.port, failed)
        down_at = time.time()
        keys.stop()
        check(wait_until(lambda: metric(serve.port, stale) == 1 and metric(serve.port, failed) > failed_before, 10),
              "key endpoint down: past max-age and a failed refresh, /metrics reports the keys stale (%.1f s) and the "
              "failed fetch (idtoken_key_fetch_failures_total %s)" % (time.time() - down_at, metric(serve.port, failed)))
        status, _, _ = request(serve.port, path="/verify", headers={"Authorization": "Bearer " + token})
        check(status == 200, "key endpoint down, keys stale: a valid token still gets 200 (stale-if-error)")
        status, _, _ = request(nginx_port, path="/app", headers={"Authorization": "Bearer " + token})
        check(status == 200, "nginx: with stale keys the upstream is still reached")
        check(request(serve.port, path="/readyz")[0] == 200, "/readyz stays 200 while stale keys are usable")
        check(wait_until(lambda: metric(serve.port, stale_seconds) >= 1, 5)
              and metric(serve.port, consecutive) >= 1 and metric(serve.port, 'idtoken_keys_usable{profile="firebase"}') == 1,
              "/metrics: idtoken_keys_stale_seconds %s, idtoken_key_fetch_consecutive_failures %s, keys still usable"
              % (metric(serve.port, stale_seconds), metric(serve.port, consecutive)))
        # The endpoint comes back: the next retry (within about a second) refreshes the set and clears the gauges.
        back_at = time.time()
        keys.start()
        check(wait_until(lambda: metric(serve.port, stale) == 0 and metric(serve.port, consecutive) == 0
                         and metric(serve.port, stale_seconds) == 0, 10),
              "key endpoint back: the stale gauge clears after the next refresh (%.1f s)" % (time.time() - back_at))
        keys.stop()     # down again for the warm start below

        # 7. SIGTERM under load: every request sent on a connection gets a whole answer; then exit 0.
        results = {"answered": 0, "broken": 0, "closed": 0}
        stop_load = threading.Event()

        def load():
            try:
                connection = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=10)
                while not stop_load.is_set():
                    try:
                        connection.request("GET", "/verify", headers={"Authorization": "Bearer " + token})
                    except OSError:
                        return          # closed between answers: the request was refused, not lost
                    try:
                        response = connection.getresponse()
                        response.read()
                    except (http.client.RemoteDisconnected, ConnectionResetError):
                        # Closed (FIN or reset) before any byte of an answer: the request was not taken, as with
                        # a refused connection; HTTP clients retry such requests.
                        results["closed"] += 1
                        return
                    except Exception as error:
                        results["broken"] += 1
                        print("cut off: %r" % error, file=sys.stderr)
                        return
                    results["answered"] += 1
            except OSError:
                return

        workers = [threading.Thread(target=load) for _ in range(8)]
        for worker in workers:
            worker.start()
        time.sleep(1.0)
        code = serve.stop()
        stop_load.set()
        for worker in workers:
            worker.join(timeout=15)
        check(code == 0, "SIGTERM: exit status 0")
        check(results["answered"] > 0 and results["broken"] == 0,
              "SIGTERM under load: %d answered, %d connections closed between answers, none cut off"
              % (results["answered"], results["closed"]))

        # 8. Warm start: restarted with the key endpoint still down, the cache file makes it ready at once.
        serve = Serve(binary, config_path, log_path)
        processes.append(serve.process)
        status, _, _ = request(serve.port, path="/readyz")
        check(status == 200, "warm start from the key cache file: ready before any fetch")
        status, _, _ = request(serve.port, path="/verify", headers={"Authorization": "Bearer " + rotated})
        check(status == 200, "warm start: tokens verify with the cached keys")
        check(serve.stop() == 0, "second SIGTERM: exit 0")

        # A supervisor that stops the service as soon as it says it is listening: the signal handlers must already
        # be in place (a SIGTERM between SIG_IGN and the handler's registration was lost, and the service ran on).
        stopped = 0
        for _ in range(20):
            quick = Serve(binary, config_path, log_path)
            processes.append(quick.process)
            try:
                stopped += quick.stop() == 0
            except subprocess.TimeoutExpired:
                quick.process.kill()
        check(stopped == 20, "SIGTERM at once after the listening line: exit 0 (%d of 20)" % stopped)

        # 9. 10,000 concurrent idle connections.
        check_idle_connections(binary, work, key1)
        check_unprivileged(binary, work, key1)
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
        if FAILURES:
            print("serve log:\n" + open(os.path.join(work, "serve.log"), errors="replace").read()[-4000:], file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES), file=sys.stderr)
        sys.exit(1)
    print("all serve checks passed")


if __name__ == "__main__":
    main()
