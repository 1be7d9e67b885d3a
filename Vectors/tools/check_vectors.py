#!/usr/bin/env python3
"""Independent checker for IDTokenKit's provider vectors: the generated ones (Vectors/generated/*.json) and the
real provider tokens' verdicts (Vectors/external/providers/cases.json).

This is a second implementation of the verification rules of DESIGN §2–§4, §6, written against the
`cryptography` package and the standard library only. It shares no code with IDTokenKit nor with the
generator (it does not import generate_vectors.py). For every case it recomputes the verdict from the token,
the keys, the profile, the time and the nonce, re-verifies the signature where the pipeline reaches it, and
compares with the case's "expect". It exits 1 on any disagreement.

Usage: python3 Vectors/tools/check_vectors.py [FILE...]
"""
import base64
import binascii
import glob
import hashlib
import hmac
import json
import os
import re
import sys
import warnings

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

# Real provider certificates may carry serial numbers that RFC 5280 forbids; only their keys matter here.
warnings.filterwarnings("ignore", message=".*serial number.*")

VECTORS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MAX_TOKEN_BYTES = 16 * 1024
MAX_DEPTH = 32
IMPLEMENTED = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384"}
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
LATEST_DATE = 253402300799  # 9999-12-31T23:59:59Z
B64URL = re.compile(r"^[A-Za-z0-9_-]*$")


class Reject(Exception):
    def __init__(self, code, claim=None):
        super().__init__(code)
        self.code = code
        self.claim = claim


# ------------------------------------------------------------------ strict decoding

def b64url_strict(segment):
    """Canonical unpadded base64url, or None."""
    if not B64URL.match(segment) or len(segment) % 4 == 1:
        return None
    try:
        data = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        return None
    if base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii") != segment:
        return None  # non-zero unused bits
    return data


def _no_duplicates(pairs):
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError("duplicate member " + key)
        seen.add(key)
    return dict(pairs)


def _depth(value):
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _check_strings(value):
    if isinstance(value, str):
        value.encode("utf-8")  # lone surrogates raise
        if "\x00" in value:
            raise ValueError("NUL")
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_strings(k)
            _check_strings(v)
    elif isinstance(value, list):
        for v in value:
            _check_strings(v)


def strict_object(data):
    """A JSON object from UTF-8 bytes: no duplicate members, valid UTF-8, depth-capped; else None."""
    try:
        text = data.decode("utf-8")
        value = json.loads(text, object_pairs_hook=_no_duplicates,
                           parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        _check_strings(value)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or _depth(value) > MAX_DEPTH:
        return None
    return value


# ------------------------------------------------------------------ keys

class Key:
    def __init__(self, kid, alg, public):
        self.kid, self.alg, self.public = kid, alg, public


def _b64int(text):
    data = b64url_strict(text) if isinstance(text, str) else None
    if data is None:
        raise ValueError("bad base64url integer")
    return int.from_bytes(data, "big")


def load_jwk(entry):
    if entry.get("use", "sig") != "sig" or any(k in entry for k in ("d", "p", "k")):
        return None
    kty = entry.get("kty")
    if kty == "RSA":
        public = rsa.RSAPublicNumbers(_b64int(entry["e"]), _b64int(entry["n"])).public_key()
        if public.key_size < 2048:
            return None
        return Key(entry.get("kid"), entry.get("alg", "RS256"), public)
    if kty == "EC" and entry.get("crv") == "P-256":
        public = ec.EllipticCurvePublicNumbers(_b64int(entry["x"]), _b64int(entry["y"]), ec.SECP256R1()).public_key()
        return Key(entry.get("kid"), entry.get("alg", "ES256"), public)
    return None


def load_keys(document):
    keys = []
    if "keys" in document:
        for entry in document["keys"]:
            try:
                key = load_jwk(entry)
            except (KeyError, ValueError):
                key = None
            if key:
                keys.append(key)
    else:
        for kid, pem in document.items():
            if not isinstance(pem, str) or not pem.startswith("-----BEGIN"):
                continue
            try:
                if "CERTIFICATE" in pem:
                    public = x509.load_pem_x509_certificate(pem.encode()).public_key()
                else:
                    public = serialization.load_pem_public_key(pem.encode())
            except ValueError:
                continue
            if isinstance(public, rsa.RSAPublicKey):
                if public.key_size < 2048:
                    continue
                keys.append(Key(kid, "RS256", public))
            elif isinstance(public, ec.EllipticCurvePublicKey):
                keys.append(Key(kid, "ES256", public))
    return keys


def resolve_keys(ref):
    if ref is None:
        return None
    if isinstance(ref, str):
        path = os.path.join(VECTORS, ref)
        if os.path.isdir(path):  # a directory of key files, merged; the first file naming a kid wins
            keys, seen = [], set()
            for name in sorted(os.listdir(path)):
                if name.endswith(".json"):
                    for key in resolve_keys(os.path.join(ref, name)):
                        if key.kid is None or key.kid not in seen:
                            seen.add(key.kid)
                            keys.append(key)
            return keys
        with open(path, encoding="utf-8") as f:
            ref = json.load(f)
    return load_keys(ref)


def signature_ok(key, alg, signing_input, signature):
    public = key.public
    try:
        if alg.startswith("RS") or alg.startswith("PS"):
            if not isinstance(public, rsa.RSAPublicKey) or len(signature) != (public.key_size + 7) // 8:
                return False
            digest = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[alg[2:]]
            if alg.startswith("RS"):
                public.verify(signature, signing_input, padding.PKCS1v15(), digest)
            else:
                public.verify(signature, signing_input, padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size), digest)
            return True
        if alg == "ES256":
            if len(signature) != 64:
                return False
            r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
            if not (1 <= r < P256_ORDER and 1 <= s < P256_ORDER):
                return False
            public.verify(encode_dss_signature(r, s), signing_input, ec.ECDSA(hashes.SHA256()))
            return True
    except InvalidSignature:
        return False
    return False


# ------------------------------------------------------------------ profiles

def profile_rules(p):
    provider = p["provider"]
    if provider in ("firebase", "firebase-session"):
        project = p["project_id"]
        prefix = "https://securetoken.google.com/" if provider == "firebase" else "https://session.firebase.google.com/"
        rules = dict(issuers=[prefix + project], audiences=[project], aud_array=False, algorithms={"RS256"},
                     require_kid=True, require_iat=True, require_auth_time=True, sub_max=128)
    elif provider == "apple":
        rules = dict(issuers=["https://appleid.apple.com"], audiences=p["client_ids"], aud_array=False,
                     algorithms={"RS256"}, require_kid=True, require_iat=True, require_auth_time=False, sub_max=None)
    elif provider == "facebook":
        rules = dict(issuers=["https://www.facebook.com"] + p.get("extra_issuers", []), audiences=[p["app_id"]],
                     aud_array=False, algorithms={"RS256"}, require_kid=True, require_iat=True,
                     require_auth_time=False, sub_max=None)
    elif provider == "firebase-app-check":
        number = p["project_number"]
        audiences = ["projects/" + number] + (["projects/" + p["project_id"]] if p.get("project_id") else [])
        rules = dict(issuers=["https://firebaseappcheck.googleapis.com/" + number], audiences=audiences, aud_array=True,
                     aud_array_required=True, algorithms={"RS256"}, require_kid=True, require_iat=True,
                     require_auth_time=False, sub_max=None, typ="JWT")
    elif provider == "apple-notification":
        rules = dict(issuers=["https://appleid.apple.com"], audiences=p["client_ids"], aud_array=False,
                     algorithms={"RS256"}, require_kid=True, require_iat=True, require_auth_time=False, sub_max=None,
                     require_sub=False, lifetime_without_exp=24 * 3600)
    elif provider == "google":
        rules = dict(issuers=["https://accounts.google.com", "accounts.google.com"], audiences=p["client_ids"],
                     aud_array=False, algorithms={"RS256"}, require_kid=True, require_iat=True, require_auth_time=False,
                     sub_max=None)
    elif provider == "oidc":
        rules = dict(issuers=p["issuers"], audiences=p["audiences"], aud_array=True,
                     algorithms=set(p.get("algorithms", ["RS256", "ES256"])), require_kid=False,
                     require_iat=False, require_auth_time=False, sub_max=None)
    elif provider == "github-actions":
        rules = dict(issuers=["https://token.actions.githubusercontent.com"], audiences=p["audiences"], aud_array=True,
                     algorithms={"RS256"}, require_kid=True, require_iat=True, require_auth_time=False, sub_max=None)
    elif provider == "entra":
        tenants = [t.lower() for t in p.get("tenants", [])]
        issuers = ["https://login.microsoftonline.com/" + t + "/v2.0" for t in tenants]
        if p.get("entra_v1"):
            issuers += ["https://sts.windows.net/" + t + "/" for t in tenants]
        patterns = [("https://login.microsoftonline.com/", "/v2.0")] + ([("https://sts.windows.net/", "/")] if p.get("entra_v1") else [])
        rules = dict(issuers=issuers, issuer_patterns=patterns if p.get("any_tenant") else [], tenant_issuers=patterns,
                     audiences=p["audiences"], aud_array=False, algorithms={"RS256"}, require_kid=True, require_iat=True,
                     require_auth_time=False, sub_max=None)
    elif provider == "cognito-access":
        rules = dict(issuers=p["issuers"], audiences=p["audiences"], audience_claim="client_id", aud_array=False, algorithms={"RS256"},
                     require_kid=True, require_iat=True, require_auth_time=False, sub_max=None)
    elif provider == "cognito":
        rules = dict(issuers=p["issuers"], audiences=p["audiences"], aud_array=False, algorithms={"RS256"}, require_kid=True,
                     require_iat=True, require_auth_time=False, sub_max=None)
    else:
        raise ValueError("unknown provider " + provider)
    if "require_kid" in p:
        rules["require_kid"] = p["require_kid"]
    rules["provider"] = provider
    rules["leeway"] = p.get("leeway", 60)
    return rules


def numeric_date(claims, name, required):
    if name not in claims:
        if required:
            raise Reject("invalid_claim", name)
        return None
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Reject("invalid_claim", name)
    if value != value or value in (float("inf"), float("-inf")) or value < 0 or value > LATEST_DATE:
        raise Reject("invalid_claim", name)
    return value


def flexible_bool(value):
    return isinstance(value, bool) or value in ("true", "false")


APPLE_EVENT_TYPES = ("email-disabled", "email-enabled", "consent-revoked", "account-delete")


def check_apple_event(claims):
    """A Sign in with Apple server notification's `events`: a string holding one JSON object of a known type."""
    if "events" not in claims or not isinstance(claims["events"], str):
        raise Reject("invalid_claim", "events")
    try:
        event = json.loads(claims["events"], object_pairs_hook=_no_duplicates)
    except ValueError:
        raise Reject("invalid_claim", "events")
    if not isinstance(event, dict) or event.get("type") not in APPLE_EVENT_TYPES:
        raise Reject("invalid_claim", "events")
    if not isinstance(event.get("sub"), str) or event["sub"] == "":
        raise Reject("invalid_claim", "events")
    time = event.get("event_time")
    if isinstance(time, bool) or not isinstance(time, int) or time < 0:
        raise Reject("invalid_claim", "events")
    if "email" in event and not isinstance(event["email"], str):
        raise Reject("invalid_claim", "events")
    if "is_private_email" in event and not flexible_bool(event["is_private_email"]):
        raise Reject("invalid_claim", "events")
    if event["type"] in APPLE_EVENT_TYPES[:2] and ("email" not in event or "is_private_email" not in event):
        raise Reject("invalid_claim", "events")


# ------------------------------------------------------------------ the verdict

def verdict(case):
    """Returns (error_code_or_None, claim_or_None, signature_checked)."""
    profile = case["profile"]
    rules = profile_rules(profile)
    token = case["token"]
    now = case["at"]
    leeway = rules["leeway"]
    signature_checked = False
    try:
        # 1. size and shape
        if len(token.encode("utf-8")) > MAX_TOKEN_BYTES:
            raise Reject("token_too_large")
        parts = token.split(".")
        if len(parts) != 3:
            raise Reject("malformed")
        h64, p64, s64 = parts
        if not h64:
            raise Reject("malformed")
        signature = b64url_strict(s64)
        if signature is None:
            raise Reject("malformed")
        # 2. header
        header_bytes = b64url_strict(h64)
        header = strict_object(header_bytes) if header_bytes is not None else None
        if header is None:
            raise Reject("malformed")
        if "alg" not in header or not isinstance(header["alg"], str) or header["alg"] not in IMPLEMENTED:
            raise Reject("algorithm_not_allowed", "alg")
        if "crit" in header:
            raise Reject("unsupported_header", "crit")
        if "kid" in header and not isinstance(header["kid"], str):
            raise Reject("unknown_key", "kid")
        if not s64:
            raise Reject("bad_signature")
        payload_bytes = b64url_strict(p64)
        if payload_bytes is None:
            raise Reject("malformed")
        # 3. key
        keys = resolve_keys(case["keys"])
        if keys is None:
            raise Reject("keys_unavailable")
        alg = header["alg"]
        if alg not in rules["algorithms"]:
            raise Reject("algorithm_not_allowed", "alg")
        if "kid" in header:
            matches = [k for k in keys if k.kid == header["kid"]]
            if not matches:
                raise Reject("unknown_key", "kid")
            key = matches[0]
        else:
            if rules["require_kid"] or len(keys) != 1:
                raise Reject("unknown_key", "kid")
            key = keys[0]
        if key.alg != alg:
            raise Reject("algorithm_not_allowed", "alg")
        # 4. signature over the received bytes
        signature_checked = True
        if not signature_ok(key, alg, (h64 + "." + p64).encode("ascii"), signature):
            raise Reject("bad_signature")
        # 5. claims: audience first (like the Firebase Admin SDK, so that a token of another project is reported
        # as the wrong audience), then issuer, times, subject and the provider's own claims
        claims = strict_object(payload_bytes)
        if claims is None:
            raise Reject("malformed")
        if "typ" in rules and header.get("typ") != rules["typ"]:
            raise Reject("unsupported_header", "typ")
        name = rules.get("audience_claim", "aud")   # a Cognito access token names its audience in client_id
        if name not in claims:
            raise Reject("invalid_claim", name)
        aud = claims[name]
        if isinstance(aud, str):
            if rules.get("aud_array_required") or aud not in rules["audiences"]:
                raise Reject("wrong_audience", name)
        elif isinstance(aud, list):
            if not rules["aud_array"]:
                raise Reject("wrong_audience", name)
            if any(not isinstance(a, str) for a in aud):
                raise Reject("invalid_claim", name)
            if not any(a in rules["audiences"] for a in aud):
                raise Reject("wrong_audience", name)
        else:
            raise Reject("invalid_claim", name)
        iss = claims.get("iss")
        if "iss" not in claims or not isinstance(iss, str):
            raise Reject("invalid_claim", "iss")
        if iss not in rules["issuers"] and not any(
                iss.startswith(head) and iss.endswith(tail) and len(iss) > len(head) + len(tail)
                and "/" not in iss[len(head):len(iss) - len(tail)] for head, tail in rules.get("issuer_patterns", [])):
            raise Reject("wrong_issuer", "iss")
        lifetime = rules.get("lifetime_without_exp")
        exp = numeric_date(claims, "exp", lifetime is None)
        if exp is not None and now >= exp + leeway:
            raise Reject("expired", "exp")
        nbf = numeric_date(claims, "nbf", False)
        if nbf is not None and now < nbf - leeway:
            raise Reject("not_yet_valid", "nbf")
        iat = numeric_date(claims, "iat", rules["require_iat"])
        if iat is not None and iat > now + leeway:
            raise Reject("issued_in_future", "iat")
        auth_time = numeric_date(claims, "auth_time", rules["require_auth_time"])
        if auth_time is not None and auth_time > now + leeway:
            raise Reject("issued_in_future", "auth_time")
        if exp is None and now >= iat + lifetime + leeway:
            raise Reject("expired", "iat")
        sub = claims.get("sub")
        if rules.get("require_sub", True):
            if not isinstance(sub, str) or sub == "":
                raise Reject("invalid_claim", "sub")
            if rules["sub_max"] is not None and len(sub) > rules["sub_max"]:
                raise Reject("invalid_claim", "sub")
        provider = rules["provider"]
        if provider in ("firebase", "firebase-session"):
            fb = claims.get("firebase")
            if "firebase" in claims:
                if not isinstance(fb, dict):
                    raise Reject("invalid_claim", "firebase")
                for name in ("sign_in_provider", "tenant", "sign_in_second_factor"):
                    if name in fb and not isinstance(fb[name], str):
                        raise Reject("invalid_claim", "firebase." + name)
                if "identities" in fb and not isinstance(fb["identities"], dict):
                    raise Reject("invalid_claim", "firebase.identities")
            fb = fb if isinstance(fb, dict) else {}
            if profile.get("tenant") is not None and fb.get("tenant") != profile["tenant"]:
                raise Reject("tenant_mismatch", "firebase.tenant")
            allowed = profile.get("allowed_sign_in_providers")
            if allowed is not None and fb.get("sign_in_provider") not in allowed:
                raise Reject("provider_not_allowed", "firebase.sign_in_provider")
            revoked = profile.get("revoked_before") or {}
            if sub in revoked and auth_time < revoked[sub]:
                raise Reject("revoked", "auth_time")
        elif provider == "apple":
            for name in ("email_verified", "is_private_email", "nonce_supported"):
                if name in claims and not flexible_bool(claims[name]):
                    raise Reject("invalid_claim", name)
            if "real_user_status" in claims:
                status = claims["real_user_status"]
                if isinstance(status, bool) or not isinstance(status, int) or status not in (0, 1, 2):
                    raise Reject("invalid_claim", "real_user_status")
            if "email" in claims and not isinstance(claims["email"], str):
                raise Reject("invalid_claim", "email")
        elif provider == "facebook":
            jti = claims.get("jti")
            if not isinstance(jti, str) or jti == "":
                raise Reject("invalid_claim", "jti")
        elif provider == "firebase-app-check":
            if profile.get("app_ids") and sub not in profile["app_ids"]:
                raise Reject("invalid_claim", "sub")
        elif provider == "apple-notification":
            jti = claims.get("jti")
            if not isinstance(jti, str) or jti == "":
                raise Reject("invalid_claim", "jti")
            check_apple_event(claims)
        elif provider == "google":
            if "email_verified" in claims and not flexible_bool(claims["email_verified"]):
                raise Reject("invalid_claim", "email_verified")
            for name in ("email", "hd"):
                if name in claims and not isinstance(claims[name], str):
                    raise Reject("invalid_claim", name)
            if "azp" in claims:
                if not isinstance(claims["azp"], str):
                    raise Reject("invalid_claim", "azp")
                if claims["azp"] not in rules["audiences"]:
                    raise Reject("wrong_audience", "azp")
            domains = profile.get("hosted_domains")
            if domains and claims.get("hd") not in domains:
                raise Reject("invalid_claim", "hd")
        elif provider == "entra":
            tid = claims.get("tid")
            if "tid" not in claims or not isinstance(tid, str) or not re.fullmatch(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", tid):
                raise Reject("invalid_claim", "tid")
            tenants = [t.lower() for t in profile.get("tenants", [])]
            if not profile.get("any_tenant") and tid.lower() not in tenants:
                raise Reject("tenant_mismatch", "tid")
            if iss not in [head + tid + tail for head, tail in rules["tenant_issuers"]]:
                raise Reject("wrong_issuer", "iss")
        elif provider == "cognito":
            if claims.get("token_use") != "id":
                raise Reject("invalid_claim", "token_use")
        elif provider == "cognito-access":
            if claims.get("token_use") != "access":
                raise Reject("invalid_claim", "token_use")
        # Claims the profile requires: every one listed must match one of its values, * matching any run of
        # characters (a regular expression here, the Swift rule scans the bytes).
        for name, values in (profile.get("required_claims") or {}).items():
            if name not in claims:
                raise Reject("invalid_claim", name)
            value = claims[name]
            if isinstance(value, bool):
                texts = ["true" if value else "false"]
            elif isinstance(value, int):
                texts = [str(value)]
            elif isinstance(value, str):
                texts = [value]
            elif isinstance(value, list) and all(isinstance(item, str) for item in value):
                texts = value
            else:
                raise Reject("invalid_claim", name)
            patterns = [re.compile(".*".join(re.escape(part) for part in v.split("*")), re.DOTALL) for v in values]
            if isinstance(value, bool) or isinstance(value, int):
                matched = texts[0] in values
            else:
                matched = any(p.fullmatch(text) for p in patterns for text in texts)
            if not matched:
                raise Reject("invalid_claim", name)
        # 6. nonce, then replay
        expected = case.get("nonce")
        if expected is not None:
            want = expected["value"]
            if expected["mode"] == "sha256hex":
                want = hashlib.sha256(want.encode("utf-8")).hexdigest()
            got = claims.get("nonce")
            if not isinstance(got, str) or not hmac.compare_digest(got.encode("utf-8"), want.encode("utf-8")):
                raise Reject("nonce_mismatch", "nonce")
        if (case.get("replay") or {}).get("seen_before"):
            raise Reject("replayed")
    except Reject as rejection:
        return rejection.code, rejection.claim, signature_checked
    return None, None, signature_checked


def main(paths):
    files = paths or (sorted(glob.glob(os.path.join(VECTORS, "generated", "*.json")))
                      + sorted(glob.glob(os.path.join(VECTORS, "external", "providers", "cases.json"))))
    if not files:
        print("no vector files found", file=sys.stderr)
        return 1
    total = disagreements = signatures = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for case in doc["cases"]:
            total += 1
            code, claim, checked = verdict(case)
            signatures += checked
            expect = case["expect"]
            problems = []
            if expect["valid"] != (code is None) or expect["error"] != code:
                problems.append(f"expected {expect['error'] or 'valid'}, independent check says {code or 'valid'}")
            if code is not None and "claim" in expect and expect["claim"] != claim:
                problems.append(f"expected claim {expect['claim']}, independent check says {claim}")
            if problems:
                disagreements += 1
                print(f"DISAGREE {case['id']}: " + "; ".join(problems), file=sys.stderr)
    print(f"check_vectors: {total} cases in {len(files)} files, {signatures} signatures re-verified, "
          f"{disagreements} disagreements")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
