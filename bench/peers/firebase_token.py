#!/usr/bin/env python3
"""Prints a Firebase ID token for the vectors' project (idtk-demo-7f3a2), valid for the next hour, signed with the
TEST-ONLY key Vectors/keys/test_rsa_2048_a.pem under the kid it has in Vectors/generated/keysets/firebase_jwks.json.
For benchmarks against verifiers that read the wall clock (vapor/jwt)."""
import base64, json, sys, time
from pathlib import Path
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

root = Path(__file__).resolve().parents[2]
key = serialization.load_pem_private_key((root / "Vectors/keys/test_rsa_2048_a.pem").read_bytes(), password=None)
n = key.public_key().public_numbers().n
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
jwks = json.loads((root / "Vectors/generated/keysets/firebase_jwks.json").read_text())
kid = next(k["kid"] for k in jwks["keys"]
           if int.from_bytes(base64.urlsafe_b64decode(k["n"] + "=" * (-len(k["n"]) % 4)), "big") == n)
now = int(time.time())
project = "idtk-demo-7f3a2"
header = {"alg": "RS256", "kid": kid, "typ": "JWT"}
payload = {"iss": f"https://securetoken.google.com/{project}", "aud": project, "auth_time": now - 60,
           "user_id": "bench-user-1", "sub": "bench-user-1", "iat": now - 60, "exp": now + 3600,
           "email": "bench@example.com", "email_verified": True,
           "firebase": {"identities": {"email": ["bench@example.com"]}, "sign_in_provider": "password"}}
signing_input = b64(json.dumps(header, separators=(",", ":")).encode()) + "." + \
    b64(json.dumps(payload, separators=(",", ":")).encode())
signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
sys.stdout.write(signing_input + "." + b64(signature) + "\n")
