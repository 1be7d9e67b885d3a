#!/usr/bin/env python3
"""Writes the benchmark fixtures: realistic Firebase, Sign in with Apple and Facebook Limited Login tokens
(RS256, RSA-2048) and an OIDC ES256 token (P-256), signed with keys made for the benchmark, plus their JWKS.

The keys are TEST ONLY: they exist so that the benchmark needs no network and no real provider. Rerunning
this script keeps existing keys and rewrites the tokens (RS256 signatures are deterministic; ES256 ones
are not, which does not change any measurement).

Usage: python3 bench/tools/make_fixtures.py
"""
import base64, hashlib, json, os, sys
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures")
IAT = 1767225600  # 2026-01-01T00:00:00Z
# Far in the future, so that verifiers that read the wall clock (peers such as jwt-kit) accept them too.
EXP = 4102444800  # 2100-01-01T00:00:00Z


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def load_or_make(name, make):
    path = os.path.join(OUT, name)
    if os.path.exists(path):
        with open(path, "rb") as f:
            return serialization.load_pem_private_key(f.read(), password=None)
    key = make()
    with open(path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return key


def int_bytes(n: int, length: int = 0) -> bytes:
    return n.to_bytes(length or (n.bit_length() + 7) // 8, "big")


def rsa_jwk(key, kid):
    pub = key.public_key().public_numbers()
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64u(int_bytes(pub.n)), "e": b64u(int_bytes(pub.e))}


def ec_jwk(key, kid):
    pub = key.public_key().public_numbers()
    return {"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256",
            "x": b64u(int_bytes(pub.x, 32)), "y": b64u(int_bytes(pub.y, 32))}


def sign(header, claims, key):
    h = b64u(json.dumps(header, separators=(",", ":")).encode())
    p = b64u(json.dumps(claims, separators=(",", ":"), ensure_ascii=False).encode())
    signing_input = f"{h}.{p}".encode()
    if isinstance(key, rsa.RSAPrivateKey):
        sig = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    else:
        r, s = utils.decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        sig = int_bytes(r, 32) + int_bytes(s, 32)
    return f"{h}.{p}.{b64u(sig)}"


def firebase_token(key, kid, uid, name, email):
    return sign({"alg": "RS256", "kid": kid, "typ": "JWT"}, {
        "name": name,
        "picture": "https://lh3.googleusercontent.com/a/ACg8ocJ2s9m1o7Yh0c_Xv0g7k3F3bXy2F4Yt3rA=s96-c",
        "iss": "https://securetoken.google.com/idtokenkit-bench",
        "aud": "idtokenkit-bench",
        "auth_time": IAT - 30,
        "user_id": uid,
        "sub": uid,
        "iat": IAT,
        "exp": EXP,
        "email": email,
        "email_verified": True,
        "firebase": {
            "identities": {"apple.com": ["001234.5b0c7e19d3a44f8e9c2a1b3d5e7f9a0b.1234"],
                           "email": [email]},
            "sign_in_provider": "apple.com",
        },
    }, key)


def main():
    os.makedirs(OUT, exist_ok=True)
    rsa_key = load_or_make("TEST-ONLY-rsa2048.pem", lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
    ec_key = load_or_make("TEST-ONLY-p256.pem", lambda: ec.generate_private_key(ec.SECP256R1()))
    rsa_kid = "6f8a2c8d1e0b4a7c9d3e5f1a2b4c6d8e0f1a3b5c"
    ec_kid = "bench-es256-1"
    raw_nonce = "bench-raw-nonce-2b7c4e1f"
    hashed_nonce = hashlib.sha256(raw_nonce.encode()).hexdigest()
    uid = "tr2RUsxYqbQ7PbQ8HfSBbHLaDjt2"
    tokens = {
        "firebase": firebase_token(rsa_key, rsa_kid, uid, "Ada Lovelace", "ada.lovelace@example.com"),
        "apple": sign({"kid": rsa_kid, "alg": "RS256"}, {
            "iss": "https://appleid.apple.com",
            "aud": "com.example.idtokenkit",
            "exp": EXP,
            "iat": IAT,
            "sub": "001234.5b0c7e19d3a44f8e9c2a1b3d5e7f9a0b.1234",
            "nonce": hashed_nonce,
            "c_hash": "q8v3RZlp4d7wB1nQ0jHc2g",
            "email": "k3x9q2m7zt@privaterelay.appleid.com",
            "email_verified": "true",
            "is_private_email": "true",
            "auth_time": IAT - 5,
            "nonce_supported": True,
            "real_user_status": 2,
        }, rsa_key),
        "facebook": sign({"alg": "RS256", "kid": rsa_kid, "typ": "JWT"}, {
            "iss": "https://www.facebook.com",
            "aud": "1234567890123456",
            "sub": "10160123456789012",
            "iat": IAT,
            "exp": EXP,
            "jti": "6f1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b",
            "nonce": hashed_nonce,
            "given_name": "Ada",
            "family_name": "Lovelace",
            "name": "Ada Lovelace",
            "email": "ada.lovelace@example.com",
            "picture": "https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=10160123456789012&height=100&width=100&ext=1769817600&hash=AbZx1y2w3v4u5t6s",
        }, rsa_key),
        "oidc-es256": sign({"alg": "ES256", "kid": ec_kid, "typ": "JWT"}, {
            "iss": "https://issuer.example.com",
            "aud": "idtokenkit-bench-client",
            "sub": "248289761001",
            "iat": IAT,
            "exp": EXP,
            "email": "ada.lovelace@example.com",
            "email_verified": True,
            "name": "Ada Lovelace",
        }, ec_key),
    }
    # Tokens of other users, so that the verified-token cache scenarios can give each thread tokens of its own.
    for n in range(1, 9):
        user = hashlib.sha256(f"bench-user-{n}".encode()).hexdigest()[:28]
        tokens[f"firebase-user-{n}"] = firebase_token(rsa_key, rsa_kid, user, f"Bench User {n}", f"bench.user.{n}@example.com")
    fixtures = {
        "about": "Benchmark tokens signed with TEST-ONLY keys (bench/tools/make_fixtures.py).",
        "now": IAT + 60,
        "rawNonce": raw_nonce,
        "audiences": {"firebase": "idtokenkit-bench", "apple": "com.example.idtokenkit",
                      "facebook": "1234567890123456", "oidc-es256": "idtokenkit-bench-client"},
        "jwks": {"keys": [rsa_jwk(rsa_key, rsa_kid), ec_jwk(ec_key, ec_kid)]},
        "tokens": tokens,
    }
    with open(os.path.join(OUT, "tokens.json"), "w") as f:
        json.dump(fixtures, f, indent=2)
        f.write("\n")
    print(f"wrote {os.path.join(OUT, 'tokens.json')}", file=sys.stderr)


if __name__ == "__main__":
    main()
