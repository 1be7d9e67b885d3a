#!/usr/bin/env python3
"""Generates the TEST-ONLY key sets and tokens in test-keys/ used by Tests/KeySourceTests.

The keys are made fresh on every run (RSA key generation cannot be seeded in `cryptography`), so rerunning
changes every file; the tests only depend on the kids, the shapes and the tokens matching the keys. No
private key is written: only public JWKS, a certificate map and tokens signed here.

    python3 Tests/KeySourceTests/Fixtures/generate_test_keys.py
"""
import base64
import datetime
import json
import pathlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID

OUT = pathlib.Path(__file__).resolve().parent / "test-keys"


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def uint(n: int) -> bytes:
    return n.to_bytes((n.bit_length() + 7) // 8, "big")


def rsa_jwk(key, kid):
    pub = key.public_key().public_numbers()
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64u(uint(pub.n)), "e": b64u(uint(pub.e))}


def ec_jwk(key, kid):
    pub = key.public_key().public_numbers()
    return {"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256",
            "x": b64u(pub.x.to_bytes(32, "big")), "y": b64u(pub.y.to_bytes(32, "big"))}


def cert_pem(key, kid):
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"TEST ONLY {kid}")])
    now = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=3650)).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def token(key, kid, alg, claims):
    header = b64u(json.dumps({"alg": alg, "kid": kid, "typ": "JWT"}, separators=(",", ":")).encode())
    payload = b64u(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{header}.{payload}".encode()
    if alg == "RS256":
        sig = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    else:
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return f"{header}.{payload}.{b64u(sig)}"


def write(name, obj):
    (OUT / name).write_text(json.dumps(obj, indent=2) + "\n")


def main():
    OUT.mkdir(exist_ok=True)
    rsa_keys = {f"test-rsa-{i}": rsa.generate_private_key(public_exponent=65537, key_size=2048) for i in range(1, 5)}
    weak = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    ec1 = ec.generate_private_key(ec.SECP256R1())
    jwk = {kid: rsa_jwk(k, kid) for kid, k in rsa_keys.items()}

    write("jwks-a.json", {"keys": [jwk["test-rsa-1"], jwk["test-rsa-2"], ec_jwk(ec1, "test-ec-1")]})
    # The rotation: test-rsa-1 leaves, test-rsa-3 arrives.
    write("jwks-b.json", {"keys": [jwk["test-rsa-2"], jwk["test-rsa-3"]]})
    write("jwks-c.json", {"keys": [jwk["test-rsa-3"], jwk["test-rsa-4"]]})
    # One usable key and three refused ones (1024-bit RSA, an encryption key, a symmetric key).
    enc = dict(jwk["test-rsa-4"], kid="test-rsa-enc", use="enc")
    enc.pop("alg")
    write("jwks-with-refused.json", {"keys": [jwk["test-rsa-2"], rsa_jwk(weak, "test-rsa-weak"), enc,
                                              {"kty": "oct", "kid": "test-hmac", "k": b64u(b"0" * 32)}]})
    # Only refused keys: a fetch of this must fail and keep the previous set.
    write("jwks-only-refused.json", {"keys": [rsa_jwk(weak, "test-rsa-weak")]})
    # The kid test-rsa-1 reused for test-rsa-4's key material: an archive must refuse that kid.
    write("jwks-kid-reused.json", {"keys": [dict(jwk["test-rsa-4"], kid="test-rsa-1")]})
    # Google's x509 form: kid -> PEM certificate.
    write("certmap-a.json", {kid: cert_pem(rsa_keys[kid], kid) for kid in ("test-rsa-1", "test-rsa-2")})

    claims = {"iss": "https://issuer.test.invalid", "aud": "test-audience", "sub": "test-user",
              "iat": 1700000000, "exp": 1700003600}
    write("tokens.json", {
        "_about": "TEST ONLY tokens signed by the TEST ONLY keys in this folder (generate_test_keys.py).",
        "tokens": [
            {"kid": kid, "alg": "RS256", "token": token(rsa_keys[kid], kid, "RS256", claims)}
            for kid in ("test-rsa-1", "test-rsa-2", "test-rsa-3", "test-rsa-4")
        ] + [{"kid": "test-ec-1", "alg": "ES256", "token": token(ec1, "test-ec-1", "ES256", claims)}],
    })


if __name__ == "__main__":
    main()
