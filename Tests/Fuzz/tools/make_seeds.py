#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets (OUT/<Target>/) from the repository's vectors.

Usage: make_seeds.py OUT. scripts/fuzz runs it before every run (into .build-fuzz/seeds), so new vectors become
seeds without a commit; Tests/Fuzz/Corpus/ holds the committed, coverage-minimised corpus on top of these.
Deterministic: the same Vectors/ give the same files, named by the SHA-1 of their content.

- CompactJWS: every distinct token in Vectors/ (generated provider cases, real provider tokens, Wycheproof JWS,
  RFC 7515/7520) as mode 0 (`\\x00` + token), and the structured form (`\\x01`, a time byte, header `\\xFF`
  payload `\\xFF` signature) of one token per (file, expected outcome, header shape).
- JSON: every distinct decoded header and payload, and every small JSON document under Vectors/.
- JWKS: every key set, JWK and certificate map in Vectors/ (modes 0 and 1), and every PEM string (mode 2).
- AuditLine: the sample audit log (Vectors/samples/sample.log) in pieces of four lines, as they are, with CRLF line
  ends and gzip-compressed, plus lines of every other form the audit reads (JSON records, blank, binary, CRLF).
- CheckRequest: Envoy `ext_authz` CheckRequests in the protobuf wire format, as Envoy builds them for requests with
  a real token (the headers map with pseudo-headers, `header_map` with raw values, a context extension, unknown
  fields of every wire type around the ones the gRPC door reads).
- GRPCConnection: HTTP/2 connections to the gRPC door carrying those CheckRequests, and its control frames, written
  frame by frame (see grpc_connection_seeds).
- HPACK: header blocks of one connection, the door's calls and RFC 7541's examples (see hpack_seeds).
- HTTPHead: request heads as nginx (auth_request), Envoy (ext_authz) and Traefik (forwardAuth) send them to
  `idtoken serve`, pipelined pairs, and the framings it refuses, each with a real token (first byte: the limit).
"""
import base64, gzip, hashlib, json, os, re, sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
JWS = re.compile(r"^[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$")
MAX_JSON = 8192


def b64decode(segment):
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except Exception:
        return None


def walk(value, visit):
    visit(value)
    if isinstance(value, dict):
        for v in value.values():
            walk(v, visit)
    elif isinstance(value, list):
        for v in value:
            walk(v, visit)


def is_key_document(value):
    if not isinstance(value, dict) or not value:
        return False
    if isinstance(value.get("keys"), list) or "kty" in value:
        return True
    return all(isinstance(v, str) and "-----BEGIN" in v for v in value.values())


# FuzzAuditLine's first byte: 4096-byte chunks and a 1 MiB line cap; bit 0 gzip, bit 3 CSV.
AUDIT_PLAIN, AUDIT_CSV, AUDIT_GZIP = 0xC2, 0xCA, 0xC3


def audit_seeds(add):
    log = open(os.path.join(ROOT, "Vectors", "samples", "sample.log"), "rb").read()
    lines = log.split(b"\n")
    for start in range(0, len(lines), 4):
        piece = b"\n".join(lines[start:start + 4]) + b"\n"
        add(bytes([AUDIT_PLAIN]) + piece)
        add(bytes([AUDIT_CSV]) + piece.replace(b"\n", b"\r\n"))
        add(bytes([AUDIT_GZIP]) + gzip.compress(piece, mtime=0))
    token = next(l for l in lines if b"eyJ" in l)
    token = token[token.index(b"eyJ"):].split(b"&")[0].split(b'"')[0].split(b" ")[0]
    add(bytes([AUDIT_PLAIN]) + b"\n".join([
        token,
        b'{"token":"' + token + b'","at":"2026-01-01T12:00:00Z","id":7,"nonce":"n"}',
        b'{"token":"' + token + b'","at":1767268800}',
        b"", b"   \t", b"\x00\x01\xff binary", b"2026-01-01T12:00:00Z Bearer " + token,
        b"[01/Jan/2026:12:00:00 +0000] " + token + b"\r", b"id_token=" + token, b"{", b"no token here",
    ]))


def http_seeds(add):
    lines = open(os.path.join(ROOT, "Vectors", "samples", "sample.log"), "rb").read().split(b"\n")
    token = next(l for l in lines if b"eyJ" in l)
    token = token[token.index(b"eyJ"):].split(b"&")[0].split(b'"')[0].split(b" ")[0]
    bearer = b"Authorization: Bearer " + token + b"\r\n"
    heads = [
        b"GET /verify HTTP/1.0\r\nHost: auth\r\n" + bearer + b"X-Original-URI: /app\r\n\r\n",                        # nginx
        b"DELETE /verify/api/orders/7?x=1 HTTP/1.1\r\nhost: api\r\ncontent-length: 0\r\n" + bearer + b"\r\n",       # Envoy
        b"GET /verify HTTP/1.1\r\nHost: auth\r\n" + bearer + b"X-Forwarded-Method: POST\r\nX-Forwarded-Uri: /a\r\n\r\n",  # Traefik
        b"GET /verify/firebase HTTP/1.1\r\nHost: a\r\nCookie: a=1\r\nCookie: __session=" + token + b"\r\nX-IDToken-Nonce: n\r\n\r\n",
        b"POST /verify HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n" + bearer + b"\r\nhello",
        b"POST /verify HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        b"GET /verify HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, close\r\n\r\nGET /healthz HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /verify HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
        b"GET /verify HTTP/1.1\nHost: a\n\n",
        b"GET /verify HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"\r\n\r\nGET / HTTP/2.0\r\n\r\n",
    ]
    for head in heads:
        add(b"\x03" + head)
        add(b"\x01" + head[:300])


def check_request_seeds(add):
    """CheckRequests written field by field (the field numbers of Protos/), no protobuf library needed. Returns them."""
    lines = open(os.path.join(ROOT, "Vectors", "samples", "sample.log"), "rb").read().split(b"\n")
    token = next(l for l in lines if b"eyJ" in l)
    token = token[token.index(b"eyJ"):].split(b"&")[0].split(b'"')[0].split(b" ")[0]

    def varint(n):
        out = b""
        while n >= 0x80:
            out += bytes([n & 0x7F | 0x80])
            n >>= 7
        return out + bytes([n])

    def field(number, value):
        return varint(number << 3 | 2) + varint(len(value)) + value

    def entry(key, value):
        return field(1, key) + field(2, value)

    def check(http, extensions=b"", around=b""):
        return field(1, around + field(4, field(1, b"\x08\x01") + field(2, http)) + extensions)

    messages = []
    add_message = add

    def add(message):
        messages.append(message)
        add_message(message)

    bearer = b"Bearer " + token
    headers = b"".join(field(3, entry(k, v)) for k, v in [(b":authority", b"api.example.com"), (b":method", b"GET"),
                                                         (b":path", b"/orders/7"), (b"authorization", bearer),
                                                         (b"x-request-id", b"4f1c"), (b"cookie", b"a=1; __session=" + token),
                                                         (b"x-idtoken-nonce", b"n-1"), (b"x-firebase-appcheck", token)])
    http = field(1, b"17") + field(2, b"GET") + headers + field(4, b"/orders/7") + field(5, b"api.example.com") + b"\x48\x00"
    add(check(http))
    add(check(http, extensions=field(10, entry(b"idtoken-profile", b"firebase"))))
    add(check(http, around=field(1, field(1, field(1, b"127.0.0.1"))) + b"\x2d\x01\x02\x03\x04"))
    raw = b"".join(field(1, field(1, k) + field(3, v)) for k, v in [(b"Authorization", bearer), (b"Cookie", b"a=1"),
                                                                     (b"cookie", b"__session=" + token)])
    add(check(field(13, raw) + field(4, b"/")))
    add(check(field(3, entry(b"authorization", b"Bearer a")) + field(3, entry(b"authorization", bearer))))
    add(b"")
    return messages


def grpc_connection_seeds(add, messages):
    """HTTP/2 connections to the gRPC door, frames written by hand (HPACK literals without Huffman coding): calls carrying
    the CheckRequests above as grpcio and Envoy open them, a second call naming its fields from HPACK's dynamic table,
    a header block split into CONTINUATIONs, a message in several DATA frames (one padded), trailers from the client,
    and the control frames (SETTINGS, PING, WINDOW_UPDATE, PRIORITY, RST_STREAM, GOAWAY). The first byte is the
    target's mode: even, the target writes the preface and an empty SETTINGS first; the rest arrives in one read or
    in reads of 1 + (mode >> 2) bytes."""
    def frame(type_, flags, stream, payload):
        return len(payload).to_bytes(3, "big") + bytes([type_, flags]) + stream.to_bytes(4, "big") + payload

    def integer(value, prefix_bits, first=0):
        limit = (1 << prefix_bits) - 1
        if value < limit:
            return bytes([first | value])
        out, value = bytes([first | limit]), value - limit
        while value >= 0x80:
            out += bytes([value & 0x7F | 0x80])
            value >>= 7
        return out + bytes([value])

    def literal(name, value, indexing=False):
        return (b"\x40" if indexing else b"\x00") + integer(len(name), 7) + name + integer(len(value), 7) + value

    fields = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", b"/envoy.service.auth.v3.Authorization/Check"),
              (b":authority", b"ext-authz"), (b"content-type", b"application/grpc"), (b"te", b"trailers"),
              (b"grpc-timeout", b"200m"), (b"user-agent", b"grpc-python/1.68")]
    block = b"".join(literal(n, v) for n, v in fields)
    indexing = b"".join(literal(n, v, indexing=True) for n, v in fields)
    # The eight entries just added, newest first at index 62: each call after the first names them by index.
    by_index = bytes(0x80 | (62 + k) for k in reversed(range(len(fields))))
    settings = frame(4, 0, 0, (3).to_bytes(2, "big") + (100).to_bytes(4, "big") + (4).to_bytes(2, "big") + (1 << 22).to_bytes(4, "big"))
    window = frame(8, 0, 0, (1 << 24).to_bytes(4, "big"))
    for message in messages[:4]:
        framed = b"\x00" + len(message).to_bytes(4, "big") + message
        call = frame(1, 4, 1, block) + frame(0, 1, 1, framed)
        connections = [
            settings + window + call,
            frame(1, 4, 1, indexing) + frame(0, 1, 1, framed) + frame(1, 4, 3, by_index) + frame(0, 1, 3, framed),
            frame(1, 0, 1, block[:20]) + frame(9, 0, 1, block[20:40]) + frame(9, 4, 1, block[40:]) + frame(0, 1, 1, framed),
            frame(1, 4 | 8 | 0x20, 1, bytes([3]) + b"\x00\x00\x00\x00\x10" + block + b"\x00\x00\x00")
            + frame(0, 0, 1, framed[:7]) + frame(0, 8, 1, bytes([2]) + framed[7:20] + b"\x00\x00") + frame(0, 1, 1, framed[20:]),
            frame(1, 4, 1, block) + frame(0, 0, 1, framed) + frame(1, 5, 1, literal(b"x-trailer", b"1")),
            frame(6, 0, 0, b"12345678") + frame(2, 0, 3, b"\x00\x00\x00\x01\x10") + frame(8, 0, 1, (1000).to_bytes(4, "big"))
            + call + frame(1, 4, 3, block) + frame(3, 0, 3, (8).to_bytes(4, "big")) + frame(7, 0, 0, bytes(8)),
        ]
        for connection in connections:
            add(b"\x00" + connection)
            add(b"\x10" + connection)
        add(b"\x41" + b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + settings + call)
    return [block, indexing, by_index]


def hpack_seeds(add, blocks):
    """Header blocks of one connection, each after a one-byte length: the gRPC door's calls above (literal, then
    indexed into the table and named by index), and RFC 7541's Appendix C requests and responses (with and without
    Huffman coding; the responses after a table size update to 256 bytes, so that entries are evicted)."""
    rfc = [
        ["828684410f7777772e6578616d706c652e636f6d", "828684be58086e6f2d6361636865",
         "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565"],
        ["828684418cf1e3c2e5f23a6ba0ab90f4ff", "828684be5886a8eb10649cbf",
         "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"],
        ["3fe101488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
         "4883640effc1c0bf",
         "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007"],
    ]
    for connection in rfc:
        add(b"".join(bytes([len(bytes.fromhex(h))]) + bytes.fromhex(h) for h in connection))
    literal, indexing, by_index = blocks
    add(bytes([len(literal)]) + literal)
    add(bytes([len(indexing)]) + indexing + bytes([len(by_index)]) + by_index + bytes([len(by_index)]) + by_index)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py OUT")
    destination = sys.argv[1]
    corpora = {"CompactJWS": {}, "JSON": {}, "JWKS": {}, "AuditLine": {}, "HTTPHead": {}, "CheckRequest": {},
               "GRPCConnection": {}, "HPACK": {}}

    def add(target, data):
        corpora[target][hashlib.sha1(data).hexdigest()] = data

    structured_seen = set()
    for directory, _, files in sorted(os.walk(os.path.join(ROOT, "Vectors"))):
        for name in sorted(files):
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, ROOT)
            if name.endswith(".pem"):
                continue  # private TEST ONLY keys; the public forms come from the key sets
            if not name.endswith(".json"):
                continue
            raw = open(path, "rb").read()
            try:
                document = json.loads(raw)
            except ValueError:
                add("JSON", raw[:MAX_JSON])  # a deliberately broken document: a seed as it is
                continue
            if len(raw) <= MAX_JSON and isinstance(document, dict):
                add("JSON", raw)

            def visit(value):
                if isinstance(value, dict) and "token" in value and isinstance(value["token"], str):
                    expect = value.get("expect") or {}
                    outcome = expect.get("error") or ("valid" if expect.get("valid") else "?")
                    token_seed(value["token"], (relative, outcome))
                elif isinstance(value, str):
                    if JWS.match(value) and value.startswith("eyJ"):
                        token_seed(value, None)
                    if "-----BEGIN" in value:
                        add("JWKS", b"\x02" + value.encode())
                if is_key_document(value):
                    data = json.dumps(value).encode()
                    add("JWKS", b"\x00" + data)
                    add("JWKS", b"\x01" + data)

            def token_seed(token, group):
                add("CompactJWS", b"\x00" + token.encode())
                parts = token.split(".")
                if len(parts) != 3:
                    return
                header, payload, signature = (b64decode(p) for p in parts)
                for decoded in (header, payload):
                    if decoded and decoded.lstrip().startswith(b"{"):
                        add("JSON", decoded)
                if header is None or payload is None or signature is None:
                    return
                key = (group, header)
                if group is not None and key in structured_seen:
                    return
                structured_seen.add(key)
                add("CompactJWS", b"\x01\x80" + header + b"\xff" + payload + b"\xff" + signature)

            walk(document, visit)

    audit_seeds(lambda data: add("AuditLine", data))
    http_seeds(lambda data: add("HTTPHead", data))
    messages = check_request_seeds(lambda data: add("CheckRequest", data))
    blocks = grpc_connection_seeds(lambda data: add("GRPCConnection", data), messages)
    hpack_seeds(lambda data: add("HPACK", data), blocks)

    for target, files in corpora.items():
        directory = os.path.join(destination, target)
        os.makedirs(directory, exist_ok=True)
        for old in os.listdir(directory):
            if old not in files:
                os.remove(os.path.join(directory, old))
        for digest, data in sorted(files.items()):
            with open(os.path.join(directory, digest), "wb") as out:
                out.write(data)
        size = sum(len(d) for d in files.values())
        print(f"{target}: {len(files)} seeds, {size // 1024} KiB", file=sys.stderr)


if __name__ == "__main__":
    main()
