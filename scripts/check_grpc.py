#!/usr/bin/env python3
"""Drives `idtoken serve --grpc-listen` over a real gRPC connection from a client that is not this project's code
(Python grpcio, with stubs generated here from Protos/ by grpcio-tools), with CheckRequests shaped as Envoy's
ext_authz filter and Istio send them: the request's headers in `attributes.request.http.headers` (lower-case
names), the original path, a route's `context_extensions`, or the headers as a list (`header_map`, Envoy's
`encode_raw_headers`). Every row of the contract: allow with the identity headers and the removal of those not
sent, refusals with the HTTP door's status and headers, keys unavailable, a Redis replay store stopped and started
again, the profile from a context extension, the message-size bound, graceful shutdown; then a bounded loop of calls beside the HTTP door for requests/s and
p99 (printed, not asserted).

Usage: scripts/check_grpc.py PATH/TO/idtoken     (exit status 0 when every check passed)
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_serve import FAILURES, PROJECT, Key, KeyServer, check, firebase_claims, free_port, request, wait_until  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def stubs(work):
    """Python messages and the Authorization stub, generated from Protos/ (grpcio-tools' protoc)."""
    from grpc_tools import protoc
    out = os.path.join(work, "stubs")
    os.makedirs(out)
    protos = sorted(os.path.relpath(os.path.join(d, f), os.path.join(REPO, "Protos"))
                    for d, _, files in os.walk(os.path.join(REPO, "Protos")) for f in files if f.endswith(".proto"))
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    status = protoc.main(["protoc", "-I" + os.path.join(REPO, "Protos"), "-I" + include, "--python_out=" + out,
                          "--grpc_python_out=" + out] + protos)
    if status != 0:
        raise SystemExit("protoc failed on Protos/")
    sys.path.insert(0, out)


def start_redis(port, work):
    """A real redis-server on `port`, without persistence; returns once it answers PING."""
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                              "--dir", work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ping = lambda: subprocess.run(["redis-cli", "-p", str(port), "PING"], capture_output=True, text=True).stdout.strip() == "PONG"
    check(wait_until(ping, 10), "redis-server answers on port %d" % port)
    return redis


def stop_redis(redis, port):
    subprocess.run(["redis-cli", "-p", str(port), "SHUTDOWN", "NOSAVE"], capture_output=True)
    try:
        redis.wait(timeout=10)
    except subprocess.TimeoutExpired:
        redis.kill()
        redis.wait()


def raw_call(port, headers, chunks, end_stream=True, seconds=5, validate=True):
    """One call over a raw HTTP/2 connection (Python's h2 as the client, no gRPC library): `headers`, then each of
    `chunks` as a DATA frame, END_STREAM on the last when `end_stream`. Returns the response's headers and trailers
    in one dict (None when nothing ends the stream within `seconds`; {"reset": CODE} when the server resets it) and
    the body bytes. `validate=False` sends header blocks h2 itself would refuse to send."""
    import socket
    import h2.config
    import h2.connection
    import h2.events
    sock = socket.create_connection(("127.0.0.1", port), timeout=seconds)
    connection = h2.connection.H2Connection(h2.config.H2Configuration(
        client_side=True, header_encoding="utf-8", validate_outbound_headers=validate, normalize_outbound_headers=validate))
    connection.initiate_connection()
    connection.send_headers(1, headers, end_stream=not chunks and end_stream)
    for index, chunk in enumerate(chunks):
        connection.send_data(1, chunk, end_stream=end_stream and index == len(chunks) - 1)
    sock.sendall(connection.data_to_send())
    answer, body, deadline = {}, b"", time.time() + seconds
    try:
        while time.time() < deadline:
            data = sock.recv(65536)
            if not data:
                return None, body
            for event in connection.receive_data(data):
                if isinstance(event, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                    answer.update(dict(event.headers))
                elif isinstance(event, h2.events.DataReceived):
                    body += event.data
                    connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamReset) and event.stream_id == 1:
                    return {"reset": int(event.error_code)}, body
                elif isinstance(event, h2.events.StreamEnded) and event.stream_id == 1:
                    return answer, body
            sock.sendall(connection.data_to_send())
    except OSError:
        pass
    finally:
        sock.close()
    return None, body


def main():
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="idtk-grpc-")
    stubs(work)
    import grpc
    from envoy.service.auth.v3 import external_auth_pb2 as auth, external_auth_pb2_grpc as auth_grpc
    from envoy.config.core.v3 import base_pb2

    serve = None
    try:
        key = Key("grpc-key")
        keys = KeyServer(free_port())
        corp_keys = os.path.join(work, "corp.json")
        with open(corp_keys, "w") as f:
            json.dump({"keys": [key.jwk()]}, f)
        config = os.path.join(work, "serve.json")
        with open(config, "w") as f:
            json.dump({"profiles": [
                {"provider": "firebase", "projectId": PROJECT, "keys": "http://127.0.0.1:%d/keys.json" % keys.port,
                 "allowedSignInProviders": ["apple.com", "password"]},
                {"name": "corp", "provider": "oidc", "issuers": ["https://corp.example.test"], "audiences": ["corp-api"],
                 "keys": corp_keys}],
                "serve": {"keyRetryIntervalSeconds": 1, "cookies": {"firebase": "__session"}}}, f)
        log = open(os.path.join(work, "serve.log"), "wb")
        serve = subprocess.Popen([binary, "serve", "--config", config, "--listen", "127.0.0.1:0",
                                  "--grpc-listen", "127.0.0.1:0", "--threads", "2"], stdout=subprocess.PIPE, stderr=log)
        http_line = serve.stdout.readline().decode()
        grpc_line = serve.stdout.readline().decode()
        check(http_line.startswith("listening on ") and grpc_line.startswith("grpc listening on "),
              "serve listens over HTTP and gRPC (%r, %r)" % (http_line.strip(), grpc_line.strip()))
        http_port = int(http_line.strip().rsplit(":", 1)[1])
        grpc_address = grpc_line.strip().rsplit(" ", 1)[1]
        channel = grpc.insecure_channel(grpc_address)
        stub = auth_grpc.AuthorizationStub(channel)

        def check_request(headers=None, path="/app/orders", extensions=None, header_map=None):
            """A CheckRequest as Envoy's ext_authz filter builds it for an HTTP request to `path`."""
            r = auth.CheckRequest()
            h = r.attributes.request.http
            h.id, h.method, h.path, h.host, h.scheme, h.protocol, h.size = "17", "GET", path, "app.example.com", "https", "HTTP/1.1", 0
            if header_map is not None:
                for name, value in header_map:
                    h.header_map.headers.add(key=name, raw_value=value.encode())
            else:
                for name, value in (headers or {}).items():
                    h.headers[name] = value
                h.headers[":authority"] = "app.example.com"
                h.headers[":path"] = path
                h.headers[":method"] = "GET"
            for name, value in (extensions or {}).items():
                r.attributes.context_extensions[name] = value
            return r

        def call(*args, **kwargs):
            return stub.Check(check_request(*args, **kwargs), timeout=10)

        def denied_headers(response):
            return {o.header.key: o.header.value for o in response.denied_response.headers}

        # Keys unavailable: UNAVAILABLE with a 503 denied_response and retry-after.
        token = key.token(firebase_claims(email="user@example.com", email_verified=True))
        response = call({"authorization": "Bearer " + token})
        headers = denied_headers(response)
        check(response.status.code == grpc.StatusCode.UNAVAILABLE.value[0] and response.denied_response.status.code == 503
              and "retry-after" in headers and headers.get("x-auth-error") == "keys_unavailable"
              and response.status.message == "keys_unavailable" and "www-authenticate" not in headers,
              "keys unavailable: UNAVAILABLE, denied_response 503 with retry-after (%d, %s)" % (response.status.code, headers))

        keys.keys = [key]
        keys.start()
        check(wait_until(lambda: request(http_port, path="/readyz")[0] == 200, 20), "the service fetched the keys")

        # Allow: OK, the identity headers (overwriting), the others removed.
        response = call({"authorization": "Bearer " + token, "x-auth-email": "forged@example.com"})
        ok = {o.header.key: o.header.value for o in response.ok_response.headers}
        actions = {o.append_action for o in response.ok_response.headers}
        removed = set(response.ok_response.headers_to_remove)
        check(response.status.code == 0 and response.HasField("ok_response") and ok.get("x-auth-subject") == "user-42"
              and ok.get("x-auth-email") == "user@example.com" and ok.get("x-auth-provider") == "firebase"
              and actions == {base_pb2.HeaderValueOption.OVERWRITE_IF_EXISTS_OR_ADD} and "x-auth-email" not in removed
              and "authorization" not in removed and "cache-control" not in ok,
              "a valid token: OK with the identity headers, overwriting (%s)" % sorted(ok))
        unverified = key.token(firebase_claims(sub="user-43", email="victim@example.com", email_verified=False))
        response = call({"authorization": "Bearer " + unverified, "x-auth-email": "victim@example.com"})
        ok = {o.header.key: o.header.value for o in response.ok_response.headers}
        check(response.status.code == 0 and "x-auth-email" not in ok and "x-auth-email" in response.ok_response.headers_to_remove,
              "no verified email: x-auth-email in headers_to_remove, so a client's own never reaches the upstream")

        # The same through header_map (Envoy's encode_raw_headers), and a session cookie instead of a bearer token.
        response = call(header_map=[("authorization", "Bearer " + token), (":path", "/app")])
        check(response.status.code == 0, "header_map (encode_raw_headers): OK (%d)" % response.status.code)
        response = call({"cookie": "theme=dark; __session=" + token})
        check(response.status.code == 0, "the token in the configured cookie: OK (%d)" % response.status.code)

        # Refusals: the HTTP door's status and headers in denied_response.
        now = int(time.time())
        expired = key.token(firebase_claims(iat=now - 7200, auth_time=now - 7200, exp=now - 3600))
        response = call({"authorization": "Bearer " + expired})
        headers = denied_headers(response)
        check(response.status.code == grpc.StatusCode.UNAUTHENTICATED.value[0] and response.denied_response.status.code == 401
              and 'error="invalid_token"' in headers.get("www-authenticate", "") and headers.get("x-auth-error") == "expired"
              and response.status.message == "expired",
              "an expired token: UNAUTHENTICATED, 401 with the challenge and x-auth-error (%s)" % headers)
        response = call({})
        headers = denied_headers(response)
        check(response.status.code == grpc.StatusCode.UNAUTHENTICATED.value[0] and response.denied_response.status.code == 401
              and headers.get("www-authenticate", "").startswith("Bearer") and response.status.message == "missing_token",
              "no token: UNAUTHENTICATED, 401 with a Bearer challenge, status message missing_token")
        refused = key.token(firebase_claims(firebase={"sign_in_provider": "phone"}))
        response = call({"authorization": "Bearer " + refused})
        headers = denied_headers(response)
        check(response.status.code == grpc.StatusCode.PERMISSION_DENIED.value[0] and response.denied_response.status.code == 403
              and 'error="insufficient_scope"' in headers.get("www-authenticate", ""),
              "a refused sign-in provider: PERMISSION_DENIED, 403")

        # The profile from a route's context extension (Envoy's per-route check_settings), then from the path.
        corp = key.token({"iss": "https://corp.example.test", "aud": "corp-api", "sub": "employee-7",
                          "iat": int(time.time()) - 10, "exp": int(time.time()) + 600})
        response = call({"authorization": "Bearer " + corp}, extensions={"idtoken-profile": "corp"})
        ok = {o.header.key: o.header.value for o in response.ok_response.headers}
        check(response.status.code == 0 and ok.get("x-auth-profile") == "corp" and ok.get("x-auth-subject") == "employee-7",
              "context extension idtoken-profile=corp: a corp token is allowed by corp")
        response = call({"authorization": "Bearer " + token}, extensions={"idtoken-profile": "corp"})
        check(response.status.code == grpc.StatusCode.UNAUTHENTICATED.value[0],
              "context extension idtoken-profile=corp: a Firebase token is judged by corp, and refused (%s)"
              % denied_headers(response).get("x-auth-error"))
        response = call({"authorization": "Bearer " + token}, path="/corp/reports")
        check(response.status.code == grpc.StatusCode.UNAUTHENTICATED.value[0],
              "the original path's first segment names the profile, as over HTTP (/corp/…: refused by corp)")
        response = call({"authorization": "Bearer " + token}, path="/reports")
        check(response.status.code == 0, "otherwise the token's issuer picks the profile (firebase)")

        # Bounded: a CheckRequest far larger than a request head is refused by the transport.
        try:
            call({"authorization": "Bearer " + token, "x-padding": "a" * (1 << 20)})
            check(False, "an oversized CheckRequest is refused")
        except grpc.RpcError as error:
            check(error.code() != grpc.StatusCode.OK, "an oversized CheckRequest (1 MiB of headers) is refused: %s" % error.code())
        check(call({"authorization": "Bearer " + token}).status.code == 0, "and the next call is answered")

        # gRPC itself, from a client that is not grpcio (h2's frames): the method, the content type, the message's
        # framing and encoding, deadlines.
        port = int(grpc_address.rsplit(":", 1)[1])
        message = check_request({"authorization": "Bearer " + token}).SerializeToString()
        framed = b"\x00" + len(message).to_bytes(4, "big") + message
        base = [(":method", "POST"), (":scheme", "http"), (":authority", "idtoken"), (":path", "/envoy.service.auth.v3.Authorization/Check"),
                ("content-type", "application/grpc"), ("te", "trailers")]
        answer, body = raw_call(port, base, [framed[:7], framed[7:40], framed[40:]])
        decoded = auth.CheckResponse.FromString(body[5:]) if len(body) > 5 else None
        check(answer and answer.get(":status") == "200" and answer.get("grpc-status") == "0" and decoded is not None
              and decoded.status.code == 0 and body[1:5] == (len(body) - 5).to_bytes(4, "big"),
              "raw HTTP/2: a message in three DATA frames is answered, grpc-status 0, one length-prefixed CheckResponse (%r)" % answer)
        answer, _ = raw_call(port, [(k, "/envoy.service.auth.v3.Authorization/Nope" if k == ":path" else v) for k, v in base], [framed])
        check(answer and answer.get("grpc-status") == "12", "raw HTTP/2: another method is UNIMPLEMENTED (%r)" % answer)
        answer, _ = raw_call(port, [(k, "text/plain" if k == "content-type" else v) for k, v in base], [framed])
        check(answer and answer.get(":status") == "415", "raw HTTP/2: a content type that is not application/grpc is HTTP 415 (%r)" % answer)
        answer, _ = raw_call(port, base, [b"\x01" + framed[1:]])
        check(answer and answer.get("grpc-status") == "12", "raw HTTP/2: a compressed message is UNIMPLEMENTED (%r)" % answer)
        answer, _ = raw_call(port, base, [b"\x00\x00\x00\x00\x03\x0a\x05\x01"])
        check(answer and answer.get("grpc-status") == "3", "raw HTTP/2: bytes that are not a CheckRequest are INVALID_ARGUMENT (%r)" % answer)
        answer, _ = raw_call(port, base, [framed[:-1]])
        check(answer and answer.get("grpc-status") == "13", "raw HTTP/2: a message shorter than its prefix says is refused (%r)" % answer)
        # Malformed header blocks (RFC 9113 §8.2, §8.3): the stream is reset with PROTOCOL_ERROR (1), the connection
        # goes on.
        for label, headers in (("an upper-case field name", base + [("X-Upper", "1")]),
                               ("a connection-specific field", base + [("connection", "keep-alive")]),
                               ("te other than trailers", [h for h in base if h[0] != "te"] + [("te", "gzip")]),
                               ("a pseudo-header after a regular field", base[1:] + [base[0]]),
                               ("no :path", [h for h in base if h[0] != ":path"]),
                               ("an unknown pseudo-header", [(":protocol", "x")] + base),
                               ("a value with a line break", base + [("x-note", "a\nb")])):
            answer, _ = raw_call(port, headers, [framed], validate=False)
            check(answer == {"reset": 1}, "raw HTTP/2: %s resets the stream with PROTOCOL_ERROR (%r)" % (label, answer))
        check(call({"authorization": "Bearer " + token}).status.code == 0, "and calls are answered after them")
        started = time.time()
        answer, _ = raw_call(port, base + [("grpc-timeout", "1S")], [framed[:20]], end_stream=False, seconds=6)
        check(answer and answer.get("grpc-status") == "4" and time.time() - started < 4,
              "raw HTTP/2: a call still incomplete past its grpc-timeout (1S) is DEADLINE_EXCEEDED (%r, %.1f s)" % (answer, time.time() - started))

        # Flow control: a peer that opens no stream window (SETTINGS_INITIAL_WINDOW_SIZE 0) gets the answer's headers
        # and no DATA; once it gives the stream a window, the message and the trailers follow.
        import socket
        import h2.config
        import h2.connection
        import h2.events
        import h2.settings
        peer = socket.create_connection(("127.0.0.1", port), timeout=10)
        h2c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        h2c.local_settings = h2.settings.Settings(client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        h2c.initiate_connection()
        h2c.send_headers(1, base)
        h2c.send_data(1, framed, end_stream=True)
        peer.sendall(h2c.data_to_send())

        def received(seconds):
            events, deadline = [], time.time() + seconds
            peer.settimeout(0.2)
            while time.time() < deadline:
                try:
                    data = peer.recv(65536)
                except socket.timeout:
                    continue
                if not data:
                    break
                events += h2c.receive_data(data)
                peer.sendall(h2c.data_to_send())
            return events
        before = received(1.0)
        h2c.increment_flow_control_window(1 << 16, stream_id=1)
        peer.sendall(h2c.data_to_send())
        after = received(1.0)
        peer.close()
        check(any(isinstance(e, h2.events.ResponseReceived) for e in before)
              and not any(isinstance(e, (h2.events.DataReceived, h2.events.StreamEnded)) for e in before)
              and any(isinstance(e, h2.events.DataReceived) for e in after)
              and any(isinstance(e, h2.events.TrailersReceived) and dict(e.headers).get("grpc-status") == "0" for e in after),
              "raw HTTP/2: with no stream window the answer waits after its headers, and follows once the window opens (%r / %r)"
              % ([type(e).__name__ for e in before], [type(e).__name__ for e in after]))

        # The same metrics as the HTTP door.
        status, _, body = request(http_port, path="/metrics")
        allowed = [line for line in body.decode().splitlines() if line.startswith('idtoken_requests_total{outcome="allowed"')]
        check(allowed and int(allowed[0].rsplit(" ", 1)[1]) >= 6, "gRPC answers are counted in /metrics (%s)" % allowed)

        # A bounded loop beside the HTTP door: requests/s and p99 (informational).
        def timed(label, one, calls=2000, threads=4):
            latencies, lock = [], threading.Lock()

            def worker():
                mine = []
                for _ in range(calls // threads):
                    started = time.perf_counter()
                    one()
                    mine.append(time.perf_counter() - started)
                with lock:
                    latencies.extend(mine)
            started = time.perf_counter()
            workers = [threading.Thread(target=worker) for _ in range(threads)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            elapsed = time.perf_counter() - started
            latencies.sort()
            print("load %s: %d calls, %.0f/s, p50 %.2f ms, p99 %.2f ms" % (
                label, len(latencies), len(latencies) / elapsed, latencies[len(latencies) // 2] * 1e3,
                latencies[int(len(latencies) * 0.99)] * 1e3), flush=True)

        prepared = check_request({"authorization": "Bearer " + token})
        timed("grpc (one channel, 4 threads)", lambda: stub.Check(prepared, timeout=10))
        local = threading.local()

        def http_once():
            if not hasattr(local, "connection"):
                local.connection = http.client.HTTPConnection("127.0.0.1", http_port, timeout=10)
            local.connection.request("GET", "/verify", headers={"Authorization": "Bearer " + token})
            local.connection.getresponse().read()
        timed("http (keep-alive, 4 threads)", http_once)
        channel.close()

        # Graceful shutdown: SIGTERM; a gRPC connection open at the time is sent a GOAWAY (NO_ERROR) naming the last
        # stream it started, after that stream's answer, and closed; exit status 0.
        import socket
        import h2.config
        import h2.connection
        import h2.events
        peer = socket.create_connection(("127.0.0.1", int(grpc_address.rsplit(":", 1)[1])), timeout=10)
        h2c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        h2c.initiate_connection()
        h2c.send_headers(1, base)
        h2c.send_data(1, framed, end_stream=True)
        peer.sendall(h2c.data_to_send())
        events, deadline = [], time.time() + 10
        while time.time() < deadline and not any(isinstance(e, h2.events.StreamEnded) for e in events):
            events += h2c.receive_data(peer.recv(65536))
        serve.send_signal(signal.SIGTERM)
        closed = False
        while time.time() < deadline:
            data = peer.recv(65536)
            if not data:
                closed = True
                break
            events += h2c.receive_data(data)
        goaway = [e for e in events if isinstance(e, h2.events.ConnectionTerminated)]
        check(closed and goaway and goaway[0].error_code == 0 and goaway[0].last_stream_id == 1
              and any(isinstance(e, h2.events.StreamEnded) and e.stream_id == 1 for e in events),
              "SIGTERM: an open gRPC connection gets its answer, then GOAWAY (NO_ERROR, last stream 1), then EOF (%r)" % goaway)
        peer.close()
        check(serve.wait(timeout=30) == 0, "SIGTERM: both doors stop, exit status 0")
        serve = None

        # serve.appCheck: the App Check token in x-firebase-appcheck beside the ID token, as Envoy passes it.
        number = "123456789012"
        app_id = "1:%s:ios:0a1b2c3d" % number
        config = os.path.join(work, "app-check.json")
        with open(config, "w") as f:
            json.dump({"profiles": [
                {"provider": "firebase", "projectId": PROJECT, "keys": corp_keys,
                 "allowedSignInProviders": ["apple.com", "password"]},
                {"name": "app-check", "provider": "firebase-app-check", "projectNumber": number, "keys": corp_keys}],
                "serve": {"appCheck": {"profile": "app-check"}}}, f)
        serve = subprocess.Popen([binary, "serve", "--config", config, "--listen", "127.0.0.1:0",
                                  "--grpc-listen", "127.0.0.1:0", "--threads", "2"], stdout=subprocess.PIPE, stderr=log)
        serve.stdout.readline()
        channel = grpc.insecure_channel(serve.stdout.readline().decode().strip().rsplit(" ", 1)[1])
        stub = auth_grpc.AuthorizationStub(channel)
        now = int(time.time())
        app_check = key.token({"sub": app_id, "aud": ["projects/" + number], "iss": "https://firebaseappcheck.googleapis.com/" + number,
                               "iat": now - 30, "exp": now + 3600})
        response = call({"authorization": "Bearer " + token, "x-firebase-appcheck": app_check})
        ok = {o.header.key: o.header.value for o in response.ok_response.headers}
        check(response.status.code == 0 and ok.get("x-auth-app-id") == app_id and ok.get("x-auth-subject") == "user-42",
              "serve.appCheck: an ID token and an App Check token: OK with x-auth-app-id (%s)" % sorted(ok))
        response = call({"authorization": "Bearer " + token})
        headers = denied_headers(response)
        check(response.status.code == grpc.StatusCode.UNAUTHENTICATED.value[0] and headers.get("x-auth-error-token") == "app-check",
              "serve.appCheck: no App Check token: UNAUTHENTICATED naming it (%s)" % headers)
        response = call({"authorization": "Bearer " + token, "x-firebase-appcheck": token})
        headers = denied_headers(response)
        check(response.status.code == grpc.StatusCode.UNAUTHENTICATED.value[0] and headers.get("x-auth-error-token") == "app-check"
              and headers.get("x-auth-error") == "wrong_audience",
              "serve.appCheck: the ID token where the App Check token belongs is refused (%s)" % headers)
        channel.close()
        serve.send_signal(signal.SIGTERM)
        check(serve.wait(timeout=30) == 0, "SIGTERM: the App Check service stops, exit status 0")
        serve = None

        # A Redis replay store: accepted, replayed; Redis stopped: UNAVAILABLE with a 503 denied_response (the token
        # was not judged, never `replayed`); Redis started again on its port: OK, without restarting the service.
        redis_port = free_port()
        redis = start_redis(redis_port, work)
        config = os.path.join(work, "replay.json")
        with open(config, "w") as f:
            json.dump({"profiles": [{"provider": "firebase", "projectId": PROJECT, "keys": corp_keys,
                                     "allowedSignInProviders": ["apple.com", "password"]}],
                       "serve": {"replayStore": "redis://127.0.0.1:%d" % redis_port}}, f)
        serve = subprocess.Popen([binary, "serve", "--config", config, "--listen", "127.0.0.1:0",
                                  "--grpc-listen", "127.0.0.1:0", "--threads", "2"], stdout=subprocess.PIPE, stderr=log)
        serve.stdout.readline()
        channel = grpc.insecure_channel(serve.stdout.readline().decode().strip().rsplit(" ", 1)[1])
        stub = auth_grpc.AuthorizationStub(channel)
        first = key.token(firebase_claims(sub="replay-1"))
        check(call({"authorization": "Bearer " + first}).status.code == 0, "replay store: a new token is OK")
        response = call({"authorization": "Bearer " + first})
        check(response.status.code == grpc.StatusCode.UNAUTHENTICATED.value[0]
              and denied_headers(response).get("x-auth-error") == "replayed" and response.status.message == "replayed",
              "replay store: the same token again is replayed")
        stop_redis(redis, redis_port)
        response = call({"authorization": "Bearer " + key.token(firebase_claims(sub="replay-2"))})
        headers = denied_headers(response)
        check(response.status.code == grpc.StatusCode.UNAVAILABLE.value[0] and response.denied_response.status.code == 503
              and headers.get("x-auth-error") == "replay_store_unavailable" and "retry-after" in headers
              and response.status.message == "replay_store_unavailable" and "www-authenticate" not in headers,
              "Redis stopped: UNAVAILABLE, denied_response 503 replay_store_unavailable with retry-after (%d, %s)"
              % (response.status.code, headers))
        redis = start_redis(redis_port, work)
        second = key.token(firebase_claims(sub="replay-2"))
        # The service's connection pool reconnects once its reconnect delay has passed.
        check(wait_until(lambda: call({"authorization": "Bearer " + second}).status.code == 0, 10),
              "Redis started again: OK, without restarting the service")
        stop_redis(redis, redis_port)
        channel.close()
        serve.send_signal(signal.SIGTERM)
        check(serve.wait(timeout=30) == 0, "SIGTERM: the replay-store service stops, exit status 0")
        serve = None
    finally:
        if serve and serve.poll() is None:
            serve.kill()
        if FAILURES:
            print("serve log:\n" + open(os.path.join(work, "serve.log"), errors="replace").read()[-3000:], file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES), file=sys.stderr)
        sys.exit(1)
    print("all grpc checks passed")


if __name__ == "__main__":
    main()
