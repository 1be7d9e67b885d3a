#!/usr/bin/env python3
"""`idtoken serve` against hostile and slow clients, on loopback, bounded in time (about 40 s in all). Each check
asserts a number:

- a client that pipelines requests and never reads its answers: the service's resident memory grows by less than
  UNREAD_RSS_BOUND_MIB, and the stalled connection is closed by the idle timeout;
- SIGTERM while 50 clients with small receive buffers read their pipelined answers slowly: exit status 0, and no
  connection ends inside an answer (every byte a client received belongs to a whole answer);
- a body sent one byte a second: every such connection is closed within requestTimeoutSeconds + 1.5 s of its first
  byte, and a head sent that way is answered 408 as soon;
- a request target in absolute form (`GET http://host/verify`) is answered as its path (RFC 9112 §3.2.2).

Usage: scripts/check_serve_hostile.py PATH/TO/idtoken     (exit status 0 when every check passed)
"""
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_serve as serve_checks  # noqa: E402  (the signing key, the claims and the process wrapper)
from check_serve import Key, Serve, check, firebase_claims, rss_kib  # noqa: E402

REQUEST_TIMEOUT = 3
IDLE_TIMEOUT = 3
UNREAD_SECONDS = 6
UNREAD_RSS_BOUND_MIB = 48
SLOW_READERS = 50
PIPELINED = 1000
SLOW_BODIES = 30


def verify_request(token, target="/verify"):
    return ("GET %s HTTP/1.1\r\nHost: auth\r\nAuthorization: Bearer %s\r\n\r\n" % (target, token)).encode()


def start(binary, work, key, grace=5, cache=1000):
    with open(os.path.join(work, "keys.json"), "w") as f:
        json.dump({"keys": [key.jwk()]}, f)
    config = {
        "profiles": [{"provider": "firebase", "projectId": serve_checks.PROJECT, "keys": "keys.json"}],
        "serve": {"requestTimeoutSeconds": REQUEST_TIMEOUT, "idleTimeoutSeconds": IDLE_TIMEOUT,
                  "shutdownGraceSeconds": grace, "verifiedTokenCache": cache},
    }
    path = os.path.join(work, "hostile.json")
    with open(path, "w") as f:
        json.dump(config, f)
    return Serve(binary, path, os.path.join(work, "hostile.log"))


def open_connections(port):
    value = serve_checks.metric(port, "idtoken_open_connections")
    return None if value is None else value - 1   # the /metrics request's own connection


def check_unread_pipeline(serve, token):
    """One connection sends pipelined requests as fast as the service takes them and never reads an answer."""
    before = rss_kib(serve.process.pid)
    connection = socket.create_connection(("127.0.0.1", serve.port))
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    connection.settimeout(0.2)
    chunk = verify_request(token) * 64
    sent = 0
    deadline = time.time() + UNREAD_SECONDS
    while time.time() < deadline:
        try:
            sent += connection.send(chunk)
        except socket.timeout:
            continue
        except OSError:
            break
    grown = (rss_kib(serve.process.pid) - before) / 1024
    check(grown < UNREAD_RSS_BOUND_MIB,
          "unread pipeline: %.1f MiB of requests sent in %d s, service RSS grew %.1f MiB (bound %d MiB)"
          % (sent / 1048576, UNREAD_SECONDS, grown, UNREAD_RSS_BOUND_MIB))
    # Stalled: the service reads nothing more, and the idle timeout closes the connection.
    closed = serve_checks.wait_until(lambda: open_connections(serve.port) == 0, IDLE_TIMEOUT + 4)
    check(closed, "unread pipeline: the stalled connection is closed by the idle timeout (%d s)" % IDLE_TIMEOUT)
    connection.close()


def check_slow_bodies(serve, token):
    """Bodies and heads that trickle in one byte a second are cut off by the request timeout."""
    head = ("POST /verify HTTP/1.1\r\nHost: auth\r\nAuthorization: Bearer %s\r\nContent-Length: 10000\r\n\r\n" % token).encode()
    closed_after = []
    answered = []
    lock = threading.Lock()

    def slow_body():
        s = socket.create_connection(("127.0.0.1", serve.port))
        started = time.time()
        s.sendall(head)
        s.settimeout(0.2)
        received = b""
        end = started + REQUEST_TIMEOUT + 6
        while time.time() < end:
            try:
                s.send(b"x")
            except OSError:
                break
            try:
                data = s.recv(65536)
                if not data:
                    break
                received += data
            except socket.timeout:
                pass
            except OSError:
                break
            time.sleep(0.8)
        with lock:
            closed_after.append(time.time() - started)
            answered.append(received.startswith(b"HTTP/1.1 200 "))
        s.close()

    threads = [threading.Thread(target=slow_body) for _ in range(SLOW_BODIES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    check(all(answered), "slow bodies: each request is answered 200 when its head is complete (%d of %d)"
          % (sum(answered), SLOW_BODIES))
    worst = max(closed_after)
    check(worst <= REQUEST_TIMEOUT + 1.5,
          "slow bodies: all %d connections sending a byte a second closed within %.1f s (limit %d s + 1.5 s)"
          % (SLOW_BODIES, worst, REQUEST_TIMEOUT))

    s = socket.create_connection(("127.0.0.1", serve.port))
    started = time.time()
    s.settimeout(0.2)
    received = b""
    for byte in verify_request(token)[:40]:
        try:
            s.send(bytes([byte]))
            received += s.recv(4096)
        except socket.timeout:
            pass
        except OSError:
            break
        if received:
            break
        time.sleep(0.5)
    took = time.time() - started
    check(received.startswith(b"HTTP/1.1 408 ") and took <= REQUEST_TIMEOUT + 1.5,
          "slow head: 408 after %.1f s (limit %d s + 1.5 s)" % (took, REQUEST_TIMEOUT))
    s.close()


def check_absolute_form(serve, token):
    s = socket.create_connection(("127.0.0.1", serve.port), timeout=5)
    s.sendall(verify_request(token, "http://auth.internal:8080/verify"))
    answer = s.recv(65536)
    check(answer.startswith(b"HTTP/1.1 200 ") and b"X-Auth-Subject: user-42" in answer,
          "absolute-form target http://auth.internal:8080/verify: 200 with the identity headers")
    s.close()


def answers_split(data):
    """The number of whole answers in `data` (each ends its head with CRLF CRLF and has no body) and the bytes
    after the last one."""
    parts = data.split(b"\r\n\r\n")
    return len(parts) - 1, parts[-1]


def check_shutdown_with_slow_readers(binary, work, key, token):
    # Without the verified-token cache every request costs a signature check, so that when the signal comes the
    # service has not read every pipelined request yet: unread bytes in a socket it closes.
    serve = start(binary, work, key, cache=0)
    results = []
    lock = threading.Lock()
    ready = threading.Barrier(SLOW_READERS + 1)

    def client():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        s.connect(("127.0.0.1", serve.port))
        requests = verify_request(token) * PIPELINED
        sender = threading.Thread(target=lambda: _send_all(s, requests), daemon=True)
        sender.start()
        ready.wait()
        data = b""
        ending = "eof"
        s.settimeout(10)
        while True:
            try:
                chunk = s.recv(8192)
            except ConnectionResetError:
                ending = "reset"
                break
            except OSError as error:
                ending = "error: %s" % error
                break
            if not chunk:
                break
            data += chunk
            time.sleep(0.02)
        whole, rest = answers_split(data)
        with lock:
            results.append((ending, whole, len(rest)))
        s.close()

    threads = [threading.Thread(target=client) for _ in range(SLOW_READERS)]
    for thread in threads:
        thread.start()
    ready.wait()
    time.sleep(0.3)
    serve.process.send_signal(signal.SIGTERM)
    started = time.time()
    status = serve.process.wait(timeout=30)
    took = time.time() - started
    for thread in threads:
        thread.join(timeout=30)
    partial = [r for r in results if r[2] > 0]
    resets = sum(1 for r in results if r[0] == "reset")
    answered = sum(r[1] for r in results)
    check(status == 0, "SIGTERM with %d slow readers: exit 0 after %.1f s" % (SLOW_READERS, took))
    check(len(results) == SLOW_READERS and not partial,
          "SIGTERM with slow readers: %d answers received whole, %d of %d connections ended inside an answer "
          "(%d ended in a reset after a whole answer)" % (answered, len(partial), SLOW_READERS, resets))


def _send_all(s, data):
    try:
        s.sendall(data)
    except OSError:
        pass


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="check-serve-hostile-")
    try:
        key = Key("hostile-key-1")
        token = key.token(firebase_claims())
        serve = start(binary, work, key)
        try:
            check_absolute_form(serve, token)
            check_unread_pipeline(serve, token)
            check_slow_bodies(serve, token)
        finally:
            status = serve.stop()
        check(status == 0, "SIGTERM: exit 0")
        check_shutdown_with_slow_readers(binary, work, key, token)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if serve_checks.FAILURES:
        print("%d hostile-client check(s) failed" % len(serve_checks.FAILURES))
        sys.exit(1)
    print("all hostile-client checks passed")


if __name__ == "__main__":
    main()
