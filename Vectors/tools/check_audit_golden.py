#!/usr/bin/env python3
"""Keeps `idtoken audit`'s output byte for byte: each corpus of the repository is audited the same way every time
and the SHA-256 of what the audit writes (the NDJSON or CSV verdicts, the summary without its timings) is compared
with Vectors/samples/audit-golden.json. A change to the audit's per-record path that changes any byte of any
output fails here, naming the corpus; a change meant to alter the output rewrites the file with --write, and the
diff of that file shows which outputs moved.

Corpora: the sample log (NDJSON, CSV, gzip, pipe mode, three shards, replays, the summary), and every generated
vector a record can carry, in one configuration of every provider (each with its own `at` and nonce).

Usage: python3 Vectors/tools/check_audit_golden.py PATH/TO/idtoken [--write]
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.normpath(os.path.join(HERE, ".."))
SAMPLES = os.path.join(VECTORS, "samples")
GOLDEN = os.path.join(SAMPLES, "audit-golden.json")
# What a run measures rather than decides.
TIMINGS = ("elapsedSeconds", "tokensPerSecond", "cpuSeconds", "tokensPerCPUSecond")


def audit(binary, args, stdin=None):
    run = subprocess.run([binary, "audit", *args, "--threads", "1"], input=stdin, capture_output=True, timeout=300)
    if run.returncode not in (0, 1):
        raise SystemExit("idtoken audit %s failed (%d): %s" % (" ".join(args), run.returncode, run.stderr.decode()[-2000:]))
    return run.stdout


def summary(binary, args, stdin=None):
    """The summary (JSON), without its timings, and the verdicts."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        verdicts = audit(binary, args + ["--summary", f.name], stdin)
        document = json.load(open(f.name))
    for key in TIMINGS:
        document.pop(key, None)
    return json.dumps(document, sort_keys=True).encode(), verdicts


def generated_corpus(work):
    """Every generated case a record can carry, under one configuration: each provider's base profile and keys."""
    profiles, records = [], []
    names = sorted(n[:-5] for n in os.listdir(os.path.join(VECTORS, "generated")) if n.endswith(".json"))
    for name in names:
        with open(os.path.join(VECTORS, "generated", name + ".json")) as f:
            cases = json.load(f)["cases"]
        base = cases[0]
        p = base["profile"]
        profile = {"name": name, "provider": p["provider"], "keys": os.path.join(VECTORS, base["keys"])}
        for member, key in (("project_id", "projectId"), ("project_number", "projectNumber"), ("app_id", "appId")):
            if member in p:
                profile[key] = p[member]
        for member in ("client_ids", "audiences"):
            if member in p:
                profile["audiences"] = p[member]
        if "issuers" in p:
            profile["issuers"] = p["issuers"]
        if "tenants" in p:
            profile["tenant"] = p["tenants"]
        if "required_claims" in p:
            profile["claims"] = p["required_claims"]
        if "algorithms" in p:
            profile["algorithms"] = p["algorithms"]
        profiles.append(profile)
        for case in cases:
            if case["profile"] != p or case["keys"] != base["keys"] or case.get("replay"):
                continue
            record = {"token": case["token"], "at": case["at"], "id": case["id"]}
            if case.get("nonce"):
                record["nonce"] = case["nonce"]["value"]
            records.append(json.dumps(record))
    config = os.path.join(work, "generated.json")
    with open(config, "w") as f:
        json.dump({"profiles": profiles}, f)
    log = os.path.join(work, "generated.ndjson")
    with open(log, "w") as f:
        f.write("\n".join(records) + "\n")
    return config, log


def outputs(binary, work):
    sample, config = os.path.join(SAMPLES, "sample.log"), os.path.join(SAMPLES, "audit-config.json")
    out = {}
    out["sample summary"], out["sample ndjson"] = summary(binary, [sample, "--config", config])
    out["sample csv"] = audit(binary, [sample, "--config", config, "--format", "csv"])
    out["sample gzip ndjson"] = audit(binary, [sample + ".gz", "--config", config])
    out["sample replay summary"], out["sample replay ndjson"] = summary(binary, [sample, "--config", config, "--replay"])
    with open(sample, "rb") as f:
        out["sample pipe"] = audit(binary, ["-", "--config", config, "--pipe"], stdin=f.read())
    for shard in range(3):
        out["sample shard %d/3" % shard] = audit(binary, [sample, "--config", config, "--shard", "%d/3" % shard])
    generated_config, generated_log = generated_corpus(work)
    out["generated summary"], out["generated ndjson"] = summary(binary, [generated_log, "--config", generated_config])
    return {name: {"sha256": hashlib.sha256(data).hexdigest(), "lines": data.count(b"\n")} for name, data in out.items()}


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        actual = outputs(binary, work)
    if "--write" in sys.argv[2:]:
        with open(GOLDEN, "w") as f:
            json.dump(actual, f, indent=1, sort_keys=True)
            f.write("\n")
        print("check_audit_golden: wrote %d outputs to %s" % (len(actual), os.path.relpath(GOLDEN)))
        return
    with open(GOLDEN) as f:
        golden = json.load(f)
    moved = [name for name in sorted(set(golden) | set(actual)) if golden.get(name) != actual.get(name)]
    for name in moved:
        print("FAIL %s: %s, expected %s" % (name, actual.get(name), golden.get(name)), file=sys.stderr)
    print("check_audit_golden: %d outputs, %d byte-identical to %s, %d moved"
          % (len(actual), len(actual) - len(moved), os.path.relpath(GOLDEN), len(moved)))
    if moved:
        print("an intended change rewrites the file: python3 Vectors/tools/check_audit_golden.py IDTOKEN --write", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
