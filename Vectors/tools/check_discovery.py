#!/usr/bin/env python3
"""OpenID Connect discovery through every door of the built `idtoken`: a loopback issuer serves its discovery
document (`/.well-known/openid-configuration`) and the key set it names, and an `oidc` profile given only
`--issuer` and `--audience` verifies its tokens through `idtoken verify`, `idtoken audit --config` and `idtoken serve
--config`; a document that names another issuer is refused (OpenID Connect Discovery §4.3), and the service keeps
the keys it found when the issuer goes away.

Usage: python3 Vectors/tools/check_discovery.py path/to/idtoken
"""
import base64
import http.client
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.normpath(os.path.join(HERE, ".."))
passed = failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print(f"FAIL {name} {detail}", file=sys.stderr)


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer(http.server.ThreadingHTTPServer):
    """The issuer: its discovery document, naming `document_issuer` (its own unless a test says otherwise), and its
    key set; `down` answers 503 to everything."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.document_issuer = self.url
        self.down = False
        self.requests = []
        with open(os.path.join(VECTORS, "generated", "keysets", "oidc_jwks.json"), "rb") as f:
            self.jwks = f.read()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        server = self.server
        server.requests.append(self.path)
        if server.down:
            self.answer(503, b"down")
        elif self.path == "/.well-known/openid-configuration":
            self.answer(200, json.dumps({"issuer": server.document_issuer, "jwks_uri": server.url + "/jwks",
                                         "id_token_signing_alg_values_supported": ["RS256", "ES256"]}).encode())
        elif self.path == "/jwks":
            self.answer(200, server.jwks)
        else:
            self.answer(404, b"not found")

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def token(issuer, audience, now):
    with open(os.path.join(VECTORS, "keys", "test_rsa_2048_a.pem"), "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    header = b64u(json.dumps({"alg": "RS256", "kid": "oidc-rsa-1", "typ": "JWT"}).encode())
    claims = b64u(json.dumps({"iss": issuer, "aud": audience, "sub": "user-1", "iat": now, "exp": now + 3600}).encode())
    signature = key.sign(f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{claims}.{b64u(signature)}"


def main():
    binary = sys.argv[1]
    issuer = Issuer()
    threading.Thread(target=issuer.serve_forever, daemon=True).start()
    now = int(time.time())
    jwt = token(issuer.url, "client-1", now)
    options = ["--provider", "oidc", "--issuer", issuer.url, "--audience", "client-1"]

    run = subprocess.run([binary, "verify", jwt, "--json"] + options, capture_output=True, text=True, timeout=60)
    verdict = json.loads(run.stdout or "{}")
    check("verify: the issuer alone finds its keys by discovery", run.returncode == 0 and verdict.get("valid") is True,
          run.stdout + run.stderr)
    check("verify: the discovery document, then the key set it names, were fetched",
          issuer.requests[:2] == ["/.well-known/openid-configuration", "/jwks"], str(issuer.requests))

    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "discovery.json")
        with open(config, "w") as f:
            json.dump({"profiles": [{"name": "corp", "provider": "oidc", "issuers": [issuer.url], "audiences": ["client-1"]}]}, f)
        log = os.path.join(work, "tokens.ndjson")
        with open(log, "w") as f:
            f.write(json.dumps({"token": jwt}) + "\n" + json.dumps({"token": token(issuer.url, "client-2", now)}) + "\n")
        run = subprocess.run([binary, "audit", log, "--config", config], capture_output=True, text=True, timeout=60)
        lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
        check("audit --config: verdicts with the discovered keys",
              run.returncode == 0 and [line.get("error") for line in lines] == [None, "wrong_audience"], run.stdout + run.stderr)

        serve = subprocess.Popen([binary, "serve", "--config", config, "--listen", "127.0.0.1:0", "--threads", "1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            line = serve.stdout.readline().decode()
            port = int(line.strip().rsplit(":", 1)[1])

            def status():
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                connection.request("GET", "/verify", headers={"Authorization": "Bearer " + jwt})
                response = connection.getresponse()
                response.read()
                return response.status, response.getheader("X-Auth-Error")

            deadline = time.time() + 20
            answer = status()
            while answer[0] != 200 and time.time() < deadline:
                time.sleep(0.2)
                answer = status()
            check("serve --config: the token is allowed with the discovered keys", answer == (200, None), str(answer))
            issuer.down = True
            check("serve --config: the issuer gone, the keys found before still serve", status() == (200, None))
        finally:
            serve.terminate()
            serve.wait(timeout=30)

    issuer.down = False
    issuer.document_issuer = "https://accounts.attacker.example"
    run = subprocess.run([binary, "verify", jwt] + options, capture_output=True, text=True, timeout=60)
    check("verify: a document naming another issuer is refused (exit 3, keys unavailable)",
          run.returncode == 3 and "must name its own issuer" in run.stdout + run.stderr, run.stdout + run.stderr)
    insecure = subprocess.run([binary, "verify", jwt, "--provider", "oidc", "--issuer", "http://login.example.com", "--audience", "client-1"],
                              capture_output=True, text=True, timeout=60)
    check("verify: an issuer over plain http off loopback is refused (exit 3)",
          insecure.returncode in (2, 3) and "https" in insecure.stdout + insecure.stderr, insecure.stdout + insecure.stderr)
    issuer.shutdown()
    print(f"check_discovery: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
