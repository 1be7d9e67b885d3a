#!/usr/bin/env python3
"""`idtoken serve --grpc-listen` against hostile HTTP/2 clients, whose frames are built here by hand (Python's h2
stack: hpack and hyperframe), while a well-behaved grpcio client keeps calling Check beside them. For each attack:
the service stays up, its resident memory stays bounded, the well-behaved client is answered meanwhile, and the
attacks that only an abuser sends end with the abuser's connection closed (GOAWAY or EOF).

Attacks: rapid reset (CVE-2023-44487), a CONTINUATION flood (CVE-2024-27316), an HPACK bomb (a small header block
that decodes to megabytes), SETTINGS, PING and WINDOW_UPDATE floods, thousands of streams opened at once, streams
that never send END_STREAM, and a peer that sends calls and never reads. Before them, protocol errors (a frame above
16 KiB, frames on streams never opened or on the server's stream IDs, a window past 2^31 - 1, a bad HPACK index, a
flood of empty CONTINUATION frames, a frame inside a header block, a connection that does not open as HTTP/2 does)
and the door's own limits in small (201 calls reset, a header block decoding past the limit, DATA past the
connection window): each ends the connection with the GOAWAY code RFC 9113 names; a 101st call in flight is refused
with RST_STREAM REFUSED_STREAM; DATA after END_STREAM on a call still being answered is RST_STREAM STREAM_CLOSED, and
an answer whose window stays shut past serve.requestTimeoutSeconds (2 s here) is RST_STREAM CANCEL.

Usage: scripts/check_grpc_hostile.py PATH/TO/idtoken     (exit 0 when every check passed)
"""
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, GoAwayFrame, HeadersFrame, PingFrame, RstStreamFrame,
                              SettingsFrame, WindowUpdateFrame)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_grpc import stubs  # noqa: E402
from check_serve import FAILURES, Key, check, firebase_claims, firebase_config, rss_kib  # noqa: E402

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
METHOD = "/envoy.service.auth.v3.Authorization/Check"
MEMORY_BOUND_KIB = 96 * 1024


class Abuser:
    """One raw HTTP/2 connection to the gRPC door."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.encoder = hpack.Encoder()
        self.send(PREFACE + SettingsFrame(0).serialize())

    def send(self, data):
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            return False

    def headers(self, stream, end_stream=False, end_headers=True):
        block = self.encoder.encode([(":method", "POST"), (":scheme", "http"), (":path", METHOD),
                                     (":authority", "idtoken"), ("content-type", "application/grpc"), ("te", "trailers")])
        flags = (["END_HEADERS"] if end_headers else []) + (["END_STREAM"] if end_stream else [])
        frame = HeadersFrame(stream, flags=flags)
        frame.data = block
        return frame.serialize()

    def ended(self, seconds):
        """Whether the server ends the connection within `seconds` (a GOAWAY, or EOF), reading what it sends."""
        self.sock.settimeout(0.5)
        deadline = time.time() + seconds
        buffered = b""
        while time.time() < deadline:
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except OSError:
                return True
            if not chunk:
                return True
            buffered = (buffered + chunk)[-(1 << 16):]
            if goaway_in(buffered):
                return True
        return False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def server_frames(sock, seconds=5):
    """The frames the server sends within `seconds`, as (type, stream, payload), read whole; then "closed" if the server
    closed the connection (nothing more when the time ran out)."""
    sock.settimeout(0.5)
    deadline, buffered = time.time() + seconds, b""
    while time.time() < deadline:
        while len(buffered) >= 9 and len(buffered) >= 9 + int.from_bytes(buffered[:3], "big"):
            length = int.from_bytes(buffered[:3], "big")
            yield buffered[3], int.from_bytes(buffered[5:9], "big") & 0x7FFFFFFF, buffered[9:9 + length]
            buffered = buffered[9 + length:]
        try:
            chunk = sock.recv(1 << 16)
        except socket.timeout:
            continue
        except OSError:
            chunk = b""
        if not chunk:
            yield "closed"
            return
        buffered += chunk


def goaway_code(sock, seconds=5):
    """The error code of the GOAWAY the server sends within `seconds`, "closed" when it closes without one, None when it
    does neither."""
    for frame in server_frames(sock, seconds):
        if frame == "closed":
            return "closed"
        if frame[0] == 7 and len(frame[2]) >= 8:
            return int.from_bytes(frame[2][4:8], "big")
    return None


def reset_code(sock, stream, seconds=5):
    """The error code of the RST_STREAM the server sends on `stream` within `seconds`, None when it sends none."""
    for frame in server_frames(sock, seconds):
        if frame != "closed" and frame[0] == 3 and frame[1] == stream and len(frame[2]) == 4:
            return int.from_bytes(frame[2], "big")
    return None


def goaway_in(data):
    """Whether `data` (the tail of what the server sent) holds a GOAWAY frame header (type 7, stream 0)."""
    for i in range(len(data) - 8):
        if data[i + 3] == 7 and data[i + 5:i + 9] == b"\x00\x00\x00\x00":
            length = int.from_bytes(data[i:i + 3], "big")
            if 8 <= length <= 1 << 14:
                return True
    return False


def main():
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="idtk-grpc-hostile-")
    stubs(work)
    import grpc
    from envoy.service.auth.v3 import external_auth_pb2 as auth, external_auth_pb2_grpc as auth_grpc

    key = Key("hostile-key")
    # A short request timeout, so that the check of an answer stalled behind a shut window ends within seconds.
    _, config = firebase_config(work, key, serve={"requestTimeoutSeconds": 2})
    log = open(os.path.join(work, "serve.log"), "wb")
    serve = subprocess.Popen([binary, "serve", "--config", config, "--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0",
                              "--threads", "2"], stdout=subprocess.PIPE, stderr=log)
    try:
        serve.stdout.readline()
        grpc_address = serve.stdout.readline().decode().strip().rsplit(" ", 1)[1]
        port = int(grpc_address.rsplit(":", 1)[1])
        token = key.token(firebase_claims())
        request = auth.CheckRequest()
        request.attributes.request.http.headers["authorization"] = "Bearer " + token
        request.attributes.request.http.path = "/app"
        stub = auth_grpc.AuthorizationStub(grpc.insecure_channel(grpc_address))
        check(stub.Check(request, timeout=10).status.code == 0, "a well-behaved client is answered")
        baseline = rss_kib(serve.pid)
        body = request.SerializeToString()
        message = b"\x00" + len(body).to_bytes(4, "big") + body

        def beside(attack, name, expect_end):
            """Runs `attack` (which returns the abuser) while a well-behaved client calls Check every 50 ms."""
            slowest, failures, stop = [0.0], [0], threading.Event()

            def good():
                while not stop.is_set():
                    started = time.time()
                    try:
                        ok = stub.Check(request, timeout=5).status.code == 0
                    except grpc.RpcError:
                        ok = False
                    slowest[0] = max(slowest[0], time.time() - started)
                    failures[0] += 0 if ok else 1
                    time.sleep(0.05)

            caller = threading.Thread(target=good)
            caller.start()
            started = time.time()
            peak = [0]

            def watch():
                while not stop.is_set():
                    peak[0] = max(peak[0], rss_kib(serve.pid))
                    time.sleep(0.05)

            watcher = threading.Thread(target=watch)
            watcher.start()
            abuser = attack()
            ended = abuser.ended(10) if expect_end else None
            abuser.close()
            time.sleep(0.3)
            stop.set()
            caller.join()
            watcher.join()
            alive = serve.poll() is None
            grown = peak[0] - baseline
            check(alive and failures[0] == 0 and slowest[0] < 2.0 and grown < MEMORY_BOUND_KIB and ended is not False,
                  "%s: the service is up, the other client answered (slowest %.2f s, %d failed), resident memory +%d MiB%s (%.1f s)"
                  % (name, slowest[0], failures[0], grown // 1024,
                     "" if ended is None else ", the abuser's connection ended" if ended else ", the abuser's connection NOT ended",
                     time.time() - started))

        def rapid_reset():
            a = Abuser(port)
            for batch in range(100):
                frames = b"".join(a.headers(2 * (batch * 200 + i) + 1) + RstStreamFrame(2 * (batch * 200 + i) + 1, error_code=8).serialize()
                                  for i in range(200))
                if not a.send(frames):
                    break
            return a

        def continuation_flood():
            a = Abuser(port)
            a.send(a.headers(1, end_headers=False))
            junk = hpack.Encoder()
            junk.header_table_size = 0
            for i in range(4000):
                frame = ContinuationFrame(1)
                frame.data = junk.encode([("x-junk-%d" % i, "v" * 8000)])
                if not a.send(frame.serialize()):
                    break
            return a

        def hpack_bomb():
            a = Abuser(port)
            # One 4 KB value entered into the dynamic table, then referenced from header blocks: each reference is one
            # byte on the wire and 4 KB once decoded.
            first = a.encoder.encode([(":method", "POST"), (":scheme", "http"), (":path", METHOD), (":authority", "idtoken"),
                                      ("content-type", "application/grpc"), ("x-bomb", "b" * 4000)])
            frame = HeadersFrame(1, flags=["END_HEADERS"])
            frame.data = first
            a.send(frame.serialize())
            reference = bytes([0x80 | 62])   # the newest dynamic-table entry
            for stream in range(3, 403, 2):
                frame = HeadersFrame(stream, flags=["END_HEADERS"])
                frame.data = a.encoder.encode([(":method", "POST"), (":scheme", "http"), (":path", METHOD), (":authority", "idtoken")]) + reference * 4000
                if not a.send(frame.serialize()):
                    break
            return a

        def flood(make, count):
            def attack():
                a = Abuser(port)
                batch = b"".join(make(i) for i in range(1000))
                for _ in range(count // 1000):
                    if not a.send(batch):
                        break
                return a
            return attack

        def many_streams():
            a = Abuser(port)
            a.send(b"".join(a.headers(2 * i + 1) for i in range(5000)))
            return a

        def never_ending():
            a = Abuser(port)
            for i in range(100):
                data = DataFrame(2 * i + 1)
                data.data = message[:10]
                a.send(a.headers(2 * i + 1) + data.serialize())
            time.sleep(2)
            return a

        def never_reads():
            a = Abuser(port)
            a.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            for i in range(20000):
                data = DataFrame(2 * i + 1, flags=["END_STREAM"])
                data.data = message
                if not a.send(a.headers(2 * i + 1) + data.serialize()):
                    break
            return a

        # Protocol errors end the connection with the GOAWAY code RFC 9113 names for each.
        def protocol_error(frames, preface=True):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            try:
                sock.sendall((PREFACE + SettingsFrame(0).serialize() if preface else b"") + frames)
                return goaway_code(sock)
            except OSError:
                return "closed"
            finally:
                sock.close()

        def raw_frame(type_, flags, stream, payload):
            return len(payload).to_bytes(3, "big") + bytes([type_, flags]) + stream.to_bytes(4, "big") + payload

        # A call's header block in literals that add nothing to HPACK's table, so that it can be sent again and again.
        call_block = b"\x83\x86\x04" + bytes([len(METHOD)]) + METHOD.encode() + b"\x01\x07idtoken\x0f\x10\x10application/grpc"
        bomb_entry = b"\x40\x06x-bomb\x7f\xa1\x1e" + b"b" * 4000   # x-bomb: 4,000 bytes, added to the table (index 62)
        encoder = hpack.Encoder()
        opening = HeadersFrame(1, flags=["END_HEADERS"])
        opening.data = encoder.encode([(":method", "POST"), (":scheme", "http"), (":path", METHOD), (":authority", "idtoken"),
                                       ("content-type", "application/grpc")])
        for label, frames, preface, expected in (
                ("a frame above 16 KiB: FRAME_SIZE_ERROR", raw_frame(0, 0, 1, b"x" * 20000), True, 6),
                ("DATA on a stream never opened: PROTOCOL_ERROR", raw_frame(0, 0, 9, b"x"), True, 1),
                ("RST_STREAM on a stream never opened: PROTOCOL_ERROR",
                 opening.serialize() + raw_frame(3, 0, 7, b"\x00\x00\x00\x08"), True, 1),
                ("HEADERS from a server's (even) stream ID: PROTOCOL_ERROR", raw_frame(1, 4, 2, b"\x82"), True, 1),
                ("PUSH_PROMISE from a client: PROTOCOL_ERROR", raw_frame(5, 4, 1, b"\x00\x00\x00\x02"), True, 1),
                ("a connection window past 2^31 - 1: FLOW_CONTROL_ERROR",
                 raw_frame(8, 0, 0, (0x7FFFFFFF).to_bytes(4, "big")) * 2, True, 3),
                ("an HPACK index past the tables: COMPRESSION_ERROR", raw_frame(1, 5, 1, bytes([0x80 | 120])), True, 9),
                ("1,000 empty CONTINUATION frames: ENHANCE_YOUR_CALM",
                 raw_frame(1, 0, 1, b"") + raw_frame(9, 0, 1, b"") * 1000, True, 11),
                ("another frame inside a header block: PROTOCOL_ERROR", raw_frame(1, 0, 1, b"\x82") + raw_frame(6, 0, 0, b"\x00" * 8), True, 1),
                ("a first frame other than SETTINGS: PROTOCOL_ERROR", PREFACE + raw_frame(6, 0, 0, b"\x00" * 8), False, 1),
                ("201 calls opened and reset by the client (rapid reset): ENHANCE_YOUR_CALM",
                 b"".join(raw_frame(1, 4, 2 * i + 1, call_block) + raw_frame(3, 0, 2 * i + 1, (8).to_bytes(4, "big"))
                          for i in range(201)), True, 11),
                ("a header block that decodes past serve.maxHeaderBytes (an HPACK bomb): ENHANCE_YOUR_CALM",
                 raw_frame(1, 4, 1, call_block + bomb_entry) + raw_frame(1, 4, 3, call_block + b"\xbe" * 5), True, 11),
                ("DATA past the connection's 1 MiB window: FLOW_CONTROL_ERROR",
                 b"".join(raw_frame(1, 4, 2 * i + 1, call_block) + raw_frame(0, 0, 2 * i + 1, b"\x00" * 12000) * 2
                          for i in range(50)), True, 3)):
            code = protocol_error(frames, preface=preface)
            check(code == expected, "%s (GOAWAY %r)" % (label, code))
        check(protocol_error(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", preface=False) == "closed",
              "a connection that does not open with HTTP/2's preface is closed")
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(PREFACE + SettingsFrame(0).serialize() + b"".join(raw_frame(1, 4, 2 * i + 1, call_block) for i in range(101)))
        code = reset_code(sock, 201)
        sock.close()
        check(code == 7, "a 101st call in flight on a connection: its stream is refused, REFUSED_STREAM (RST_STREAM %r)" % code)
        # Two calls on a connection whose streams' send windows are 0: their answers wait. DATA on the first after its
        # END_STREAM resets that stream, STREAM_CLOSED; the second, whose window never opens, is reset with CANCEL
        # once serve.requestTimeoutSeconds (2 s here) has passed; no answer's DATA is sent past the shut window.
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        started = time.time()
        sock.sendall(PREFACE + SettingsFrame(0, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 0}).serialize()
                     + b"".join(raw_frame(1, 4, stream, call_block) + raw_frame(0, 1, stream, message) for stream in (1, 3)))
        time.sleep(0.3)
        sock.sendall(raw_frame(0, 0, 1, b"\x00"))
        resets, answered = {}, set()
        for frame in server_frames(sock, 6):
            if frame == "closed":
                break
            if frame[0] == 3 and len(frame[2]) == 4:
                resets[frame[1]] = (int.from_bytes(frame[2], "big"), time.time() - started)
            elif frame[0] == 0 and frame[1] in (1, 3) and frame[2]:
                answered.add(frame[1])
            if len(resets) == 2:
                break
        sock.close()

        def described(stream):
            return "RST_STREAM %d after %.1f s" % resets[stream] if stream in resets else "no RST_STREAM"
        check(resets.get(1, (None,))[0] == 5 and not answered,
              "DATA after END_STREAM on a call whose answer waits for its window: STREAM_CLOSED (%s)" % described(1))
        check(resets.get(3, (None,))[0] == 8 and 2 <= resets[3][1] < 4.5 and not answered,
              "an answer whose window stays shut past serve.requestTimeoutSeconds: CANCEL (%s)" % described(3))

        beside(rapid_reset, "rapid reset (20,000 streams opened and reset)", True)
        beside(continuation_flood, "CONTINUATION flood (32 MB of header block without END_HEADERS)", True)
        beside(hpack_bomb, "HPACK bomb (header blocks of 4 KB references that decode to 1.6 MB each)", True)
        beside(flood(lambda i: SettingsFrame(0, settings={SettingsFrame.MAX_CONCURRENT_STREAMS: 100}).serialize(), 100000),
               "SETTINGS flood (100,000 frames, none read)", False)
        beside(flood(lambda i: PingFrame(0, opaque_data=i.to_bytes(8, "big")).serialize(), 200000), "PING flood (200,000 frames, none read)", False)
        beside(flood(lambda i: WindowUpdateFrame(0, window_increment=1).serialize(), 200000), "WINDOW_UPDATE flood (200,000 frames)", False)
        beside(many_streams, "5,000 streams opened at once", False)
        beside(never_ending, "100 streams that never send END_STREAM", False)
        beside(never_reads, "20,000 calls from a peer that never reads", False)
        check(stub.Check(request, timeout=10).status.code == 0, "after every attack the well-behaved client is answered")
    finally:
        serve.terminate()
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
    if FAILURES:
        print("%d grpc hostile check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("all grpc hostile checks passed")


if __name__ == "__main__":
    main()
