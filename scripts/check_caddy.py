#!/usr/bin/env python3
"""Drives the real `idtoken serve` binary behind a real Caddy (`forward_auth`, the Caddyfile of docs/serve.md),
with the contract checks the nginx test makes: a valid token reaches the upstream with the identity headers
copied; an expired token and a missing one get 401 with the challenge; a policy refusal gets 403; keys
unavailable gets 503 with Retry-After; and identity headers a client sends never reach the upstream. Tokens are
signed here with Python's `cryptography`; keys are served over loopback HTTP by this script.

Usage: scripts/check_caddy.py PATH/TO/idtoken     (exit status 0 when every check passed)
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_serve import (FAILURES, PROJECT, Key, KeyServer, Serve, Upstream, check, firebase_claims,  # noqa: E402
                         free_port, request, wait_until)

# Caddy's global options for the test: no admin endpoint, no certificates.
GLOBAL_OPTIONS = """{
    admin off
    auto_https off
}

"""


def caddyfile(caddy_port, serve_port, upstream_port):
    """The Caddyfile block docs/serve.md shows (so that the test runs what users copy), its addresses replaced."""
    text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "serve.md")).read()
    start = text.index("```caddyfile\n") + len("```caddyfile\n")
    site = text[start:text.index("```", start)]
    for documented, tested in ((":80 {", ":%d {" % caddy_port), ("127.0.0.1:8080", "127.0.0.1:%d" % serve_port),
                               ("127.0.0.1:3000", "127.0.0.1:%d" % upstream_port)):
        check(documented in site, "docs/serve.md's Caddyfile names " + documented)
        site = site.replace(documented, tested)
    return GLOBAL_OPTIONS + site


def main():
    binary = os.path.abspath(sys.argv[1])
    caddy = shutil.which("caddy")
    if not caddy:
        raise SystemExit("caddy is not installed (apt-get install caddy)")
    work = tempfile.mkdtemp(prefix="idtk-caddy-")
    processes = []
    serve = None
    try:
        key = Key("caddy-key")
        key_port = free_port()
        keys = KeyServer(key_port)
        # The key endpoint is down at first: keys unavailable.
        config = os.path.join(work, "serve.json")
        with open(config, "w") as f:
            json.dump({"profiles": [{"provider": "firebase", "projectId": PROJECT,
                                     "keys": f"http://127.0.0.1:{key_port}/keys.json",
                                     "allowedSignInProviders": ["apple.com", "password"]}],
                       "serve": {"keyRetryIntervalSeconds": 1}}, f)
        serve = Serve(binary, config, os.path.join(work, "serve.log"))
        upstream_port, caddy_port = free_port(), free_port()
        upstream = Upstream(upstream_port)

        caddyfile_path = os.path.join(work, "Caddyfile")
        with open(caddyfile_path, "w") as f:
            f.write(caddyfile(caddy_port, serve.port, upstream_port))
        env = dict(os.environ, HOME=work, XDG_DATA_HOME=work, XDG_CONFIG_HOME=work)
        caddy_process = subprocess.Popen([caddy, "run", "--config", caddyfile_path, "--adapter", "caddyfile"],
                                         stdout=open(os.path.join(work, "caddy.log"), "wb"), stderr=subprocess.STDOUT, env=env)
        processes.append(caddy_process)
        listening = wait_until(lambda: socket.create_connection(("127.0.0.1", caddy_port), timeout=1).close() is None, 20)
        check(listening, "caddy listens")
        if not listening:
            return

        token = key.token(firebase_claims(email="user@example.com", email_verified=True))
        status, headers, _ = request(caddy_port, path="/app", headers={"Authorization": "Bearer " + token})
        check(status == 503 and headers.get("retry-after") and headers.get("x-auth-error") == "keys_unavailable"
              and not upstream.seen,
              "caddy: keys unavailable is relayed as 503 with Retry-After, the upstream not reached (status %d)" % status)

        keys.keys = [key]
        keys.start()
        check(wait_until(lambda: request(serve.port, path="/readyz")[0] == 200, 20), "the service fetched the keys")

        status, _, body = request(caddy_port, path="/app/orders", headers={
            "Authorization": "Bearer " + token, "X-Auth-Subject": "forged-by-client"})
        seen = upstream.seen[-1] if upstream.seen else {}
        check(status == 200 and body.startswith(b"hello") and seen.get("subject") == "user-42"
              and seen.get("email") == "user@example.com",
              "caddy: a valid token reaches the upstream with X-Auth-Subject and X-Auth-Email copied (status %d, %s)" % (status, seen))

        # No claim-to-header injection: the token has no verified email, the client sends its own X-Auth-Email.
        unverified = key.token(firebase_claims(sub="user-43", email="victim@example.com", email_verified=False))
        status, _, _ = request(caddy_port, path="/app", headers={
            "Authorization": "Bearer " + unverified, "X-Auth-Email": "victim@example.com"})
        seen = upstream.seen[-1] if upstream.seen else {}
        check(status == 200 and seen.get("subject") == "user-43" and seen.get("email") is None,
              "caddy: a client's own X-Auth-Email never reaches the upstream (upstream saw %s)" % seen)

        reached = len(upstream.seen)
        now = int(time.time())
        expired = key.token(firebase_claims(iat=now - 7200, auth_time=now - 7200, exp=now - 3600))
        status, headers, _ = request(caddy_port, path="/app", headers={"Authorization": "Bearer " + expired})
        check(status == 401 and 'error="invalid_token"' in headers.get("www-authenticate", "")
              and headers.get("x-auth-error") == "expired",
              "caddy: an expired token gets 401 with the challenge and X-Auth-Error (status %d)" % status)
        status, headers, _ = request(caddy_port, path="/app")
        check(status == 401 and headers.get("www-authenticate", "").startswith("Bearer"),
              "caddy: no token gets 401 with a Bearer challenge (status %d)" % status)
        refused = key.token(firebase_claims(firebase={"sign_in_provider": "phone"}))
        status, headers, _ = request(caddy_port, path="/app", headers={"Authorization": "Bearer " + refused})
        check(status == 403 and 'error="insufficient_scope"' in headers.get("www-authenticate", ""),
              "caddy: a sign-in provider the policy refuses gets 403 (status %d)" % status)
        check(len(upstream.seen) == reached, "caddy: refused requests never reach the upstream")
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=10)
        if serve:
            serve.stop()
        if FAILURES:
            for log in ("serve.log", "caddy.log"):
                path = os.path.join(work, log)
                if os.path.exists(path):
                    print(f"{log}:\n" + open(path, errors="replace").read()[-3000:], file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES), file=sys.stderr)
        sys.exit(1)
    print("all caddy checks passed")


if __name__ == "__main__":
    main()
