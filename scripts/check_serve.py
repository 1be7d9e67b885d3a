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
        self.server = None

    def start(self):
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = json.dumps({"keys": [k.jwk() for k in owner.keys]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "public, max-age=3600")
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
        except OSError:
            pass
        time.sleep(0.2)
    return False


class Serve:
    def __init__(self, binary, config, log_path):
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen([binary, "serve", "--config", config, "--listen", "127.0.0.1:0", "--threads", "2"],
                                        stdout=subprocess.PIPE, stderr=self.log)
        line = self.process.stdout.readline().decode()
        if not line.startswith("listening on "):
            raise SystemExit("idtoken serve did not start: " + line + open(log_path).read())
        self.port = int(line.strip().rsplit(":", 1)[1])

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


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
                      "keyRetryIntervalSeconds": 1, "retryAfterSeconds": 3, "cookies": {"firebase": "__session"}},
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

        # 6. The key endpoint goes down after start: the fetched keys keep being served.
        keys.stop()
        status, _, _ = request(serve.port, path="/verify", headers={"Authorization": "Bearer " + token})
        check(status == 200, "key endpoint down after start: cached keys still verify")
        status, _, body = request(serve.port, path="/metrics")
        check(status == 200 and b'idtoken_keys_usable{profile="firebase"} 1' in body and b"idtoken_requests_total" in body,
              "/metrics reports the key sets and the requests")

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
