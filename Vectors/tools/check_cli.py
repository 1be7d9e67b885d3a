#!/usr/bin/env python3
"""Runs the `idtoken verify --json` command line over the vector cases and checks that it reproduces each
case's verdict: the JSON's "valid" and error code, and the exit status (0 valid, 1 invalid, 3 keys unavailable).

Usage: python3 Vectors/tools/check_cli.py PATH-TO-idtoken [CASE-FILE...]
Default: Vectors/external/providers/cases.json (every real provider token). Generated case files
(Vectors/generated/*.json) can be given too; cases with inline keys, a replay cache or revocation times, which
the command line cannot express, are skipped.
"""
import glob
import json
import os
import subprocess
import sys

VECTORS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def arguments(case):
    p = case["profile"]
    args = ["verify", case["token"], "--provider", p["provider"], "--json", "--at", str(case["at"])]
    if p["provider"] in ("firebase", "firebase-session"):
        args += ["--project-id", p["project_id"]]
        if p.get("tenant"):
            args += ["--tenant", p["tenant"]]
        for name in p.get("allowed_sign_in_providers") or []:
            args += ["--allow-sign-in-provider", name]
    elif p["provider"] in ("apple", "apple-notification", "google"):
        for client in p["client_ids"]:
            args += ["--audience", client]
        for domain in p.get("hosted_domains", []):
            args += ["--hosted-domain", domain]
    elif p["provider"] == "firebase-app-check":
        args += ["--project-number", p["project_number"]]
        if p.get("project_id"):
            args += ["--project-id", p["project_id"]]
        for app in p.get("app_ids", []):
            args += ["--app-id", app]
    elif p["provider"] == "facebook":
        args += ["--audience", p["app_id"]]
        for issuer in p.get("extra_issuers", []):
            args += ["--issuer", issuer]
    else:
        for issuer in p.get("issuers", []):
            args += ["--issuer", issuer]
        for audience in p["audiences"]:
            args += ["--audience", audience]
        for alg in p.get("algorithms", []):
            args += ["--algorithm", alg]
    for tenant in p.get("tenants", []):
        args += ["--tenant", tenant]
    if p.get("any_tenant"):
        args.append("--any-tenant")
    if p.get("entra_v1"):
        args.append("--entra-v1")
    for name, values in (p.get("required_claims") or {}).items():
        for value in values:
            args += ["--require-claim", f"{name}={value}"]
    if "leeway" in p:
        args += ["--leeway", str(p["leeway"])]
    nonce = case.get("nonce")
    if nonce:
        args += ["--nonce" if nonce["mode"] == "sha256hex" else "--nonce-exact", nonce["value"]]
    args += ["--keys", os.path.join(VECTORS, case["keys"])]
    return args


def runnable(case):
    p = case["profile"]
    return (isinstance(case["keys"], str) and not case.get("replay") and "revoked_before" not in p
            and "require_kid" not in p)


def check_exit_statuses(binary):
    """Bad usage and configuration exit 2; a key source with no keys at all, or that cannot be fetched, exits 3."""
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        empty = os.path.join(scratch, "empty.json")
        with open(empty, "w") as f:
            f.write('{"keys":[]}')
        keys = os.path.join(VECTORS, "generated", "keysets", "apple_jwks.json")
        with open(os.path.join(VECTORS, "generated", "apple.json")) as f:
            well_formed = json.load(f)["cases"][0]["token"]
        checks = [
            (["verify", "a.b.c", "--provider", "firebase", "--keys", keys], 2, "firebase without --project-id"),
            (["verify", "a.b.c", "--provider", "apple", "--audience", "x", "--leeway", "301", "--keys", keys], 2, "leeway 301"),
            (["verify", "a.b.c", "--provider", "apple", "--audience", "x", "--keys", "/nonexistent/keys.json"], 2, "missing key file"),
            (["verify", "a.b.c", "--provider", "apple", "--audience", "x", "--keys", "http://example.com/keys"], 2, "key URL not https"),
            (["verify", well_formed, "--provider", "apple", "--audience", "x", "--keys", "http://127.0.0.1:9/keys"], 3, "key URL unreachable"),
            (["verify", "a.b.c", "--provider", "apple", "--audience", "x", "--nonce", "n", "--nonce-exact", "n", "--keys", keys], 2, "two nonces"),
            (["verify", "a.b.c", "--provider", "nobody", "--audience", "x", "--keys", keys], 2, "unknown provider"),
            (["verify", "a.b.c", "--provider", "apple", "--audience", "x", "--keys", empty], 3, "no keys at all"),
            (["verify", "a.b.c", "--provider", "apple", "--audience", "x", "--keys", keys], 1, "a malformed token"),
            # Options and inputs are checked before any key is fetched: without --keys these would fetch Apple's
            # keys (and exit 3 with no network) if the check came later.
            (["verify", well_formed, "--provider", "apple", "--audience", "x", "--at", "soon"], 2, "bad --at, before any fetch"),
            (["verify", well_formed, "--provider", "apple", "--audience", "x", "--algorithm", "HS256"], 2, "HMAC algorithm, before any fetch"),
            (["audit", "/no/such/file", "--provider", "apple", "--audience", "x"], 2, "audit of a missing log, before any fetch"),
            (["audit", os.devnull, "--provider", "apple", "--audience", "x", "--at", "soon"], 2, "audit with a bad --at, before any fetch"),
            (["audit", os.devnull, "--provider", "apple", "--audience", "x", "--leeway", "301"], 2, "audit with leeway 301, before any fetch"),
            (["verify", "a.b.c", "--provider", "facebook", "--audience", "1", "--audience", "2", "--keys", keys], 1,
             "verify takes a production and a test Facebook App ID"),
            (["audit", os.devnull, "--provider", "facebook", "--audience", "1", "--audience", "2", "--keys", keys], 0,
             "audit takes a production and a test Facebook App ID"),
            (["nonce", "--length", "8"], 2, "nonce too short"),
            (["nonce", "--length", "40"], 0, "nonce"),
        ]
        failures = 0
        for args, want, label in checks:
            status = subprocess.run([binary] + args, capture_output=True, text=True).returncode
            if status != want:
                failures += 1
                print(f"FAIL exit status for {label}: {status}, expected {want}", file=sys.stderr)
        return failures


def check_same_time(binary):
    """`verify --at` and `audit --at` read a time the same way, also RFC 3339 with a space and no offset (UTC)."""
    import datetime
    with open(os.path.join(VECTORS, "generated", "facebook.json")) as f:
        cases = {c["id"]: c for c in json.load(f)["cases"]}
    failures = 0
    for case_id in ("facebook/valid", "facebook/exp-boundary-plus-1"):
        case = cases[case_id]
        for delta in (0, 3 * 3600, -3600):
            at = datetime.datetime.fromtimestamp(case["at"] + delta, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
            args = arguments(case)
            args[args.index("--at") + 1] = at
            verify = subprocess.run([binary] + args, capture_output=True, text=True)
            audit = subprocess.run([binary, "audit", "-", "--provider", "facebook", "--audience", case["profile"]["app_id"],
                                    "--keys", os.path.join(VECTORS, case["keys"]), "--at", at],
                                   input=case["token"] + "\n", capture_output=True, text=True)
            try:
                verdict = json.loads(verify.stdout)
                record = json.loads(audit.stdout.splitlines()[0])
                same = verdict["valid"] == record["valid"] and (verdict["valid"] or verdict["error"]["code"] == record["error"])
            except (ValueError, KeyError, IndexError) as error:
                same = False
                print(f"FAIL --at {at!r}: unreadable output ({error}) {verify.stderr[:200]!r} {audit.stderr[:200]!r}", file=sys.stderr)
            if not same:
                failures += 1
                print(f"FAIL {case_id} --at {at!r}: verify and audit disagree", file=sys.stderr)
    return failures


# One file a provider.
GENERATED = sorted(os.path.basename(path)[:-5] for path in glob.glob(os.path.join(VECTORS, "generated", "*.json")))


def check_inspect(binary):
    """`idtoken inspect` names the kind of each generated file's valid token, and the options it suggests verify that
    token with `idtoken verify`; given another provider's options it says what the token is and exits 1."""
    failures = 0

    def fail(message):
        nonlocal failures
        failures += 1
        print("FAIL inspect: " + message, file=sys.stderr)

    tokens = {}
    for name in GENERATED:
        with open(os.path.join(VECTORS, "generated", name + ".json")) as f:
            case = next(c for c in json.load(f)["cases"] if c["id"] == name + "/valid")
        tokens[name] = case["token"]
        result = subprocess.run([binary, "inspect", "-", "--json", "--at", str(case["at"])], input=case["token"],
                                capture_output=True, text=True)
        try:
            out = json.loads(result.stdout)
        except ValueError:
            fail(f"{name}: unreadable output {result.stdout[:200]!r} {result.stderr[:200]!r}")
            continue
        if out.get("kind") != name or out.get("verified") is not False or result.returncode != 0:
            fail(f"{name}: kind {out.get('kind')!r}, verified {out.get('verified')!r}, exit {result.returncode}")
            continue
        options = out["options"]
        if "--jwks-url" in options:
            index = options.index("--jwks-url")
            options = options[:index] + options[index + 2:]
        verify = subprocess.run([binary, "verify", case["token"]] + options
                                + ["--keys", os.path.join(VECTORS, case["keys"]), "--at", str(case["at"]), "--json"],
                                capture_output=True, text=True)
        try:
            verdict = json.loads(verify.stdout)
        except ValueError:
            verdict = {}
        if verdict.get("valid") is not True:
            fail(f"{name}: the suggested options {options} do not verify the token: {verify.stdout[:300]!r} {verify.stderr[:200]!r}")
        if name == "apple-notification" and (verdict.get("event") or {}).get("type") != "email-disabled":
            fail(f"apple-notification: verify --json prints no event: {verify.stdout[:300]!r}")
    result = subprocess.run([binary, "inspect", tokens["google"], "--provider", "firebase", "--project-id", "my-app", "--json"],
                            capture_output=True, text=True)
    try:
        findings = json.loads(result.stdout)["findings"]
    except (ValueError, KeyError):
        findings = []
    if result.returncode != 1 or not findings or "signInWithCredential" not in findings[0]["message"]:
        fail(f"a Google token inspected as Firebase: exit {result.returncode}, {result.stdout[:300]!r}")
    for text, kind, status in (("EAAGm0PX4ZCpsBAKZC0ZCqZBvQ7ZB8ZAZCZBZC0ZD", "facebook-access-token", 0), ("not a token", "unknown", 1)):
        result = subprocess.run([binary, "inspect", text, "--json"], capture_output=True, text=True)
        try:
            got = json.loads(result.stdout)["kind"]
        except (ValueError, KeyError):
            got = None
        if got != kind or result.returncode != status:
            fail(f"{text!r}: kind {got!r}, exit {result.returncode}; expected {kind}, {status}")
    if subprocess.run([binary, "inspect", "a.b.c", "--provider", "firebase"], capture_output=True).returncode != 2:
        fail("--provider firebase without --project-id is not a usage error")
    return failures


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    files = sys.argv[2:] or [os.path.join(VECTORS, "external", "providers", "cases.json")]
    total = failures = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            cases = [c for c in json.load(f)["cases"] if runnable(c)]
        for case in cases:
            total += 1
            result = subprocess.run([binary] + arguments(case), capture_output=True, text=True)
            expect = case["expect"]
            want_status = 0 if expect["valid"] else (3 if expect["error"] == "keys_unavailable" else 1)
            problem = None
            try:
                out = json.loads(result.stdout)
                got = None if out["valid"] else out["error"]["code"]
                if out["valid"] != expect["valid"] or got != expect["error"]:
                    problem = f"expected {expect['error'] or 'valid'}, the tool says {got or 'valid'}"
                elif result.returncode != want_status:
                    problem = f"exit status {result.returncode}, expected {want_status}"
            except (ValueError, KeyError) as error:
                problem = f"unreadable output ({error}): {result.stdout[:200]!r} {result.stderr[:200]!r}"
            if problem:
                failures += 1
                print(f"FAIL {case['id']}: {problem}", file=sys.stderr)
    print(f"check_cli: idtoken verify --json reproduced {total - failures} of {total} verdicts")
    status_failures = check_exit_statuses(binary)
    print(f"check_cli: exit statuses for usage, configuration and key errors: {status_failures} wrong")
    time_failures = check_same_time(binary)
    print(f"check_cli: verify --at and audit --at agree on \"YYYY-MM-DD HH:MM:SS\": {time_failures} wrong")
    inspect_failures = check_inspect(binary)
    print(f"check_cli: idtoken inspect names each generated kind and suggests options that verify it: {inspect_failures} wrong")
    return 1 if failures or status_failures or time_failures or inspect_failures or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
