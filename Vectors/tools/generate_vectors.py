#!/usr/bin/env python3
"""Generates IDTokenKit's provider test vectors (DESIGN §8) into Vectors/generated/.

Run from anywhere:  python3 Vectors/tools/generate_vectors.py

Deterministic: the signing keys are the TEST ONLY keys committed under Vectors/keys/ (created on the first run
if missing), every random choice comes from random.Random(SEED), RSA PKCS#1 v1.5 signatures are deterministic
and ECDSA uses RFC 6979 deterministic nonces, so a rerun writes byte-identical files.

Each case holds one defect (or none), so that its expected verdict does not depend on the order of checks
beyond the documented pipeline. Vectors/tools/check_vectors.py re-checks every case independently.
"""
import base64
import datetime
import hashlib
import json
import os
import random
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, hmac, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from cryptography.x509.oid import NameOID

SEED = 20251122
GENERATOR = "Vectors/tools/generate_vectors.py"
VECTORS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
KEYS_DIR = os.path.join(VECTORS, "keys")
OUT_DIR = os.path.join(VECTORS, "generated")
KEYSETS_DIR = os.path.join(OUT_DIR, "keysets")

LEEWAY = 60
rng = random.Random(SEED)


# ---------------------------------------------------------------- keys (TEST ONLY)

def load_or_create(name, make):
    path = os.path.join(KEYS_DIR, name)
    if os.path.exists(path):
        with open(path, "rb") as f:
            return serialization.load_pem_private_key(f.read(), password=None)
    key = make()
    os.makedirs(KEYS_DIR, exist_ok=True)
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return key


KEYS = {
    "rsa_a": load_or_create("test_rsa_2048_a.pem", lambda: rsa.generate_private_key(65537, 2048)),
    "rsa_b": load_or_create("test_rsa_2048_b.pem", lambda: rsa.generate_private_key(65537, 2048)),
    "rsa_attacker": load_or_create("test_rsa_2048_attacker.pem", lambda: rsa.generate_private_key(65537, 2048)),
    "rsa_weak": load_or_create("test_rsa_1024_weak.pem", lambda: rsa.generate_private_key(65537, 1024)),
    "ec_a": load_or_create("test_ec_p256_a.pem", lambda: ec.generate_private_key(ec.SECP256R1())),
    "ec_attacker": load_or_create("test_ec_p256_attacker.pem", lambda: ec.generate_private_key(ec.SECP256R1())),
}


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def int_b64u(value, length=None):
    length = length or (value.bit_length() + 7) // 8
    return b64u(value.to_bytes(length, "big"))


def jwk(name, kid, alg=None):
    public = KEYS[name].public_key()
    if isinstance(public, rsa.RSAPublicKey):
        numbers = public.public_numbers()
        out = {"kty": "RSA", "kid": kid, "use": "sig", "alg": alg or "RS256", "n": int_b64u(numbers.n), "e": int_b64u(numbers.e)}
    else:
        numbers = public.public_numbers()
        out = {"kty": "EC", "kid": kid, "use": "sig", "alg": alg or "ES256", "crv": "P-256",
               "x": int_b64u(numbers.x, 32), "y": int_b64u(numbers.y, 32)}
    return out


def certificate_pem(name, common_name):
    """A self-signed certificate around the key, like Google's securetoken x509 map (fixed dates and serial)."""
    key = KEYS[name]
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    start = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(int(hashlib.sha256(common_name.encode()).hexdigest()[:16], 16))
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=3650))
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode("ascii")


# ---------------------------------------------------------------- signing

def sign(alg, key_name, signing_input):
    key = KEYS[key_name]
    if alg == "RS256":
        return key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    if alg == "RS512":
        return key.sign(signing_input, padding.PKCS1v15(), hashes.SHA512())
    if alg == "PS256":
        # A zero-length salt keeps the output byte-identical between runs; the case is refused before its
        # signature is read anyway (PS256 is not in the profile's list).
        return key.sign(signing_input, padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=0), hashes.SHA256())
    if alg == "ES256":
        der = key.sign(signing_input, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
        r, s = decode_dss_signature(der)
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
    raise ValueError(alg)


def compact(header, payload, key_name="rsa_a", alg=None, raw_header=None, raw_payload=None):
    """Signs a token. header/payload are dicts (serialised compactly, UTF-8) unless raw text/bytes is given."""
    h = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":"), ensure_ascii=False)
    p = raw_payload if raw_payload is not None else json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    h = h.encode("utf-8") if isinstance(h, str) else h
    p = p.encode("utf-8") if isinstance(p, str) else p
    signing_input = (b64u(h) + "." + b64u(p)).encode("ascii")
    alg = alg or (header or {}).get("alg", "RS256")
    return signing_input.decode("ascii") + "." + b64u(sign(alg, key_name, signing_input))


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def replace_signature(token, signature_bytes):
    head, payload, _ = token.split(".")
    return head + "." + payload + "." + b64u(signature_bytes)


def flip_signature_byte(token, index=17):
    head, payload, sig = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4)))
    raw[index] ^= 0x01
    return head + "." + payload + "." + b64u(bytes(raw))


def rand_alnum(n):
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(n))


def rand_digits(n):
    return "".join(rng.choice("0123456789") for _ in range(n))


def rand_hex(n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def uuid():
    return rand_hex(8) + "-" + rand_hex(4) + "-" + rand_hex(4) + "-" + rand_hex(4) + "-" + rand_hex(12)


def cognito_pool(region):
    """A user pool of `region`: its ID, its issuer, an app client ID and a key ID."""
    pool = region + "_" + rand_alnum(9)
    return pool, "https://cognito-idp." + region + ".amazonaws.com/" + pool, rand_alnum(26).lower(), rand_alnum(43) + "="


# ---------------------------------------------------------------- case collection

DEFAULT_KEYS = object()  # the suite's key set; None means a key source that has no keys and cannot get any


class Suite:
    def __init__(self, name, provider, profile, keys_ref, header, key_name, base_time):
        self.name = name
        self.provider = provider
        self.profile = profile
        self.keys_ref = keys_ref
        self.header = header
        self.key_name = key_name
        self.base_time = base_time
        self.cases = []
        self.ids = set()

    def add(self, case_id, description, token, expect_error=None, at=None, profile=None, keys=DEFAULT_KEYS, nonce=None,
            replay=None, claim=None):
        assert case_id not in self.ids, case_id
        self.ids.add(case_id)
        case = {
            "id": f"{self.name}/{case_id}",
            "description": description,
            "token": token,
            "keys": self.keys_ref if keys is DEFAULT_KEYS else keys,
            "profile": profile or self.profile,
            "at": at if at is not None else self.base_time + 120,
            "nonce": nonce,
        }
        if replay:
            case["replay"] = replay
        expect = {"valid": expect_error is None, "error": expect_error}
        if claim is not None:
            expect["claim"] = claim
        case["expect"] = expect
        self.cases.append(case)

    def token(self, claims, header=None, key_name=None, **kwargs):
        return compact(header or self.header, claims, key_name or self.key_name, **kwargs)


def keys_unavailable_marker():
    return None  # serialised as "keys": null


def add_common_cases(suite, claims, time_claims=("exp", "nbf", "iat"), nonce_claim_ok=True, subject=True, exp_required=True,
                     aud="aud"):
    """Cases every provider shares: shape, header, key, signature, time boundaries, iss/aud, NumericDate types,
    nonce, replay and keys. `claims` is a valid claim set (a dict) for suite.base_time. `subject`: the profile
    requires `sub` (Apple's notifications carry theirs inside `events`); `exp_required`: a token without `exp` is
    refused (a notification without one is not); `aud`: the claim that names the audience (a Cognito access token's
    is `client_id`)."""
    T = suite.base_time
    good = suite.token(claims)
    h64, p64, s64 = good.split(".")

    # --- valid baseline and time boundaries
    suite.add("valid", "a valid token with a realistic claim set", good)
    exp = claims["exp"]
    suite.add("exp-boundary-minus-1", "one second before exp + leeway: still valid", good, at=exp + LEEWAY - 1)
    suite.add("exp-boundary-at", "exactly exp + leeway: expired", good, "expired", at=exp + LEEWAY, claim="exp")
    suite.add("exp-boundary-plus-1", "one second after exp + leeway: expired", good, "expired", at=exp + LEEWAY + 1, claim="exp")

    nbf_claims = dict(claims, nbf=T + 600, iat=T + 600 - 3600, exp=T + 600 + 3600)
    if "auth_time" in nbf_claims:
        nbf_claims["auth_time"] = nbf_claims["iat"] - 60
    nbf_token = suite.token(nbf_claims)
    nbf = nbf_claims["nbf"]
    suite.add("nbf-boundary-minus-1", "one second before nbf - leeway: not yet valid", nbf_token, "not_yet_valid",
              at=nbf - LEEWAY - 1, claim="nbf")
    suite.add("nbf-boundary-at", "exactly nbf - leeway: valid", nbf_token, at=nbf - LEEWAY)
    suite.add("nbf-boundary-plus-1", "one second after nbf - leeway: valid", nbf_token, at=nbf - LEEWAY + 1)

    iat = claims["iat"]
    iat_claims = dict(claims)
    if "auth_time" in iat_claims:
        iat_claims["auth_time"] = iat - 3600
    iat_token = suite.token(iat_claims)
    suite.add("iat-boundary-minus-1", "one second before iat - leeway: issued in the future", iat_token,
              "issued_in_future", at=iat - LEEWAY - 1, claim="iat")
    suite.add("iat-boundary-at", "exactly iat - leeway: valid", iat_token, at=iat - LEEWAY)
    suite.add("iat-boundary-plus-1", "one second after iat - leeway: valid", iat_token, at=iat - LEEWAY + 1)

    zero = dict(suite.profile, leeway=0)
    suite.add("leeway-0-at-exp", "leeway 0: expired exactly at exp", good, "expired", at=exp, profile=zero, claim="exp")
    suite.add("leeway-0-before-exp", "leeway 0: valid one second before exp", good, at=exp - 1, profile=zero)
    wide = dict(suite.profile, leeway=300)
    suite.add("leeway-300-after-exp", "leeway 300: valid 299 s after exp", good, at=exp + 299, profile=wide)
    suite.add("leeway-300-expired", "leeway 300: expired 300 s after exp", good, "expired", at=exp + 300, profile=wide, claim="exp")

    frac = dict(claims, exp=claims["exp"] + 0.5)
    frac_token = suite.token(frac)
    suite.add("exp-fraction-valid", "a fractional exp is a valid NumericDate", frac_token, at=claims["exp"] + LEEWAY)
    suite.add("exp-fraction-expired", "a fractional exp is compared exactly", frac_token, "expired",
              at=claims["exp"] + LEEWAY + 1, claim="exp")

    # --- shape and encoding (malformed)
    suite.add("malformed-two-segments", "only one dot", h64 + "." + p64, "malformed")
    suite.add("malformed-four-segments", "three dots", good + ".e30", "malformed")
    suite.add("malformed-padding", "base64 padding in the payload segment", h64 + "." + p64 + "=" * (-len(p64) % 4 or 4) + "." + s64, "malformed")
    suite.add("malformed-std-alphabet", "standard base64 '+' in the signature", h64 + "." + p64 + "." + s64[:10] + "+" + s64[11:], "malformed")
    suite.add("malformed-whitespace", "a space inside the token", h64 + "." + p64[:8] + " " + p64[8:] + "." + s64, "malformed")
    noncanon = h64[:-1] + chr(ord(h64[-1]) + 1) if len(h64) % 4 in (2, 3) and h64[-1] in "AEIMQUYcgkosw048" else None
    if noncanon:
        suite.add("malformed-noncanonical-bits", "non-zero unused bits in the last header character",
                  noncanon + "." + p64 + "." + s64, "malformed")
    suite.add("malformed-header-not-object", "the header is a JSON array",
              b64u(b'["RS256"]') + "." + p64 + "." + s64, "malformed")
    alg = suite.header["alg"]
    dup_header = '{"alg":"%s","kid":"%s","alg":"%s"}' % (alg, suite.header.get("kid", ""), alg)
    suite.add("malformed-header-duplicate", "a duplicate member in the header",
              suite.token(None, raw_header=dup_header, raw_payload=dumps(claims), alg=alg), "malformed")
    duplicated = "sub" if "sub" in claims else "jti"
    dup_payload = dumps(claims)[:-1] + ',"%s":"someone-else"}' % duplicated
    suite.add("malformed-payload-duplicate", "a duplicate \"%s\" in a correctly signed payload" % duplicated,
              suite.token(None, raw_header=dumps(suite.header), raw_payload=dup_payload, alg=suite.header["alg"]), "malformed")
    bad_utf8 = dumps(dict(claims, name="X")).encode("utf-8").replace(b'"name":"X"', b'"name":"\xc3\x28"')
    suite.add("malformed-payload-utf8", "invalid UTF-8 in a correctly signed payload",
              suite.token(None, raw_header=dumps(suite.header), raw_payload=bad_utf8, alg=suite.header["alg"]), "malformed")
    deep = dumps(claims)[:-1] + ',"deep":' + "[" * 40 + "]" * 40 + "}"
    suite.add("malformed-payload-too-deep", "nesting 40 levels deep in a correctly signed payload",
              suite.token(None, raw_header=dumps(suite.header), raw_payload=deep, alg=suite.header["alg"]), "malformed")
    suite.add("malformed-payload-array", "a correctly signed payload that is an array",
              suite.token(None, raw_header=dumps(suite.header), raw_payload="[1,2,3]", alg=suite.header["alg"]), "malformed")
    suite.add("token-too-large", "a 17 KiB claim pushes the token over the 16 KiB cap",
              suite.token(dict(claims, padding="x" * 17000)), "token_too_large")

    # --- header and algorithm
    alg = suite.header["alg"]
    none_header = dict(suite.header, alg="none")
    suite.add("alg-none-empty-signature", "\"alg\":\"none\" with an empty signature",
              b64u(dumps(none_header).encode()) + "." + p64 + ".", "algorithm_not_allowed", claim="alg")
    suite.add("alg-none-with-signature", "\"alg\":\"none\" carrying the real signature",
              b64u(dumps(none_header).encode()) + "." + p64 + "." + s64, "algorithm_not_allowed", claim="alg")
    hs_header = dict(suite.header, alg="HS256")
    hs_input = (b64u(dumps(hs_header).encode()) + "." + p64).encode()
    public_pem = KEYS[suite.key_name].public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    mac = hmac.HMAC(public_pem, hashes.SHA256())
    mac.update(hs_input)
    suite.add("alg-hs256-key-confusion", "HS256 keyed with the public key's PEM (algorithm confusion)",
              hs_input.decode() + "." + b64u(mac.finalize()), "algorithm_not_allowed", claim="alg")
    suite.add("alg-missing", "no \"alg\" in the header",
              suite.token(None, raw_header=dumps({k: v for k, v in suite.header.items() if k != "alg"}), raw_payload=dumps(claims), alg=alg),
              "algorithm_not_allowed", claim="alg")
    suite.add("alg-not-string", "\"alg\" is a number",
              suite.token(None, raw_header=dumps(dict(suite.header, alg=256)), raw_payload=dumps(claims), alg=alg),
              "algorithm_not_allowed", claim="alg")
    if suite.provider != "oidc":
        suite.add("alg-rs512-not-pinned", "RS512 with the provider's key: the profile pins RS256",
                  suite.token(claims, header=dict(suite.header, alg="RS512")), "algorithm_not_allowed", claim="alg")
    suite.add("alg-ps256-not-pinned", "PS256 with the provider's RSA key: not in the profile's list",
              compact(dict(suite.header, alg="PS256"), claims, "rsa_a"), "algorithm_not_allowed", claim="alg")
    suite.add("crit-header", "a \"crit\" header",
              suite.token(claims, header=dict(suite.header, crit=["exp"], exp=1)), "unsupported_header", claim="crit")

    # --- keys
    if suite.profile.get("require_kid", suite.provider != "oidc"):
        suite.add("kid-missing", "no \"kid\": the provider always names its key",
                  suite.token(claims, header={k: v for k, v in suite.header.items() if k != "kid"}), "unknown_key", claim="kid")
    suite.add("kid-unknown", "a kid the key set does not have",
              suite.token(claims, header=dict(suite.header, kid="rotated-away-0001")), "unknown_key", claim="kid")
    suite.add("kid-not-string", "\"kid\" is a number",
              suite.token(claims, header=dict(suite.header, kid=7)), "unknown_key", claim="kid")
    attacker = "ec_attacker" if alg == "ES256" else "rsa_attacker"
    suite.add("jwk-header-ignored", "the header embeds the attacker's key (\"jwk\") under the attacker's kid",
              compact(dict(suite.header, kid="attacker-key", jwk=jwk(attacker, "attacker-key")), claims, attacker),
              "unknown_key", claim="kid")
    suite.add("jku-header-ignored", "the header points at the attacker's key set (\"jku\", \"x5u\") under the real kid",
              compact(dict(suite.header, jku="https://attacker.example/jwks.json", x5u="https://attacker.example/cert.pem"),
                      claims, attacker), "bad_signature")
    suite.add("keys-unavailable", "the key source has no keys and cannot fetch any", good, "keys_unavailable",
              keys=keys_unavailable_marker())

    # --- signature
    suite.add("signature-flipped-bit", "one bit of the signature changed", flip_signature_byte(good), "bad_signature")
    suite.add("signature-other-key", "signed by another key under the provider's kid",
              compact(suite.header, claims, attacker), "bad_signature")
    suite.add("signature-empty", "an empty signature segment", h64 + "." + p64 + ".", "bad_signature")
    suite.add("signature-wrong-length", "a signature one byte short",
              replace_signature(good, base64.urlsafe_b64decode(s64 + "=" * (-len(s64) % 4))[:-1]), "bad_signature")
    tampered_claims = dict(claims, sub="another-user-" + rand_alnum(6))
    suite.add("payload-swapped", "the payload of another token under this signature",
              h64 + "." + b64u(dumps(tampered_claims).encode()) + "." + s64, "bad_signature")

    # --- issuer and audience
    suite.add("iss-wrong", "another issuer", suite.token(dict(claims, iss="https://issuer.example.org")), "wrong_issuer", claim="iss")
    suite.add("iss-trailing-slash", "the issuer with a trailing slash", suite.token(dict(claims, iss=claims["iss"] + "/")), "wrong_issuer", claim="iss")
    suite.add("iss-missing", "no \"iss\"", suite.token({k: v for k, v in claims.items() if k != "iss"}), "invalid_claim", claim="iss")
    suite.add("iss-number", "\"iss\" is a number", suite.token(dict(claims, iss=42)), "invalid_claim", claim="iss")
    suite.add("aud-wrong", "another audience", suite.token(dict(claims, **{aud: "someone-elses-app"})), "wrong_audience", claim=aud)
    suite.add("aud-missing", "no \"%s\"" % aud, suite.token({k: v for k, v in claims.items() if k != aud}), "invalid_claim", claim=aud)
    suite.add("aud-number", "\"%s\" is a number" % aud, suite.token(dict(claims, **{aud: 1234})), "invalid_claim", claim=aud)

    # --- NumericDate types and presence
    suite.add("exp-string", "\"exp\" as a string of digits", suite.token(dict(claims, exp=str(claims["exp"]))), "invalid_claim", claim="exp")
    suite.add("exp-bool", "\"exp\" as a boolean", suite.token(dict(claims, exp=True)), "invalid_claim", claim="exp")
    suite.add("exp-null", "\"exp\" is null", suite.token(dict(claims, exp=None)), "invalid_claim", claim="exp")
    if exp_required:
        suite.add("exp-missing", "no \"exp\"", suite.token({k: v for k, v in claims.items() if k != "exp"}), "invalid_claim", claim="exp")
    suite.add("exp-negative", "a negative \"exp\"", suite.token(dict(claims, exp=-1)), "invalid_claim", claim="exp")
    suite.add("exp-year-10000", "\"exp\" after the year 9999", suite.token(dict(claims, exp=253402300800)), "invalid_claim", claim="exp")
    suite.add("nbf-string", "\"nbf\" as a string", suite.token(dict(claims, nbf=str(T))), "invalid_claim", claim="nbf")
    suite.add("iat-string", "\"iat\" as a string", suite.token(dict(claims, iat=str(claims["iat"]))), "invalid_claim", claim="iat")
    suite.add("iat-future", "issued an hour in the future", suite.token(dict(claims, iat=T + 3600, exp=T + 7200)),
              "issued_in_future", claim="iat")

    # --- subject
    if subject:
        suite.add("sub-missing", "no \"sub\"", suite.token({k: v for k, v in claims.items() if k != "sub"}), "invalid_claim", claim="sub")
        suite.add("sub-empty", "an empty \"sub\"", suite.token(dict(claims, sub="")), "invalid_claim", claim="sub")
        suite.add("sub-number", "\"sub\" is a number", suite.token(dict(claims, sub=1234)), "invalid_claim", claim="sub")

    # --- unknown claims never fail a token
    extra = dict(claims, x_unknown_object={"a": [1, 2.5, None, True]}, x_unknown_null=None, x_unknown_string="\u00e9\u00e8",
                 amr=["pwd", "mfa"], x_big=9007199254740993)
    suite.add("unknown-claims-accepted", "claims the profile does not know, of every JSON type", suite.token(extra))

    # --- nonce
    raw_nonce = rand_alnum(32)
    hashed = hashlib.sha256(raw_nonce.encode()).hexdigest()
    with_hash = suite.token(dict(claims, nonce=hashed))
    suite.add("nonce-sha256-valid", "the token carries the SHA-256 hex of the raw nonce", with_hash,
              nonce={"mode": "sha256hex", "value": raw_nonce})
    suite.add("nonce-sha256-wrong-raw", "another raw nonce", with_hash, "nonce_mismatch",
              nonce={"mode": "sha256hex", "value": raw_nonce + "x"}, claim="nonce")
    suite.add("nonce-sha256-got-raw", "the token carries the raw nonce where its hash was expected",
              suite.token(dict(claims, nonce=raw_nonce)), "nonce_mismatch", nonce={"mode": "sha256hex", "value": raw_nonce}, claim="nonce")
    suite.add("nonce-sha256-uppercase", "the hash in uppercase hex",
              suite.token(dict(claims, nonce=hashed.upper())), "nonce_mismatch", nonce={"mode": "sha256hex", "value": raw_nonce}, claim="nonce")
    suite.add("nonce-exact-valid", "exact mode: the token carries the value as sent",
              suite.token(dict(claims, nonce=raw_nonce)), nonce={"mode": "exact", "value": raw_nonce})
    suite.add("nonce-exact-mismatch", "exact mode: one character differs",
              suite.token(dict(claims, nonce=raw_nonce[:-1] + ("A" if raw_nonce[-1] != "A" else "B"))), "nonce_mismatch",
              nonce={"mode": "exact", "value": raw_nonce}, claim="nonce")
    suite.add("nonce-missing", "a nonce was expected but the token has none", good, "nonce_mismatch",
              nonce={"mode": "sha256hex", "value": raw_nonce}, claim="nonce")
    suite.add("nonce-not-string", "\"nonce\" is a number", suite.token(dict(claims, nonce=12345)), "nonce_mismatch",
              nonce={"mode": "exact", "value": "12345"}, claim="nonce")
    suite.add("nonce-ignored-when-not-expected", "a token with a nonce, none expected", with_hash)

    # --- replay
    suite.add("replay-first", "first presentation with a replay cache", good, replay={"seen_before": False})
    suite.add("replay-second", "the same token presented again", good, "replayed", replay={"seen_before": True})
    bad_twice = suite.token(dict(claims, **{aud: "someone-elses-app"}))
    suite.add("replay-failed-token-not-recorded", "a token that fails another check is judged on that check, not as a replay",
              bad_twice, "wrong_audience", replay={"seen_before": True}, claim=aud)


def escaped_variant(claims, extra):
    """The claim set with escaped slashes (\\/), \\u escapes for non-ASCII, and extra nested claims."""
    text = json.dumps(dict(claims, **extra), separators=(",", ":"), ensure_ascii=True).replace("/", "\\/")
    return text


# ---------------------------------------------------------------- providers

def firebase_suite(session=False):
    project = "idtk-demo-7f3a2"
    T = 1767225600 if not session else 1767312000  # 2026-01-01 / 2026-01-02
    kid = hashlib.sha1(b"idtk firebase key a").hexdigest()
    kid_b = hashlib.sha1(b"idtk firebase key b").hexdigest()
    if session:
        iss = "https://session.firebase.google.com/" + project
        provider = "firebase-session"
        keys_ref = "generated/keysets/firebase_session_certificates.json"
        key_name = "rsa_b"
        kid, kid_b = kid_b, kid
    else:
        iss = "https://securetoken.google.com/" + project
        provider = "firebase"
        keys_ref = "generated/keysets/firebase_jwks.json"
        key_name = "rsa_a"
    uid = rand_alnum(28)
    google_id = rand_digits(21)
    claims = {
        "name": "Ana Lu\u00edsa Garc\u00eda",
        "picture": "https://lh3.googleusercontent.com/a/ACg8ocK" + rand_alnum(20) + "=s96-c",
        "iss": iss, "aud": project, "auth_time": T - 300, "user_id": uid, "sub": uid,
        "iat": T, "exp": T + 3600, "email": "ana.garcia@example.com", "email_verified": True,
        "firebase": {"identities": {"google.com": [google_id], "email": ["ana.garcia@example.com"]},
                     "sign_in_provider": "google.com"},
    }
    profile = {"provider": provider, "project_id": project}
    suite = Suite(provider, provider, profile, keys_ref, {"alg": "RS256", "kid": kid, "typ": "JWT"}, key_name, T)
    add_common_cases(suite, claims)
    good = suite.token(claims)

    # realistic variants
    esc = escaped_variant(claims, {"role": "editor", "org": {"id": "org_42", "teams": ["blue", "\u00e9quipe"],
                                                            "limits": {"projects": 12, "nested": {"deep": [1, {"x": None}]}}}})
    suite.add("valid-escaped-slashes-unicode", "escaped slashes, \\u escapes, non-ASCII name and nested custom claims",
              suite.token(None, raw_header=dumps(suite.header), raw_payload=esc, alg="RS256"))
    raw_utf8 = dict(claims, name="\u5c71\u7530 \u592a\u90ce \U0001F600", admin=True, tier={"level": 3, "tags": ["\u00fc", "\u00df"]})
    suite.add("valid-raw-utf8-custom-claims", "raw UTF-8 (CJK, emoji) and custom claims", suite.token(raw_utf8))
    suite.add("valid-second-key", "signed with the second key of the set",
              compact(dict(suite.header, kid=kid_b), claims, "rsa_a" if session else "rsa_b"))
    suite.add("sub-128-characters", "a 128-character uid (the maximum)",
              suite.token(dict(claims, sub="u" * 127 + "\u00e9", user_id="u" * 127 + "\u00e9")))
    suite.add("sub-129-characters", "a 129-character uid", suite.token(dict(claims, sub="u" * 129)), "invalid_claim", claim="sub")
    suite.add("auth-time-missing", "no \"auth_time\"", suite.token({k: v for k, v in claims.items() if k != "auth_time"}),
              "invalid_claim", claim="auth_time")
    suite.add("auth-time-string", "\"auth_time\" as a string", suite.token(dict(claims, auth_time=str(T))), "invalid_claim", claim="auth_time")
    suite.add("auth-time-future", "signed in two minutes in the future", suite.token(dict(claims, auth_time=T + 240)),
              "issued_in_future", at=T + 120, claim="auth_time")
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    suite.add("aud-array", "\"aud\" as an array holding the project ID", suite.token(dict(claims, aud=[project])),
              "wrong_audience", claim="aud")
    other_iss = ("https://securetoken.google.com/" if session else "https://session.firebase.google.com/") + project
    suite.add("iss-other-firebase-kind", "an ID token given as a session cookie or the reverse",
              suite.token(dict(claims, iss=other_iss)), "wrong_issuer", claim="iss")
    suite.add("iss-other-project", "a token of another Firebase project (issuer and audience)",
              suite.token(dict(claims, iss=iss.replace(project, "other-project"), aud="other-project")), "wrong_audience", claim="aud")
    suite.add("firebase-not-object", "\"firebase\" is a string", suite.token(dict(claims, firebase="google.com")),
              "invalid_claim", claim="firebase")
    suite.add("firebase-provider-number", "\"firebase.sign_in_provider\" is a number",
              suite.token(dict(claims, firebase={"identities": {}, "sign_in_provider": 3})), "invalid_claim", claim="firebase.sign_in_provider")
    suite.add("firebase-identities-array", "\"firebase.identities\" is an array",
              suite.token(dict(claims, firebase={"identities": [], "sign_in_provider": "password"})), "invalid_claim", claim="firebase.identities")
    suite.add("firebase-missing-ok", "no \"firebase\" claim at all (custom tokens without it)",
              suite.token({k: v for k, v in claims.items() if k != "firebase"}))

    # options: tenant
    tenant = "tenant-b7" + rand_alnum(4)
    tenant_claims = dict(claims, firebase=dict(claims["firebase"], tenant=tenant))
    tenant_profile = dict(profile, tenant=tenant)
    suite.add("tenant-match", "the token's tenant is the configured one", suite.token(tenant_claims), profile=tenant_profile)
    suite.add("tenant-other", "another tenant", suite.token(dict(claims, firebase=dict(claims["firebase"], tenant="tenant-other"))),
              "tenant_mismatch", profile=tenant_profile, claim="firebase.tenant")
    suite.add("tenant-missing", "no tenant while one is required", good, "tenant_mismatch", profile=tenant_profile, claim="firebase.tenant")
    suite.add("tenant-not-required", "a tenant token accepted when no tenant is configured", suite.token(tenant_claims))

    # options: sign-in providers
    allowed = dict(profile, allowed_sign_in_providers=["apple.com", "facebook.com", "github.com"])
    for provider_name in ["apple.com", "facebook.com", "github.com"]:
        suite.add("provider-allowed-" + provider_name.split(".")[0], "signed in with " + provider_name,
                  suite.token(dict(claims, firebase={"identities": {provider_name: [rand_digits(12)]}, "sign_in_provider": provider_name})),
                  profile=allowed)
    suite.add("provider-password-refused", "signed in with a password where only Apple, Facebook and GitHub are allowed",
              suite.token(dict(claims, firebase={"identities": {"email": ["a@example.com"]}, "sign_in_provider": "password"})),
              "provider_not_allowed", profile=allowed, claim="firebase.sign_in_provider")
    suite.add("provider-google-refused", "google.com not in the allowed list", good, "provider_not_allowed", profile=allowed,
              claim="firebase.sign_in_provider")
    suite.add("provider-missing-refused", "no \"firebase\" claim while providers are restricted",
              suite.token({k: v for k, v in claims.items() if k != "firebase"}), "provider_not_allowed", profile=allowed,
              claim="firebase.sign_in_provider")

    # options: revocation (auth_time = T - 300)
    revoked_at = dict(profile, revoked_before={uid: T - 299})
    suite.add("revoked", "auth_time one second before the user's revocation time", good, "revoked", profile=revoked_at, claim="auth_time")
    suite.add("revocation-same-second", "auth_time equal to the revocation time: not revoked", good,
              profile=dict(profile, revoked_before={uid: T - 300}))
    suite.add("revocation-other-user", "another user's revocation does not apply", good,
              profile=dict(profile, revoked_before={"someone-else": T}))
    return suite


def apple_suite():
    T = 1767398400  # 2026-01-03
    client = "com.example.idtk.ios"
    kid = "IDTKa1"
    sub = "001542." + rand_hex(32) + ".1603"
    claims = {"iss": "https://appleid.apple.com", "aud": client, "exp": T + 86400, "iat": T, "sub": sub,
              "c_hash": rand_alnum(22), "email": rand_alnum(10).lower() + "@privaterelay.appleid.com",
              "email_verified": True, "is_private_email": True, "auth_time": T - 5, "nonce_supported": True,
              "real_user_status": 2}
    profile = {"provider": "apple", "client_ids": [client, "com.example.idtk.web"]}
    suite = Suite("apple", "apple", profile, "generated/keysets/apple_jwks.json", {"kid": kid, "alg": "RS256"}, "rsa_a", T)
    add_common_cases(suite, claims)
    suite.add("valid-web-services-id", "the audience is the Services ID of the web sign-in",
              suite.token(dict(claims, aud="com.example.idtk.web")))
    suite.add("valid-string-booleans", "older tokens: \"true\"/\"false\" strings for the booleans",
              suite.token(dict(claims, email_verified="true", is_private_email="false", nonce_supported="true")))
    suite.add("valid-escaped", "escaped slashes and \\u escapes",
              suite.token(None, raw_header=dumps(suite.header), raw_payload=escaped_variant(claims, {"x_note": "Jos\u00e9"}), alg="RS256"))
    for status in (0, 1):
        suite.add(f"real-user-status-{status}", f"real_user_status {status}", suite.token(dict(claims, real_user_status=status)))
    suite.add("real-user-status-3", "real_user_status 3", suite.token(dict(claims, real_user_status=3)), "invalid_claim", claim="real_user_status")
    suite.add("real-user-status-string", "real_user_status \"2\"", suite.token(dict(claims, real_user_status="2")), "invalid_claim", claim="real_user_status")
    suite.add("email-verified-yes", "email_verified \"yes\"", suite.token(dict(claims, email_verified="yes")), "invalid_claim", claim="email_verified")
    suite.add("is-private-email-number", "is_private_email 1", suite.token(dict(claims, is_private_email=1)), "invalid_claim", claim="is_private_email")
    suite.add("nonce-supported-null", "nonce_supported null", suite.token(dict(claims, nonce_supported=None)), "invalid_claim", claim="nonce_supported")
    suite.add("email-number", "email 5", suite.token(dict(claims, email=5)), "invalid_claim", claim="email")
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    suite.add("aud-array", "\"aud\" as an array", suite.token(dict(claims, aud=[client])), "wrong_audience", claim="aud")
    suite.add("aud-case", "the bundle ID in another case", suite.token(dict(claims, aud=client.upper())), "wrong_audience", claim="aud")
    return suite


def facebook_suite():
    T = 1767484800  # 2026-01-04
    app_id = "1234567890123456"
    kid = hashlib.sha1(b"idtk facebook key").hexdigest()
    sub = rand_digits(17)
    claims = {"iss": "https://www.facebook.com", "aud": app_id, "sub": sub, "iat": T, "exp": T + 3600,
              "jti": rand_alnum(8) + "-" + rand_alnum(4) + "-" + rand_alnum(12),
              "name": "Zo\u00eb \u00c5berg", "given_name": "Zo\u00eb", "family_name": "\u00c5berg",
              "email": "zoe.aberg@example.com",
              "picture": "https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=" + sub + "&height=100&width=100&ext=1767571200&hash=Ab" + rand_alnum(20),
              "user_friends": [rand_digits(17), rand_digits(17)], "user_birthday": "01/31/1990",
              "user_age_range": {"min": 21}, "user_hometown": {"id": rand_digits(15), "name": "G\u00f6teborg, Sweden"},
              "user_location": {"id": rand_digits(15), "name": "Stockholm, Sweden"}, "user_gender": "female",
              "user_link": "https://www.facebook.com/app_scoped_user_id/" + rand_alnum(20) + "/"}
    profile = {"provider": "facebook", "app_id": app_id}
    suite = Suite("facebook", "facebook", profile, "generated/keysets/facebook_jwks.json",
                  {"alg": "RS256", "kid": kid, "typ": "JWT"}, "rsa_a", T)
    add_common_cases(suite, claims)
    suite.add("valid-escaped-slashes", "escaped slashes throughout, as Facebook writes them",
              suite.token(None, raw_header=dumps(suite.header), raw_payload=escaped_variant(claims, {}), alg="RS256"))
    suite.add("jti-missing", "no \"jti\"", suite.token({k: v for k, v in claims.items() if k != "jti"}), "invalid_claim", claim="jti")
    suite.add("jti-empty", "an empty \"jti\"", suite.token(dict(claims, jti="")), "invalid_claim", claim="jti")
    suite.add("jti-number", "\"jti\" is a number", suite.token(dict(claims, jti=5)), "invalid_claim", claim="jti")
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    suite.add("iss-facebook-com", "https://facebook.com is not the pinned issuer",
              suite.token(dict(claims, iss="https://facebook.com")), "wrong_issuer", claim="iss")
    suite.add("iss-extra-configured", "an extra issuer accepted when configured",
              suite.token(dict(claims, iss="https://limited.facebook.com")),
              profile=dict(profile, extra_issuers=["https://limited.facebook.com"]))
    suite.add("aud-array", "\"aud\" as an array", suite.token(dict(claims, aud=[app_id])), "wrong_audience", claim="aud")
    return suite


def oidc_suite():
    T = 1767571200  # 2026-01-05
    iss = "https://accounts.idtk.example"
    client = "idtk-client-" + rand_alnum(6).lower()
    claims = {"iss": iss, "azp": client, "aud": client, "sub": rand_digits(21), "email": "kim@example.com",
              "email_verified": True, "at_hash": rand_alnum(22), "name": "\uae40\ubbfc\uc900", "iat": T, "exp": T + 3600}
    profile = {"provider": "oidc", "issuers": [iss], "audiences": [client], "algorithms": ["RS256", "ES256"]}
    suite = Suite("oidc", "oidc", profile, "generated/keysets/oidc_jwks.json", {"alg": "ES256", "kid": "oidc-ec-1", "typ": "JWT"}, "ec_a", T)
    add_common_cases(suite, claims)
    rs_header = {"alg": "RS256", "kid": "oidc-rsa-1", "typ": "JWT"}
    suite.add("valid-rs256", "RS256 with the RSA key of the set", compact(rs_header, claims, "rsa_a"))
    suite.add("aud-array-match", "an array audience that contains the client",
              suite.token(dict(claims, aud=["other-client", client])))
    suite.add("aud-array-no-match", "an array audience without the client",
              suite.token(dict(claims, aud=["other-client", "third-client"])), "wrong_audience", claim="aud")
    suite.add("aud-array-non-string", "an array audience holding a number",
              suite.token(dict(claims, aud=[client, 7])), "invalid_claim", claim="aud")
    suite.add("iat-optional", "no \"iat\": optional for generic OIDC",
              suite.token({k: v for k, v in claims.items() if k != "iat"}))
    suite.add("alg-key-mismatch", "ES256 header naming the RSA key",
              compact(dict(rs_header, alg="ES256"), claims, "ec_a"), "algorithm_not_allowed", claim="alg")
    suite.add("alg-rs256-not-configured", "RS256 when the profile allows only ES256",
              compact(rs_header, claims, "rsa_a"), "algorithm_not_allowed", profile=dict(profile, algorithms=["ES256"]), claim="alg")
    good = suite.token(claims)
    h64, p64, s64 = good.split(".")
    sig = base64.urlsafe_b64decode(s64 + "=" * (-len(s64) % 4))
    r, s = int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big")
    suite.add("es256-der-signature", "an ASN.1 DER signature instead of raw r||s",
              replace_signature(good, encode_dss_signature(r, s)), "bad_signature")
    suite.add("es256-zero-r", "r = 0", replace_signature(good, bytes(32) + sig[32:]), "bad_signature")
    order = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
    suite.add("es256-s-plus-n", "s replaced by s + n (malleability)",
              replace_signature(good, sig[:32] + (s + order).to_bytes(33, "big")), "bad_signature")
    suite.add("es256-high-s", "s replaced by n - s: a valid ECDSA signature (JWS does not forbid high s)",
              replace_signature(good, sig[:32] + (order - s).to_bytes(32, "big")))
    no_kid = {"alg": "ES256", "typ": "JWT"}
    suite.add("kid-missing-many-keys", "no kid while the set holds several keys", compact(no_kid, claims, "ec_a"),
              "unknown_key", claim="kid")
    suite.add("kid-missing-single-key", "no kid, and the set holds one key", compact(no_kid, claims, "ec_a"),
              keys={"keys": [jwk("ec_a", "only-key")]})
    suite.add("weak-key-refused", "the set's RSA key is 1024 bits: refused at load",
              compact({"alg": "RS256", "kid": "weak-1024", "typ": "JWT"}, claims, "rsa_weak"), "unknown_key",
              keys="generated/keysets/oidc_with_weak_key.json", claim="kid")
    suite.add("multiple-issuers", "a second configured issuer", suite.token(dict(claims, iss="https://login.idtk.example")),
              profile=dict(profile, issuers=[iss, "https://login.idtk.example"]))
    add_required_claim_cases(suite, claims, profile)
    return suite


def add_required_claim_cases(suite, claims, profile):
    """Claims a profile requires (--require-claim NAME=VALUE, "claims"), on a token shaped like a GitHub Actions
    one: each listed claim must match one of its values, in which * matches any run of characters."""
    ci = dict(claims, repository="acme/api", repository_owner="acme", ref="refs/heads/main", environment="production",
              job_workflow_ref="acme/ci/.github/workflows/deploy.yml@refs/heads/main", run_attempt=2, groups=["dev", "ops"])

    def rules(**required):
        return dict(profile, required_claims=required)

    suite.add("claims-exact", "required claims equal to their values", suite.token(ci),
              profile=rules(repository=["acme/api"], repository_owner=["acme"]))
    suite.add("claims-pattern", "a required claim matching the second of its patterns", suite.token(ci),
              profile=rules(ref=["refs/tags/v*", "refs/heads/*"]))
    suite.add("claims-pattern-inside", "a * inside the pattern",
              suite.token(ci), profile=rules(job_workflow_ref=["acme/ci/.github/workflows/*.yml@refs/heads/main"]))
    suite.add("claims-any-value", "the pattern * accepts any value of a claim that is present", suite.token(ci),
              profile=rules(environment=["*"]))
    suite.add("claims-other-repository", "a workflow of another repository",
              suite.token(dict(ci, repository="acme/other")), "invalid_claim", profile=rules(repository=["acme/api"]),
              claim="repository")
    suite.add("claims-missing", "a required claim the token does not carry", suite.token(ci), "invalid_claim",
              profile=rules(repository=["acme/api"], deployment=["*"]), claim="deployment")
    suite.add("claims-whole-value", "a pattern matches the whole value, not a prefix of it", suite.token(ci),
              "invalid_claim", profile=rules(ref=["refs/heads/ma"]), claim="ref")
    suite.add("claims-case", "values are compared as written: case counts", suite.token(ci), "invalid_claim",
              profile=rules(repository_owner=["ACME"]), claim="repository_owner")
    suite.add("claims-all-must-match", "one of two required claims off", suite.token(dict(ci, environment="staging")),
              "invalid_claim", profile=rules(repository=["acme/*"], environment=["production"]), claim="environment")
    suite.add("claims-boolean", "a boolean claim required true", suite.token(ci), profile=rules(email_verified=["true"]))
    suite.add("claims-boolean-false", "a boolean claim required true, and false",
              suite.token(dict(ci, email_verified=False)), "invalid_claim", profile=rules(email_verified=["true"]),
              claim="email_verified")
    suite.add("claims-boolean-string", "a boolean claim required true, and the string \"true\"",
              suite.token(dict(ci, email_verified="true")), profile=rules(email_verified=["true"]))
    suite.add("claims-integer", "an integer claim by its digits", suite.token(ci), profile=rules(run_attempt=["2"]))
    suite.add("claims-integer-other", "an integer claim with another value", suite.token(dict(ci, run_attempt=3)),
              "invalid_claim", profile=rules(run_attempt=["2"]), claim="run_attempt")
    suite.add("claims-array-member", "an array claim holding the value", suite.token(ci), profile=rules(groups=["ops"]))
    suite.add("claims-array-without", "an array claim without the value", suite.token(ci), "invalid_claim",
              profile=rules(groups=["admins"]), claim="groups")
    suite.add("claims-array-non-string", "an array claim holding a number", suite.token(dict(ci, groups=["ops", 7])),
              "invalid_claim", profile=rules(groups=["ops"]), claim="groups")
    suite.add("claims-object", "a required claim that is an object", suite.token(dict(ci, repository={"name": "acme/api"})),
              "invalid_claim", profile=rules(repository=["*"]), claim="repository")


def app_check_suite():
    T = 1767657600  # 2026-01-06
    number = "123456789012"
    project = "idtk-demo"
    app_id = "1:" + number + ":ios:" + rand_hex(22)
    kid = "appcheck-" + rand_alnum(6)
    claims = {"sub": app_id, "aud": ["projects/" + number, "projects/" + project], "provider": "device_check",
              "iss": "https://firebaseappcheck.googleapis.com/" + number, "exp": T + 3600, "iat": T,
              "jti": rand_alnum(43)}
    profile = {"provider": "firebase-app-check", "project_number": number}
    suite = Suite("firebase-app-check", "firebase-app-check", profile, "generated/keysets/appcheck_jwks.json",
                  {"kid": kid, "typ": "JWT", "alg": "RS256"}, "rsa_a", T)
    add_common_cases(suite, claims)
    suite.add("aud-number-only", "the audience array names the project number only", suite.token(dict(claims, aud=["projects/" + number])))
    suite.add("aud-project-id-configured", "the audience array names the project ID only, which the profile also knows",
              suite.token(dict(claims, aud=["projects/" + project])), profile=dict(profile, project_id=project))
    suite.add("aud-project-id-unconfigured", "the audience array names the project ID only, which the profile does not know",
              suite.token(dict(claims, aud=["projects/" + project])), "wrong_audience", claim="aud")
    suite.add("aud-string", "\"aud\" as a string: App Check always sends an array",
              suite.token(dict(claims, aud="projects/" + number)), "wrong_audience", claim="aud")
    suite.add("aud-other-project", "the audience array of another project",
              suite.token(dict(claims, aud=["projects/987654321098", "projects/someone-else"])), "wrong_audience", claim="aud")
    suite.add("aud-bare-number", "the project number without \"projects/\"", suite.token(dict(claims, aud=[number])),
              "wrong_audience", claim="aud")
    suite.add("iss-other-project", "the App Check issuer of another project (its audience names ours): accepted by SDKs that check only the issuer's prefix",
              suite.token(dict(claims, iss="https://firebaseappcheck.googleapis.com/987654321098")), "wrong_issuer", claim="iss")
    suite.add("iss-prefix-only", "the App Check service's address without a project number",
              suite.token(dict(claims, iss="https://firebaseappcheck.googleapis.com/")), "wrong_issuer", claim="iss")
    suite.add("typ-missing", "no \"typ\" in the header", suite.token(claims, header={"kid": kid, "alg": "RS256"}),
              "unsupported_header", claim="typ")
    suite.add("typ-other", "\"typ\": \"at+jwt\"", suite.token(claims, header={"kid": kid, "typ": "at+jwt", "alg": "RS256"}),
              "unsupported_header", claim="typ")
    suite.add("typ-lowercase", "\"typ\": \"jwt\" in lower case", suite.token(claims, header={"kid": kid, "typ": "jwt", "alg": "RS256"}),
              "unsupported_header", claim="typ")
    apps = dict(profile, app_ids=[app_id, "1:" + number + ":android:" + rand_hex(22)])
    suite.add("app-id-allowed", "the app is one of the accepted app IDs", suite.token(claims), profile=apps)
    suite.add("app-id-refused", "an app of the project that is not among the accepted app IDs",
              suite.token(dict(claims, sub="1:" + number + ":web:" + rand_hex(22))), "invalid_claim", profile=apps, claim="sub")
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    firebase_id_token = {"iss": "https://securetoken.google.com/" + project, "aud": project, "sub": rand_alnum(28),
                         "iat": T, "exp": T + 3600, "auth_time": T - 60}
    suite.add("firebase-id-token", "a Firebase ID token where the App Check token belongs", suite.token(firebase_id_token),
              "wrong_audience", claim="aud")
    return suite


def apple_notification_suite():
    T = 1767744000  # 2026-01-07
    client = "com.example.idtk.ios"
    sub = "001542." + rand_hex(32) + ".1604"
    email = rand_alnum(10).lower() + "@privaterelay.appleid.com"

    def events(kind, **extra):
        event = {"type": kind, "sub": sub, "event_time": T * 1000 - 1234}
        if kind in ("email-disabled", "email-enabled"):
            event.update(email=email, is_private_email="true")
        event.update(extra)
        return json.dumps(event, separators=(",", ":"))

    claims = {"iss": "https://appleid.apple.com", "aud": client, "iat": T, "exp": T + 3600, "jti": rand_alnum(22),
              "events": events("email-disabled")}
    profile = {"provider": "apple-notification", "client_ids": [client]}
    suite = Suite("apple-notification", "apple-notification", profile, "generated/keysets/apple_jwks.json",
                  {"kid": "IDTKa1", "alg": "RS256"}, "rsa_a", T)
    add_common_cases(suite, claims, subject=False, exp_required=False)
    for kind in ("email-enabled", "consent-revoked", "account-delete"):
        suite.add("event-" + kind, "a " + kind + " notification", suite.token(dict(claims, events=events(kind))))
    no_exp = {k: v for k, v in claims.items() if k != "exp"}
    no_exp_token = suite.token(no_exp)
    suite.add("no-exp", "no \"exp\", as Apple documents the notification", no_exp_token)
    suite.add("no-exp-last-second", "no \"exp\": one second before iat + 24 h + leeway", no_exp_token, at=T + 86400 + LEEWAY - 1)
    suite.add("no-exp-too-old", "no \"exp\": at iat + 24 h + leeway the notification is too old", no_exp_token, "expired",
              at=T + 86400 + LEEWAY, claim="iat")
    suite.add("event-private-email-bool", "is_private_email as a JSON boolean",
              suite.token(dict(claims, events=events("email-enabled", is_private_email=False))))
    suite.add("event-type-unknown", "an event type Apple does not document", suite.token(dict(claims, events=events("email-changed"))),
              "invalid_claim", claim="events")
    suite.add("event-type-missing", "an event without \"type\"",
              suite.token(dict(claims, events=json.dumps({"sub": sub, "event_time": T * 1000}))), "invalid_claim", claim="events")
    suite.add("events-object", "\"events\" as a JSON object rather than a string holding one",
              suite.token(dict(claims, events=json.loads(events("consent-revoked")))), "invalid_claim", claim="events")
    suite.add("events-missing", "no \"events\": an identity token, not a notification",
              suite.token({k: v for k, v in claims.items() if k != "events"}), "invalid_claim", claim="events")
    suite.add("events-not-json", "\"events\" is a string that is not JSON", suite.token(dict(claims, events="type=email-disabled")),
              "invalid_claim", claim="events")
    suite.add("events-array", "\"events\" holds a JSON array", suite.token(dict(claims, events="[" + events("account-delete") + "]")),
              "invalid_claim", claim="events")
    suite.add("event-sub-missing", "an event without \"sub\"",
              suite.token(dict(claims, events=json.dumps({"type": "account-delete", "event_time": T * 1000}))), "invalid_claim", claim="events")
    suite.add("event-sub-empty", "an event whose \"sub\" is empty",
              suite.token(dict(claims, events=events("consent-revoked", sub=""))), "invalid_claim", claim="events")
    suite.add("event-time-string", "\"event_time\" as a string", suite.token(dict(claims, events=events("account-delete", event_time=str(T * 1000)))),
              "invalid_claim", claim="events")
    suite.add("event-email-missing", "an email event without \"email\"",
              suite.token(dict(claims, events=json.dumps({"type": "email-enabled", "sub": sub, "event_time": T * 1000, "is_private_email": True}))),
              "invalid_claim", claim="events")
    suite.add("event-private-email-yes", "is_private_email \"yes\"",
              suite.token(dict(claims, events=events("email-disabled", is_private_email="yes"))), "invalid_claim", claim="events")
    suite.add("events-duplicate-type", "the event object names \"type\" twice",
              suite.token(dict(claims, events='{"type":"account-delete","sub":"%s","event_time":%d,"type":"email-enabled"}' % (sub, T * 1000))),
              "invalid_claim", claim="events")
    suite.add("jti-missing", "no \"jti\"", suite.token({k: v for k, v in claims.items() if k != "jti"}), "invalid_claim", claim="jti")
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    suite.add("aud-array", "\"aud\" as an array", suite.token(dict(claims, aud=[client])), "wrong_audience", claim="aud")
    return suite


def google_suite():
    T = 1767830400  # 2026-01-08
    web = rand_digits(12) + "-" + rand_alnum(32).lower() + ".apps.googleusercontent.com"
    android = rand_digits(12) + "-" + rand_alnum(32).lower() + ".apps.googleusercontent.com"
    kid = rand_hex(40)
    claims = {"iss": "https://accounts.google.com", "azp": android, "aud": web, "sub": rand_digits(21), "hd": "example.com",
              "email": "kim@example.com", "email_verified": True, "at_hash": rand_alnum(22), "name": "Kim Lee",
              "picture": "https://lh3.googleusercontent.com/a/" + rand_alnum(40) + "=s96-c", "given_name": "Kim",
              "family_name": "Lee", "iat": T, "exp": T + 3600}
    profile = {"provider": "google", "client_ids": [web, android]}
    suite = Suite("google", "google", profile, "generated/keysets/google_jwks.json", {"alg": "RS256", "kid": kid, "typ": "JWT"}, "rsa_a", T)
    add_common_cases(suite, claims)
    suite.add("iss-short-form", "the issuer written without the scheme, as Google also does",
              suite.token(dict(claims, iss="accounts.google.com")))
    for label, issuer in (("http", "http://accounts.google.com"), ("lookalike-host", "https://accounts.google.com.example.org"),
                          ("subdomain", "https://www.accounts.google.com"), ("case", "https://Accounts.Google.com")):
        suite.add("iss-" + label, "a look-alike of Google's issuer: " + issuer, suite.token(dict(claims, iss=issuer)), "wrong_issuer", claim="iss")
    suite.add("azp-absent", "no \"azp\" (a web sign-in)", suite.token({k: v for k, v in claims.items() if k != "azp"}))
    suite.add("azp-other", "\"azp\" names a client the profile does not know", suite.token(dict(claims, azp="someone-else.apps.googleusercontent.com")),
              "wrong_audience", claim="azp")
    suite.add("azp-number", "\"azp\" is a number", suite.token(dict(claims, azp=5)), "invalid_claim", claim="azp")
    domains = dict(profile, hosted_domains=["example.com", "example.org"])
    suite.add("hd-accepted", "the Workspace domain is one of the accepted ones", suite.token(claims), profile=domains)
    suite.add("hd-other", "another Workspace domain", suite.token(dict(claims, hd="example.net")), "invalid_claim", profile=domains, claim="hd")
    suite.add("hd-missing", "a consumer account (no \"hd\") where a Workspace domain is required",
              suite.token({k: v for k, v in claims.items() if k != "hd"}), "invalid_claim", profile=domains, claim="hd")
    suite.add("hd-ignored", "no domain required: a consumer account passes", suite.token({k: v for k, v in claims.items() if k != "hd"}))
    suite.add("hd-number", "\"hd\" is a number", suite.token(dict(claims, hd=7)), "invalid_claim", claim="hd")
    suite.add("email-verified-string", "email_verified as the string \"true\" (older tokens)", suite.token(dict(claims, email_verified="true")))
    suite.add("email-verified-yes", "email_verified \"yes\"", suite.token(dict(claims, email_verified="yes")), "invalid_claim", claim="email_verified")
    suite.add("email-number", "email 5", suite.token(dict(claims, email=5)), "invalid_claim", claim="email")
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    suite.add("aud-array", "\"aud\" as an array", suite.token(dict(claims, aud=[web])), "wrong_audience", claim="aud")
    suite.add("firebase-id-token", "a Firebase ID token sent where a Google ID token is expected",
              suite.token({"iss": "https://securetoken.google.com/idtk-demo", "aud": "idtk-demo", "sub": rand_alnum(28), "iat": T,
                           "exp": T + 3600, "auth_time": T - 60}), "wrong_audience", claim="aud")
    return suite


def github_actions_suite():
    T = 1767916800  # 2026-01-09
    owner, repo = "acme", "acme/api"
    aud = "https://github.com/" + owner
    kid = rand_hex(32)
    claims = {"jti": uuid(),
              "sub": "repo:acme/api:environment:production", "aud": aud, "ref": "refs/heads/main", "sha": rand_hex(40),
              "repository": repo, "repository_owner": owner, "repository_owner_id": rand_digits(8), "run_id": rand_digits(10),
              "run_number": "42", "run_attempt": "1", "repository_visibility": "private", "repository_id": rand_digits(9),
              "actor_id": rand_digits(7), "actor": "octocat", "workflow": "deploy", "head_ref": "", "base_ref": "",
              "event_name": "push", "ref_protected": "true", "ref_type": "branch", "environment": "production",
              "workflow_ref": "acme/api/.github/workflows/deploy.yml@refs/heads/main",
              "job_workflow_ref": "acme/ci/.github/workflows/deploy.yml@refs/heads/main", "runner_environment": "github-hosted",
              "iss": "https://token.actions.githubusercontent.com", "nbf": T - 300, "exp": T + 600, "iat": T}
    profile = {"provider": "github-actions", "audiences": [aud], "required_claims": {"repository": [repo]}}
    suite = Suite("github-actions", "github-actions", profile, "generated/keysets/github_actions_jwks.json",
                  {"typ": "JWT", "alg": "RS256", "x5t": rand_alnum(27), "kid": kid}, "rsa_a", T)
    add_common_cases(suite, claims)

    def rules(**required):
        return dict(profile, required_claims=required)

    suite.add("repository-other", "a workflow of another repository, with the audience of the same owner",
              suite.token(dict(claims, repository="acme/web", sub="repo:acme/web:ref:refs/heads/main")), "invalid_claim", claim="repository")
    suite.add("repository-other-owner", "a workflow of another owner's repository that asked for this audience",
              suite.token(dict(claims, repository="mallory/api", repository_owner="mallory")), "invalid_claim", claim="repository")
    suite.add("repository-missing", "no \"repository\"", suite.token({k: v for k, v in claims.items() if k != "repository"}),
              "invalid_claim", claim="repository")
    suite.add("owner-only", "every repository of the owner", suite.token(dict(claims, repository="acme/web")),
              profile=rules(repository_owner=[owner]))
    suite.add("ref-branches", "branches only: a tag's workflow refused", suite.token(dict(claims, ref="refs/tags/v1.2.0", ref_type="tag")),
              "invalid_claim", profile=rules(repository=[repo], ref=["refs/heads/*"]), claim="ref")
    suite.add("environment-required", "the production environment required, and present", suite.token(claims),
              profile=rules(repository=[repo], environment=["production"]))
    suite.add("environment-missing", "the production environment required; a job without an environment",
              suite.token({k: v for k, v in claims.items() if k != "environment"}), "invalid_claim",
              profile=rules(repository=[repo], environment=["production"]), claim="environment")
    suite.add("reusable-workflow", "a reusable workflow of the owner's CI repository, from any of its repositories",
              suite.token(dict(claims, repository="acme/web")), profile=rules(job_workflow_ref=["acme/ci/.github/workflows/*@refs/heads/main"]))
    suite.add("reusable-workflow-other", "a reusable workflow of another repository",
              suite.token(dict(claims, job_workflow_ref="mallory/ci/.github/workflows/deploy.yml@refs/heads/main")), "invalid_claim",
              profile=rules(job_workflow_ref=["acme/ci/.github/workflows/*@refs/heads/main"]), claim="job_workflow_ref")
    suite.add("sub-pattern", "\"sub\" by a pattern", suite.token(claims), profile=rules(sub=["repo:acme/api:environment:*"]))
    suite.add("enterprise-issuer", "an enterprise's customised issuer is not github.com's",
              suite.token(dict(claims, iss="https://token.actions.githubusercontent.com/acme-enterprise")), "wrong_issuer", claim="iss")
    suite.add("aud-other-owner", "the default audience of another owner", suite.token(dict(claims, aud="https://github.com/mallory")),
              "wrong_audience", claim="aud")
    suite.add("aud-array", "\"aud\" as an array holding the audience", suite.token(dict(claims, aud=[aud])))
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    return suite


def cognito_suite():
    T = 1768003200  # 2026-01-10
    region = "eu-west-1"
    pool, iss, client, kid = cognito_pool(region)

    claims = {"sub": uuid(), "email_verified": True, "iss": iss, "cognito:username": "kim", "origin_jti": uuid(), "aud": client,
              "event_id": uuid(), "token_use": "id", "auth_time": T - 10, "exp": T + 3600, "iat": T, "jti": uuid(),
              "email": "kim@example.com"}
    profile = {"provider": "cognito", "issuers": [iss], "audiences": [client]}
    suite = Suite("cognito", "cognito", profile, "generated/keysets/cognito_jwks.json", {"kid": kid, "alg": "RS256"}, "rsa_a", T)
    add_common_cases(suite, claims)
    access = {"sub": claims["sub"], "iss": iss, "client_id": client, "origin_jti": uuid(), "event_id": uuid(), "token_use": "access",
              "scope": "aws.cognito.signin.user.admin", "auth_time": T - 10, "exp": T + 3600, "iat": T, "jti": uuid(), "username": "kim"}
    suite.add("access-token", "the pool's access token (no \"aud\", token_use access) where the ID token belongs",
              suite.token(access), "invalid_claim", claim="aud")
    suite.add("token-use-access", "token_use \"access\" with the client as audience", suite.token(dict(claims, token_use="access")),
              "invalid_claim", claim="token_use")
    suite.add("token-use-missing", "no \"token_use\"", suite.token({k: v for k, v in claims.items() if k != "token_use"}),
              "invalid_claim", claim="token_use")
    suite.add("token-use-number", "\"token_use\" is a number", suite.token(dict(claims, token_use=1)), "invalid_claim", claim="token_use")
    suite.add("other-pool", "a token of another user pool of the region",
              suite.token(dict(claims, iss="https://cognito-idp." + region + ".amazonaws.com/" + region + "_" + rand_alnum(9))),
              "wrong_issuer", claim="iss")
    suite.add("other-region", "the pool's ID in another region's issuer",
              suite.token(dict(claims, iss="https://cognito-idp.us-east-1.amazonaws.com/" + pool)), "wrong_issuer", claim="iss")
    suite.add("aud-other-client", "another app client of the pool", suite.token(dict(claims, aud=rand_alnum(26).lower())),
              "wrong_audience", claim="aud")
    suite.add("aud-array", "\"aud\" as an array", suite.token(dict(claims, aud=[client])), "wrong_audience", claim="aud")
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    suite.add("groups-required", "a group required of the user", suite.token(dict(claims, **{"cognito:groups": ["admins", "staff"]})),
              profile=dict(profile, required_claims={"cognito:groups": ["admins"]}))
    suite.add("groups-required-missing", "a group required of a user in none", suite.token(claims), "invalid_claim",
              profile=dict(profile, required_claims={"cognito:groups": ["admins"]}), claim="cognito:groups")
    return suite


def cognito_access_suite():
    T = 1768176000  # 2026-01-12
    region = "eu-west-1"
    pool, iss, client, kid = cognito_pool(region)

    claims = {"sub": uuid(), "iss": iss, "client_id": client, "origin_jti": uuid(), "event_id": uuid(), "token_use": "access",
              "scope": "aws.cognito.signin.user.admin", "auth_time": T - 10, "exp": T + 3600, "iat": T, "jti": uuid(), "username": "kim"}
    profile = {"provider": "cognito-access", "issuers": [iss], "audiences": [client]}
    suite = Suite("cognito-access", "cognito-access", profile, "generated/keysets/cognito_access_jwks.json", {"kid": kid, "alg": "RS256"},
                  "rsa_a", T)
    add_common_cases(suite, claims, aud="client_id")
    suite.add("id-token", "the pool's ID token (token_use id, the client as aud) where the access token belongs",
              suite.token({k: v for k, v in dict(claims, token_use="id", aud=client).items() if k not in ("client_id", "scope")}),
              "invalid_claim", claim="client_id")
    suite.add("token-use-id", "token_use \"id\" with the client in client_id", suite.token(dict(claims, token_use="id")),
              "invalid_claim", claim="token_use")
    suite.add("token-use-missing", "no \"token_use\"", suite.token({k: v for k, v in claims.items() if k != "token_use"}),
              "invalid_claim", claim="token_use")
    suite.add("aud-ignored", "an \"aud\" beside client_id is not read", suite.token(dict(claims, aud="anything")))
    suite.add("other-pool", "a token of another user pool", suite.token(dict(claims, iss="https://cognito-idp." + region + ".amazonaws.com/" + region + "_" + rand_alnum(9))),
              "wrong_issuer", claim="iss")
    suite.add("scope-required", "a scope required of the token", suite.token(dict(claims, scope="orders/read orders/write")),
              profile=dict(profile, required_claims={"scope": ["*orders/write*"]}))
    suite.add("scope-required-missing", "a scope required, and absent from the token's", suite.token(claims), "invalid_claim",
              profile=dict(profile, required_claims={"scope": ["*orders/write*"]}), claim="scope")
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    return suite


def entra_suite():
    T = 1768089600  # 2026-01-11

    tenant, other, client = uuid(), uuid(), uuid()

    def v2(tid):
        return "https://login.microsoftonline.com/" + tid + "/v2.0"

    def v1(tid):
        return "https://sts.windows.net/" + tid + "/"

    kid = rand_alnum(27)
    claims = {"aud": client, "iss": v2(tenant), "iat": T, "exp": T + 3600, "aio": rand_alnum(40), "name": "Kim Lee", "oid": uuid(),
              "preferred_username": "kim@contoso.example", "rh": rand_alnum(20), "sub": rand_alnum(43), "tid": tenant,
              "uti": rand_alnum(22), "ver": "2.0"}
    profile = {"provider": "entra", "audiences": [client], "tenants": [tenant]}
    suite = Suite("entra", "entra", profile, "generated/keysets/entra_jwks.json", {"typ": "JWT", "alg": "RS256", "kid": kid}, "rsa_a", T)
    add_common_cases(suite, claims)
    anyone = {"provider": "entra", "audiences": [client], "any_tenant": True}
    suite.add("tenant-unlisted", "a token of a tenant the profile does not list", suite.token(dict(claims, iss=v2(other), tid=other)),
              "wrong_issuer", claim="iss")
    suite.add("tid-unlisted-issuer-listed", "the listed tenant's issuer on a token of another tenant",
              suite.token(dict(claims, tid=other)), "tenant_mismatch", claim="tid")
    suite.add("two-tenants", "the second of two listed tenants", suite.token(dict(claims, iss=v2(other), tid=other)),
              profile=dict(profile, tenants=[tenant, other]))
    suite.add("tenant-uppercase", "the tenant ID listed in uppercase", suite.token(claims), profile=dict(profile, tenants=[tenant.upper()]))
    suite.add("any-tenant", "any tenant: a token of another tenant, issued as its own", suite.token(dict(claims, iss=v2(other), tid=other)),
              profile=anyone)
    suite.add("any-tenant-iss-not-tid", "any tenant: one tenant's issuer on another tenant's token (the common key set signs both)",
              suite.token(dict(claims, tid=other)), "wrong_issuer", profile=anyone, claim="iss")
    suite.add("any-tenant-tid-missing", "any tenant: no \"tid\"", suite.token({k: v for k, v in claims.items() if k != "tid"}),
              "invalid_claim", profile=anyone, claim="tid")
    suite.add("any-tenant-tid-not-guid", "any tenant: a \"tid\" that is a domain name, and an issuer to match",
              suite.token(dict(claims, iss=v2("contoso.example"), tid="contoso.example")), "invalid_claim", profile=anyone, claim="tid")
    suite.add("any-tenant-lookalike", "any tenant: an issuer with another path after the tenant",
              suite.token(dict(claims, iss="https://login.microsoftonline.com/" + tenant + "/oauth2/v2.0")), "wrong_issuer",
              profile=anyone, claim="iss")
    suite.add("any-tenant-other-host", "any tenant: the same path on another host",
              suite.token(dict(claims, iss="https://login.microsoftonline.example/" + tenant + "/v2.0")), "wrong_issuer",
              profile=anyone, claim="iss")
    suite.add("v1-refused", "a v1.0 token where only v2.0 is accepted", suite.token(dict(claims, iss=v1(tenant), ver="1.0")),
              "wrong_issuer", claim="iss")
    suite.add("v1-accepted", "a v1.0 token with v1.0 accepted", suite.token(dict(claims, iss=v1(tenant), ver="1.0")),
              profile=dict(profile, entra_v1=True))
    suite.add("v1-any-tenant", "a v1.0 token of another tenant, any tenant and v1.0 accepted",
              suite.token(dict(claims, iss=v1(other), tid=other, ver="1.0")), profile=dict(anyone, entra_v1=True))
    suite.add("aud-api-uri", "the Application ID URI as audience", suite.token(dict(claims, aud="api://" + client)),
              profile=dict(profile, audiences=[client, "api://" + client]))
    suite.add("aud-api-uri-not-given", "the Application ID URI as audience, the profile giving the GUID only",
              suite.token(dict(claims, aud="api://" + client)), "wrong_audience", claim="aud")
    suite.add("iat-missing", "no \"iat\"", suite.token({k: v for k, v in claims.items() if k != "iat"}), "invalid_claim", claim="iat")
    return suite


# ---------------------------------------------------------------- output

def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    fb_a = hashlib.sha1(b"idtk firebase key a").hexdigest()
    fb_b = hashlib.sha1(b"idtk firebase key b").hexdigest()
    keysets = {
        "firebase_jwks.json": {"keys": [jwk("rsa_a", fb_a), jwk("rsa_b", fb_b)]},
        "firebase_session_certificates.json": {fb_b: certificate_pem("rsa_b", "idtk-session-" + fb_b[:8]),
                                               fb_a: certificate_pem("rsa_a", "idtk-session-" + fb_a[:8])},
        "firebase_certificates.json": {fb_a: certificate_pem("rsa_a", "idtk-securetoken-" + fb_a[:8]),
                                       fb_b: certificate_pem("rsa_b", "idtk-securetoken-" + fb_b[:8])},
        "apple_jwks.json": {"keys": [jwk("rsa_a", "IDTKa1"), jwk("rsa_b", "IDTKb2")]},
        "facebook_jwks.json": {"keys": [jwk("rsa_a", hashlib.sha1(b"idtk facebook key").hexdigest()), jwk("rsa_b", "e4f6715b" + "0" * 32)]},
        "oidc_jwks.json": {"keys": [jwk("ec_a", "oidc-ec-1"), jwk("rsa_a", "oidc-rsa-1")]},
        "oidc_with_weak_key.json": {"keys": [jwk("rsa_weak", "weak-1024"), jwk("ec_a", "oidc-ec-1")]},
    }
    for name, content in keysets.items():
        write_json(os.path.join(KEYSETS_DIR, name), content)

    suites = [firebase_suite(), firebase_suite(session=True), apple_suite(), facebook_suite(), oidc_suite(),
              app_check_suite(), apple_notification_suite(), google_suite(), github_actions_suite(), cognito_suite(),
              entra_suite(), cognito_access_suite()]
    # Key sets of the later suites: their kids are drawn from the seeded generator as the suites are built.
    keysets = {
        "appcheck_jwks.json": {"keys": [jwk("rsa_b", "appcheck-other"), jwk("rsa_a", suites[5].header["kid"])]},
        "google_jwks.json": {"keys": [jwk("rsa_a", suites[7].header["kid"]), jwk("rsa_b", "0" * 40)]},
        "github_actions_jwks.json": {"keys": [jwk("rsa_a", suites[8].header["kid"]), jwk("rsa_b", "1" * 32)]},
        "cognito_jwks.json": {"keys": [jwk("rsa_b", "2" * 43 + "="), jwk("rsa_a", suites[9].header["kid"])]},
        "entra_jwks.json": {"keys": [jwk("rsa_a", suites[10].header["kid"]), jwk("rsa_b", "3" * 27)]},
        "cognito_access_jwks.json": {"keys": [jwk("rsa_a", suites[11].header["kid"]), jwk("rsa_b", "4" * 43 + "=")]},
    }
    for name, content in keysets.items():
        write_json(os.path.join(KEYSETS_DIR, name), content)
    # The certificate-map form of the Firebase keys: the same tokens must verify with it.
    fb = suites[0]
    for case in list(fb.cases):
        if case["id"] in ("firebase/valid", "firebase/valid-escaped-slashes-unicode", "firebase/signature-flipped-bit"):
            copy = dict(case, id=case["id"] + "-certificate-map", keys="generated/keysets/firebase_certificates.json",
                        description=case["description"] + " (keys as a kid -> PEM certificate map)")
            fb.cases.append(copy)

    total = 0
    for suite in suites:
        doc = {
            "about": f"Generated {suite.provider} provider vectors for IDTokenKit. Regenerate with `python3 {GENERATOR}`; "
                     "re-check independently with `python3 Vectors/tools/check_vectors.py`. Signed with the TEST ONLY keys in Vectors/keys/.",
            "schema": "Vectors/schema.json",
            "generator": GENERATOR,
            "seed": SEED,
            "provider": suite.provider,
            "cases": suite.cases,
        }
        write_json(os.path.join(OUT_DIR, suite.name + ".json"), doc)
        total += len(suite.cases)
        codes = sorted({c["expect"]["error"] for c in suite.cases if c["expect"]["error"]})
        print(f"{suite.name}: {len(suite.cases)} cases; error codes: {', '.join(codes)}", file=sys.stderr)
    print(f"wrote {total} cases to {os.path.relpath(OUT_DIR)}", file=sys.stderr)


if __name__ == "__main__":
    main()
