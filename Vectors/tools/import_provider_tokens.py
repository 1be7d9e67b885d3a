#!/usr/bin/env python3
"""Copies the real provider tokens and keys IDTokenKit tests with from the shared external collection into
Vectors/external/providers/, and writes cases.json: the verdicts each token must get (DESIGN §8 case schema).

Usage: python3 Vectors/tools/import_provider_tokens.py [PATH-TO-vectors-external]
(default: ../shared/vectors-external next to the repository). Deterministic; rerunning rewrites the same files.
The repository keeps the output, so tests never read the shared collection.

For every token whose key is known: valid at a time inside its validity, expired an hour after exp,
bad_signature with one signature byte changed, wrong_audience with another audience. Firebase tokens whose
key was never published: unknown_key. The Facebook iOS SDK vector: valid with its certificate, bad_signature
with the other one.
"""
import base64
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(REPO, "Vectors", "external", "providers")
SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(os.path.join(REPO, "..", "shared", "vectors-external"))
REL = "external/providers/"  # key references are relative to Vectors/

# Tokens from repositories without a stated licence are not copied.
EXCLUDED_REPOS = {"getsince/test3"}


def load(path):
    with open(os.path.join(SRC, path), encoding="utf-8") as f:
        return json.load(f)


def write(path, obj):
    full = os.path.join(OUT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


def claims_of(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def flip_signature_byte(token, index=10):
    head, payload, sig = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4)))
    raw[index] ^= 0x01
    return head + "." + payload + "." + base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()


cases = []


def case(case_id, description, token, keys, profile, at, error=None, nonce=None, claim=None):
    expect = {"valid": error is None, "error": error}
    if claim:
        expect["claim"] = claim
    cases.append({"id": case_id, "description": description, "token": token, "keys": keys, "profile": profile,
                  "at": at, "nonce": nonce, "expect": expect})


def standard_cases(case_id, token, keys, profile, other_profile, valid_error=None, valid_claim=None):
    claims = claims_of(token)
    inside = int(claims["iat"]) + 1
    case(case_id + "/inside-validity", "verifies at a time inside its validity (iat + 1 s)", token, keys, profile,
         inside, valid_error, claim=valid_claim)
    if valid_error is None:
        case(case_id + "/expired", "expired one hour after exp", token, keys, profile, int(claims["exp"]) + 3600,
             "expired", claim="exp")
        case(case_id + "/bad-signature", "one signature byte changed", flip_signature_byte(token), keys, profile,
             inside, "bad_signature")
        case(case_id + "/wrong-audience", "verified for another audience", token, keys, other_profile, inside,
             "wrong_audience", claim="aud")


def main():
    # ---- Firebase ID tokens and Google securetoken certificate maps
    firebase = load("provider-tokens/firebase_id_tokens.json")
    for name in ("2019-02_dragorhast_reconstructed.json", "2021-03_nock-mock_unidentified.json"):
        doc = load("provider-keys/google-securetoken/" + name)
        write("keys/google-securetoken/" + name, doc["certs"])
    firebase_keys = REL + "keys/google-securetoken"
    kept = []
    for index, record in enumerate(firebase["tokens"]):
        token = record["token"]
        project = record["aud"]
        profile = {"provider": "firebase", "project_id": project}
        case_id = f"real/firebase/{record['source']['repo'].split('/')[0].lower()}-{record['kid'][:8]}-{index}"
        if record["signature_verified_offline"]:
            standard_cases(case_id, token, firebase_keys, profile, {"provider": "firebase", "project_id": "another-project"})
        else:
            case(case_id + "/unknown-key", "its key was never published: unknown kid", token, firebase_keys, profile,
                 int(record["iat"]) + 1, "unknown_key", claim="kid")
        kept.append(record)
    write("tokens/firebase_id_tokens.json", {"_about": firebase["_about"], "tokens": kept})

    # ---- a Firebase-shaped token from fschuindt/firebase_id_token, signed with a 1024-bit test key
    fs = load("synthetic-provider-shaped/fschuindt_firebase_jwt.json")
    write("keys/fschuindt-firebase/certificates.json", {"123qwe": fs["certificate"]})
    write("tokens/fschuindt_firebase_jwt.json", {
        "_about": "Firebase-shaped token and self-signed certificate (1024-bit RSA test key) from "
                  "fschuindt/firebase_id_token spec/fixtures/files/jwt.json (MIT). The private key is not copied.",
        "jwt_token": fs["jwt_token"], "certificate": fs["certificate"]})
    claims = claims_of(fs["jwt_token"])
    case("real/firebase/fschuindt-weak-key", "its only key is 1024-bit RSA, refused at load: unknown_key",
         fs["jwt_token"], REL + "keys/fschuindt-firebase/certificates.json",
         {"provider": "firebase", "project_id": claims["aud"]}, int(claims["iat"]) + 1, "unknown_key", claim="kid")

    # ---- Sign in with Apple
    apple_keys = load("provider-keys/apple/apple_keys_by_kid.json")
    write("keys/apple/apple_keys_by_kid.json", apple_keys)
    apple = load("provider-tokens/apple_identity_tokens.json")
    kept = []
    for index, record in enumerate(apple["tokens"]):
        if record["source"]["repo"] in EXCLUDED_REPOS:
            continue
        kept.append(record)
        token = record["token"]
        profile = {"provider": "apple", "client_ids": [record["aud"]]}
        other = {"provider": "apple", "client_ids": ["com.example.another-app"]}
        case_id = f"real/apple/{record['source']['repo'].split('/')[0].lower()}-{record['kid']}-{index}"
        keys = REL + "keys/apple/apple_keys_by_kid.json"
        if record.get("expected_identity_token_verdict") == "invalid_claim":
            # A server-to-server notification: Apple's signature, but no "sub", so not an identity token.
            standard_cases(case_id, token, keys, profile, other, valid_error="invalid_claim", valid_claim="sub")
            continue
        standard_cases(case_id, token, keys, profile, other)
        if record.get("nonce"):
            inside = int(record["iat"]) + 1
            case(case_id + "/nonce-exact", "the nonce it carries, in exact mode", token, keys, profile, inside,
                 nonce={"mode": "exact", "value": record["nonce"]})
            case(case_id + "/nonce-mismatch", "the nonce taken as a raw nonce to hash: mismatch", token, keys, profile,
                 inside, "nonce_mismatch", nonce={"mode": "sha256hex", "value": record["nonce"]}, claim="nonce")
    write("tokens/apple_identity_tokens.json", {"_about": apple["_about"], "tokens": kept})

    # ---- Facebook iOS SDK Limited-Login-shaped vector
    fb = load("synthetic-provider-shaped/facebook-ios-sdk_limited_login_vector.json")
    write("tokens/facebook-ios-sdk_limited_login_vector.json",
          {k: fb[k] for k in ("_about", "token", "header", "claims", "source")})
    write("keys/facebook-ios-sdk/certificates.json", fb["certificate_map"])
    write("keys/facebook-ios-sdk-incorrect/certificates.json", {"some_key": fb["incorrect_certificate"]})
    token = fb["token"]
    claims = claims_of(token)
    # Not a production Limited Login token (no kid, no jti, issuer https://facebook.com/dialog/oauth), so it is
    # verified with the generic profile configured for it; the strict Facebook profile refuses it.
    oidc = {"provider": "oidc", "issuers": [claims["iss"]], "audiences": [claims["aud"]], "algorithms": ["RS256"]}
    sdk_keys = REL + "keys/facebook-ios-sdk/certificates.json"
    standard_cases("real/facebook-ios-sdk", token, sdk_keys, oidc, dict(oidc, audiences=["9999"]))
    case("real/facebook-ios-sdk/incorrect-certificate", "the SDK's incorrect certificate under the same key name",
         token, REL + "keys/facebook-ios-sdk-incorrect/certificates.json", oidc, int(claims["iat"]) + 1, "bad_signature")
    case("real/facebook-ios-sdk/nonce-exact", "the nonce it carries (\"some_nonce\"), in exact mode", token, sdk_keys, oidc,
         int(claims["iat"]) + 1, nonce={"mode": "exact", "value": claims["nonce"]})
    case("real/facebook-ios-sdk/strict-facebook-profile", "the Limited Login profile requires a kid: unknown_key",
         token, sdk_keys, {"provider": "facebook", "app_id": claims["aud"], "extra_issuers": [claims["iss"]]},
         int(claims["iat"]) + 1, "unknown_key", claim="kid")

    # ---- other real RS256 OIDC issuers (MystenLabs/fastcrypto zkLogin test vectors)
    zk = load("provider-tokens/other_oidc_rs256_fastcrypto_zklogin_test_vectors.json")
    write("tokens/other_oidc_rs256_fastcrypto_zklogin_test_vectors.json", zk)
    jwks = {"keys": [{"kty": "RSA", "kid": entry["kid"], "use": "sig", "alg": "RS256", "n": entry["n"], "e": "AQAB"}
                     for entry in zk]}
    write("keys/oidc-fastcrypto/jwks.json", jwks)
    for index, entry in enumerate(zk):
        token = entry["jwt"]
        claims = claims_of(token)
        slug = "".join(c if c.isalnum() else "-" for c in entry["provider"].lower()).strip("-")
        profile = {"provider": "oidc", "issuers": [claims["iss"]], "audiences": [claims["aud"]], "algorithms": ["RS256"]}
        standard_cases(f"real/oidc/{slug}-{index}", token, REL + "keys/oidc-fastcrypto/jwks.json", profile,
                       dict(profile, audiences=["another-client"]))

    write("cases.json", {
        "about": "Real provider tokens and their verdicts, written by Vectors/tools/import_provider_tokens.py. "
                 "Provenance and licences: SOURCES.md in this directory.",
        "schema": "Vectors/schema.json",
        "cases": cases,
    })
    print(f"wrote {len(cases)} cases to {os.path.relpath(os.path.join(OUT, 'cases.json'))}", file=sys.stderr)


if __name__ == "__main__":
    main()
