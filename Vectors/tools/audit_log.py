#!/usr/bin/env python3
"""Writes token logs for `idtoken audit`: the bundled sample (Vectors/samples/) and logs of any size for the
benchmark, with Firebase, Sign in with Apple and Facebook Limited Login tokens and a chosen mix of defects.

    python3 Vectors/tools/audit_log.py sample
        rewrites Vectors/samples/: sample.log (every input form: bare tokens, JSON records, access-log and
        Common Log Format lines, malformed and binary lines, blank lines), sample.log.gz, keys/,
        audit-config.json and expected-summary.json (what the audit must find, computed here, independently
        of the Swift code)

    python3 Vectors/tools/audit_log.py log --lines 1000000 --out /tmp/audit-1m.log [--gzip]
        [--mix valid=90,expired=3,forged=2,wrong_audience=1,unknown_key=1,replayed=1,malformed=2]
        [--forms json=60,access=30,bare=10] [--distinct N] [--seed 7] [--jobs 2]
        a benchmark log; the line printed at the end gives the audit command and its --at time

Deterministic: the keys are TEST ONLY keys committed in Vectors/samples/keys/ (made on the first run), every
random choice comes from random.Random(seed), and RSA PKCS#1 v1.5 signatures are deterministic, so a rerun
writes identical files. The records are judged at their own `at` (JSON records), the timestamp at the start of
an access-log line, or the audit's --at (bare tokens): SAMPLE_AT for the sample.
"""
import argparse
import base64
import datetime
import gzip
import hashlib
import json
import multiprocessing
import os
import random
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.normpath(os.path.join(HERE, "..", "samples"))
KEYS_DIR = os.path.join(SAMPLES, "keys")
SEED = 20260101
LEEWAY = 60
DAY0 = 1767225600          # 2026-01-01T00:00:00Z
SAMPLE_AT = DAY0 + 12 * 3600   # 2026-01-01T12:00:00Z: --at for records without a time
ROTATION = DAY0 + 12 * 3600    # Firebase signs with key 1 before noon, key 2 after

FIREBASE_PROJECT = "idtokenkit-sample"
APPLE_CLIENT = "com.example.idtokenkit"
FACEBOOK_APP = "1234567890123456"
ISSUERS = {
    "firebase": "https://securetoken.google.com/" + FIREBASE_PROJECT,
    "apple": "https://appleid.apple.com",
    "facebook": "https://www.facebook.com",
}
AUDIENCES = {"firebase": FIREBASE_PROJECT, "apple": APPLE_CLIENT, "facebook": FACEBOOK_APP}
KIDS = {
    "firebase-1": "a1f0c2d3e4b5a6978877665544332211ffeeddcc",
    "firebase-2": "b2e1d3c4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0",
    "apple": "W6WcOKB",
    "facebook": "d458ab5237807dc6718901e522cebcd8e8157791",
}


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def int_bytes(n):
    return n.to_bytes((n.bit_length() + 7) // 8, "big")


def load_or_create(name):
    path = os.path.join(KEYS_DIR, name)
    if os.path.exists(path):
        with open(path, "rb") as f:
            return serialization.load_pem_private_key(f.read(), password=None)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    os.makedirs(KEYS_DIR, exist_ok=True)
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return key


def keys():
    return {
        "firebase-1": load_or_create("TEST-ONLY-firebase-1.pem"),
        "firebase-2": load_or_create("TEST-ONLY-firebase-2.pem"),
        "apple": load_or_create("TEST-ONLY-apple.pem"),
        "facebook": load_or_create("TEST-ONLY-facebook.pem"),
        "attacker": load_or_create("TEST-ONLY-attacker.pem"),
    }


def jwk(key, kid):
    pub = key.public_key().public_numbers()
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64u(int_bytes(pub.n)), "e": b64u(int_bytes(pub.e))}


def certificate(key, name):
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    start = datetime.datetime(2025, 12, 1, tzinfo=datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(int(hashlib.sha256(name.encode()).hexdigest()[:16], 16))
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=90))
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def sign(header, claims, key):
    h = b64u(json.dumps(header, separators=(",", ":")).encode())
    p = b64u(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{h}.{p}".encode()
    return f"{h}.{p}.{b64u(key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256()))}"


def raw_nonce(rng):
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(32))


def claims_for(provider, rng, iat, nonce=None):
    """Realistic claims of each provider, issued at `iat`, valid for one hour."""
    uid = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(28))
    name = rng.choice(["Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Edsger Dijkstra", "Barbara Liskov"])
    email = name.lower().replace(" ", ".") + "@example.com"
    if provider == "firebase":
        return {"name": name, "iss": ISSUERS["firebase"], "aud": FIREBASE_PROJECT, "auth_time": iat - rng.randint(0, 86400),
                "user_id": uid, "sub": uid, "iat": iat, "exp": iat + 3600, "email": email, "email_verified": True,
                "firebase": {"identities": {"email": [email]}, "sign_in_provider": rng.choice(["password", "apple.com", "google.com"])}}
    if provider == "apple":
        c = {"iss": ISSUERS["apple"], "aud": APPLE_CLIENT, "exp": iat + 3600, "iat": iat,
             "sub": "%06d.%s.%04d" % (rng.randint(0, 999999), uid[:32].lower(), rng.randint(0, 9999)),
             "c_hash": b64u(bytes(rng.getrandbits(8) for _ in range(16))), "email": uid[:10].lower() + "@privaterelay.appleid.com",
             "email_verified": True, "is_private_email": True, "auth_time": iat, "nonce_supported": True}
        if nonce is not None:
            c["nonce"] = hashlib.sha256(nonce.encode()).hexdigest()
        return c
    c = {"iss": ISSUERS["facebook"], "aud": FACEBOOK_APP, "sub": str(rng.randint(10**15, 10**16 - 1)), "iat": iat, "exp": iat + 3600,
         "jti": "%08x-%04x-%04x-%04x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(48)),
         "email": email, "given_name": name.split()[0], "family_name": name.split()[1], "name": name,
         "picture": "https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=%d&height=100&width=100" % rng.randint(10**15, 10**16 - 1)}
    if nonce is not None:
        c["nonce"] = hashlib.sha256(nonce.encode()).hexdigest()
    return c


def signing_kid(provider, iat):
    if provider == "firebase":
        return "firebase-1" if iat < ROTATION else "firebase-2"
    return provider


DEFECTS = ["valid", "expired", "not_yet_valid", "forged", "tampered", "wrong_audience", "unknown_key", "alg_none",
           "nonce_mismatch", "replayed", "malformed", "binary"]
# The error code each defect must produce (None: valid). `replayed` is a valid token seen before: `replayed`
# with --replay, valid without.
EXPECTED = {"valid": None, "expired": "expired", "not_yet_valid": "issued_in_future", "forged": "bad_signature",
            "tampered": "bad_signature", "wrong_audience": "wrong_audience", "unknown_key": "unknown_key",
            "alg_none": "algorithm_not_allowed", "nonce_mismatch": "nonce_mismatch", "replayed": None,
            "malformed": "malformed", "binary": "malformed"}


def make_token(ks, provider, defect, rng, at):
    """A token for `provider` with `defect`, to be presented at `at`. Returns (token, raw nonce or None)."""
    if defect == "expired":
        iat = at - 3600 - LEEWAY - rng.randint(1, 6 * 3600)
    elif defect == "not_yet_valid":
        iat = at + LEEWAY + rng.randint(120, 3600)
    else:
        iat = at - rng.randint(0, 3000)
    nonce = raw_nonce(rng) if provider != "firebase" else None
    claims = claims_for(provider, rng, iat, nonce)
    kid_name = signing_kid(provider, iat)
    header = {"alg": "RS256", "kid": KIDS[kid_name], "typ": "JWT"}
    key = ks[kid_name]
    if defect == "wrong_audience":
        claims["aud"] = rng.choice(["another-project", "com.example.other", "9999999999999999"])
    if defect == "unknown_key":
        header["kid"] = "retired-" + KIDS[kid_name][:8]
    if defect == "forged":
        key = ks["attacker"]
    if defect == "alg_none":
        h = b64u(json.dumps({"alg": "none", "typ": "JWT"}, separators=(",", ":")).encode())
        p = b64u(json.dumps(claims, separators=(",", ":")).encode())
        return f"{h}.{p}.", nonce
    token = sign(header, claims, key)
    if defect == "tampered":
        h, p, s = token.split(".")
        claims["sub"] = "admin"
        token = h + "." + b64u(json.dumps(claims, separators=(",", ":")).encode()) + "." + s
    if defect == "nonce_mismatch":
        nonce = raw_nonce(rng)
    return token, nonce


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def clf(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%d/%b/%Y:%H:%M:%S +0000")


def render(form, token, at, rng, index, nonce=None):
    """One log line holding `token` in `form`."""
    if form == "json":
        record = {"id": "req-%06d" % index, "at": iso(at) if index % 2 else at, "token": token}
        if nonce is not None:
            record["nonce"] = nonce
        return json.dumps(record, separators=(",", ":"))
    if form == "access":
        ip = "203.0.113.%d" % rng.randint(1, 254)
        path = rng.choice(["/api/me", "/api/orders", "/v1/session", "/graphql"])
        return f'{iso(at)} {ip} POST {path} 200 "Authorization: Bearer {token}" ua="Example/1.0"'
    if form == "clf":
        ip = "198.51.100.%d" % rng.randint(1, 254)
        return f'{ip} - - [{clf(at)}] "GET /callback?id_token={token}&state=xyz HTTP/1.1" 302 0'
    return token


def malformed_line(rng, index):
    return rng.choice([
        "this line holds no token at all",
        '{"token": 42, "at": "2026-01-01T10:00:00Z"}',
        '{"token": "eyJhbGciOiJSUzI1NiJ9.e30", "at": "yesterday"}',
        "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.not*base64.sig",
        '{"id": "req-%d", "token": "abc.def.ghi"' % index,
        "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0",
    ])


def binary_line(rng):
    return bytes(rng.choice([0, 1, 2, 0x7F, 0xFF, 0xFE, 0xC3, 0x28, 0x41, 0x9F]) for _ in range(rng.randint(20, 80)))


def write_keysets(ks):
    fb = {KIDS["firebase-1"]: certificate(ks["firebase-1"], "firebase-1"),
          KIDS["firebase-2"]: certificate(ks["firebase-2"], "firebase-2")}
    sets = {
        "firebase.json": fb,
        "apple.json": {"keys": [jwk(ks["apple"], KIDS["apple"])]},
        "facebook.json": {"keys": [jwk(ks["facebook"], KIDS["facebook"])]},
    }
    for name, content in sets.items():
        with open(os.path.join(KEYS_DIR, name), "w") as f:
            json.dump(content, f, indent=2)
            f.write("\n")


CONFIG = {
    "at": iso(SAMPLE_AT),
    "leeway": LEEWAY,
    "profiles": [
        {"provider": "firebase", "projectId": FIREBASE_PROJECT, "keys": "keys/firebase.json"},
        {"provider": "apple", "audiences": [APPLE_CLIENT], "keys": "keys/apple.json"},
        {"provider": "facebook", "appId": FACEBOOK_APP, "keys": "keys/facebook.json"},
    ],
}


def sample():
    """The bundled sample: every provider, every defect, every input form."""
    ks = keys()
    write_keysets(ks)
    with open(os.path.join(SAMPLES, "audit-config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
        f.write("\n")
    rng = random.Random(SEED)
    lines, expected = [], []       # expected: (line number, error code or None, provider)
    accepted = []                  # (token, provider, at) of valid tokens, for replays
    plan = []
    for provider in ["firebase", "apple", "facebook"]:
        plan += [(provider, "valid")] * 24
        for defect in ["expired", "not_yet_valid", "forged", "tampered", "wrong_audience", "unknown_key", "alg_none"]:
            plan += [(provider, defect)] * 2
        if provider != "firebase":
            plan += [(provider, "nonce_mismatch")] * 2
        plan += [(provider, "replayed")] * 3
    plan += [(None, "malformed")] * 6 + [(None, "binary")] * 3
    rng.shuffle(plan)
    # Replays need an earlier acceptance: move them after the valid tokens they copy.
    plan = [p for p in plan if p[1] != "replayed"] + [p for p in plan if p[1] == "replayed"]
    for index, (provider, defect) in enumerate(plan, start=1):
        at = DAY0 + rng.randint(600, 86400 - 600)
        if defect == "malformed":
            lines.append(malformed_line(rng, index).encode())
            expected.append(("malformed", None))
            continue
        if defect == "binary":
            lines.append(binary_line(rng))
            expected.append(("malformed", None))
            continue
        if defect == "replayed":
            same = [a for a in accepted if a[1] == provider]
            token, _, first_at, nonce = same[rng.randrange(len(same))]
            at = first_at + rng.randint(1, 1200)
            form = rng.choice(["json", "access"])
            lines.append(render(form, token, at, rng, index, nonce).encode())
            expected.append((None, provider))
            continue
        form = rng.choice(["json", "json", "access", "clf", "bare"])
        if form == "bare":
            at = SAMPLE_AT
        if defect == "nonce_mismatch":
            form = "json"
        token, nonce = make_token(ks, provider, defect, rng, at)
        lines.append(render(form, token, at, rng, index, nonce if form == "json" else None).encode())
        expected.append((EXPECTED[defect], provider))
        if defect == "valid":
            accepted.append((token, provider, at, nonce if form == "json" else None))
        if index % 17 == 0:
            lines.append(b"")          # blank lines are skipped
            expected.append(("blank", None))
    with open(os.path.join(SAMPLES, "sample.log"), "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    with open(os.path.join(SAMPLES, "sample.log"), "rb") as f, gzip.GzipFile(os.path.join(SAMPLES, "sample.log.gz"), "wb", mtime=0) as g:
        g.write(f.read())
    counts = {}
    for code, _ in expected:
        if code not in ("blank", None):
            counts[code] = counts.get(code, 0) + 1
    records = sum(1 for code, _ in expected if code != "blank")
    valid = sum(1 for code, _ in expected if code is None)
    summary = {"lines": len(lines), "records": records, "blankLines": len(lines) - records, "valid": valid,
               "invalid": records - valid, "byError": dict(sorted(counts.items())), "at": iso(SAMPLE_AT),
               "replaysWithReplayOption": sum(1 for p in plan if p[1] == "replayed")}
    with open(os.path.join(SAMPLES, "expected-summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print(f"wrote {len(lines)} lines to {SAMPLES}/sample.log (+ .gz), keys and audit-config.json", file=sys.stderr)


# ---------------------------------------------------------------- benchmark logs

def parse_mix(text, allowed):
    mix = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name not in allowed:
            sys.exit(f"unknown kind {name!r}; choose from {', '.join(allowed)}")
        mix[name] = float(weight or 1)
    return mix


def log_chunk(args):
    """Lines [start, end) of a benchmark log (run in a worker process)."""
    start, end, seed, mix, forms, distinct, at = args
    ks = keys()
    rng = random.Random(seed * 1_000_003 + start)
    kinds, weights = zip(*mix.items())
    form_names, form_weights = zip(*forms.items())
    out = []
    pool = []   # (token, at, nonce) of valid tokens in this chunk, for replays
    for index in range(start, end):
        kind = rng.choices(kinds, weights)[0]
        provider = rng.choice(["firebase", "apple", "facebook"])
        form = rng.choices(form_names, form_weights)[0]
        t = at if form == "bare" else DAY0 + rng.randint(0, 86400 - 1)
        if kind == "malformed":
            out.append(malformed_line(rng, index).encode())
            continue
        if kind == "replayed" and pool:
            token, first_at, nonce = pool[rng.randrange(len(pool))]
            out.append(render("json", token, first_at + rng.randint(1, 600), rng, index, nonce).encode())
            continue
        if kind == "replayed":
            kind = "valid"
        if distinct and kind == "valid" and len(pool) >= distinct:
            token, first_at, nonce = pool[rng.randrange(len(pool))]
            out.append(render("json", token, first_at + rng.randint(0, 600), rng, index, nonce).encode())
            continue
        token, nonce = make_token(ks, provider, kind, rng, t)
        out.append(render(form, token, t, rng, index, nonce if form == "json" else None).encode())
        if kind == "valid" and form == "json":
            pool.append((token, t, nonce))
    return b"\n".join(out) + b"\n"


def log(options):
    keys()
    mix = parse_mix(options.mix, ["valid", "expired", "not_yet_valid", "forged", "tampered", "wrong_audience",
                                  "unknown_key", "alg_none", "nonce_mismatch", "replayed", "malformed"])
    forms = parse_mix(options.forms, ["json", "access", "clf", "bare"])
    chunk = 5000
    distinct = max(0, options.distinct // max(1, (options.lines + chunk - 1) // chunk)) if options.distinct else 0
    tasks = [(s, min(options.lines, s + chunk), options.seed, mix, forms, distinct, SAMPLE_AT)
             for s in range(0, options.lines, chunk)]
    opener = (lambda p: gzip.open(p, "wb", compresslevel=6)) if options.gzip else (lambda p: open(p, "wb"))
    with opener(options.out) as f, multiprocessing.Pool(options.jobs) as pool:
        for done, block in enumerate(pool.imap(log_chunk, tasks), start=1):
            f.write(block)
            if done % 20 == 0 or done == len(tasks):
                print(f"\r{min(options.lines, done * chunk)} / {options.lines} lines", end="", file=sys.stderr)
    print(file=sys.stderr)
    print(f"idtoken audit {options.out} --config {os.path.join(SAMPLES, 'audit-config.json')} --at {iso(SAMPLE_AT)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("sample", help="rewrite the bundled sample in Vectors/samples/")
    p = sub.add_parser("log", help="write a benchmark log")
    p.add_argument("--lines", type=int, default=1_000_000)
    p.add_argument("--out", required=True)
    p.add_argument("--gzip", action="store_true")
    p.add_argument("--mix", default="valid=90,expired=3,forged=2,wrong_audience=1,unknown_key=1,replayed=1,malformed=2")
    p.add_argument("--forms", default="json=60,access=30,bare=10")
    p.add_argument("--distinct", type=int, default=0,
                   help="at most this many distinct valid tokens (repeats exercise the verdict cache); 0: all distinct")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    options = parser.parse_args()
    if options.command == "sample":
        sample()
    else:
        log(options)


if __name__ == "__main__":
    main()
