#!/usr/bin/env python3
"""Runs `idtoken audit` on the bundled sample (Vectors/samples/) and checks what a user sees against what the
generator computed independently (expected-summary.json): the counts, the exit statuses, the NDJSON and CSV
outputs (read back with Python's own json and csv modules), gzip input, replays, and a truncated gzip file.

Usage: python3 Vectors/tools/check_audit_cli.py PATH/TO/idtoken
Prints "N passed, M failed" and exits non-zero when a check fails.
"""
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.normpath(os.path.join(HERE, "..", "samples"))
FIELDS = ["line", "id", "valid", "error", "iss", "sub", "aud", "kid", "exp", "iat", "at", "message"]

passed, failed = 0, 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name} {detail}", file=sys.stderr)


def audit(binary, *args):
    return subprocess.run([binary, "audit", *args], capture_output=True, text=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_redis_store(binary, log, config, expected, tmp):
    """--replay-store against a real redis-server on a loopback port: replays within the log, then a second
    audit finds every accepted token already in the shared store; with the server gone the audit stops (exit 1)."""
    server = shutil.which("redis-server")
    check("redis-server is installed (scripts/setup.sh installs it)", server is not None)
    if server is None:
        return
    port = free_port()
    process = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                "--dir", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        store = f"redis://127.0.0.1:{port}/5"
        first = audit(binary, log, "--config", config, "--replay-store", store, "--summary", "-", "--output", os.devnull)
        check("redis store: exit 0", first.returncode == 0, first.stderr)
        summary = json.loads(first.stdout or "{}")
        check("redis store: replays within the log", summary.get("replays", {}).get("count") == expected["replaysWithReplayOption"], first.stdout[:300])
        second = audit(binary, log, "--config", config, "--replay-store", store, "--summary", "-", "--output", os.devnull)
        summary = json.loads(second.stdout or "{}")
        check("redis store: a second audit sees every accepted token as a replay",
              summary.get("valid") == 0 and summary.get("replays", {}).get("count") == expected["valid"], second.stdout[:300])
    finally:
        process.terminate()
        process.wait(timeout=10)
    down = audit(binary, log, "--config", config, "--replay-store", f"redis://127.0.0.1:{port}/5", "--output", os.devnull)
    check("redis store down: the audit stops with exit 1", down.returncode == 1 and "replay store" in down.stderr, down.stderr)


def check_streaming_memory(binary, log, config, expected, tmp, megabytes=128):
    """A log twice the memory budget, written into the audit's standard input as it is produced (never on disk):
    every record is audited, with the sample's verdicts on every pass, and the audit process's own peak resident
    memory (its rusage, apart from everything else) stays under the 100 MB budget."""
    with open(log, "rb") as f:
        data = f.read()
    if not data.endswith(b"\n"):
        data += b"\n"
    passes = (megabytes << 20) // len(data)
    summary_path = os.path.join(tmp, "stream.json")
    with open(os.path.join(tmp, "stream.err"), "w") as err:
        proc = subprocess.Popen([binary, "audit", "-", "--config", config, "--threads", "2", "--output", os.devnull,
                                 "--summary", summary_path], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)
        for _ in range(passes):
            proc.stdin.write(data)
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
    peak_mb = usage.ru_maxrss / 1024  # Linux: kilobytes
    check("streamed log: exit 0", os.waitstatus_to_exitcode(status) == 0, open(os.path.join(tmp, "stream.err")).read()[-500:])
    summary = json.load(open(summary_path))
    check("streamed log: every record", summary["records"] == expected["records"] * passes, f"{summary['records']} of {expected['records'] * passes}")
    check("streamed log: the sample's verdicts on every pass", summary["valid"] == expected["valid"] * passes)
    check(f"streamed log: {passes * len(data) >> 20} MB in under 100 MB resident", peak_mb < 100, f"peak {peak_mb:.0f} MB")
    print(f"streamed {passes * len(data) >> 20} MB through standard input: {summary['records']} records, peak resident memory {peak_mb:.0f} MB")


def check_other_kinds(binary, tmp):
    """One configuration of several profiles, the three kinds beside the ID tokens among them (DESIGN §16): every
    generated App Check, Apple notification, Sign in with Apple and Google case a record can carry (its own `at`)
    gets its expected verdict, routed by its issuer and, for Apple's identity tokens and notifications, which share
    an issuer, by its kind (a notification carries "events"); with --replay a notification seen twice is a replay."""
    generated = os.path.join(HERE, "..", "generated")
    keysets = os.path.join(generated, "keysets")
    records, expected = [], []
    profiles = [{"provider": "firebase", "projectId": "idtk-demo-7f3a2", "keys": os.path.join(keysets, "firebase_jwks.json")}]
    for name in ("firebase-app-check", "apple-notification", "google", "apple"):
        with open(os.path.join(generated, name + ".json")) as f:
            cases = json.load(f)["cases"]
        base = cases[0]
        p = base["profile"]
        profile = {"name": name, "provider": name, "keys": os.path.join(HERE, "..", base["keys"])}
        if name == "firebase-app-check":
            profile["projectNumber"] = p["project_number"]
        else:
            profile["audiences"] = p["client_ids"]
        profiles.append(profile)
        for case in cases:
            if case["profile"] != p or case["keys"] != base["keys"] or case.get("nonce") or case.get("replay"):
                continue
            # Routing reads the issuer: a token with no issuer string, or another project's Firebase token, is no
            # profile's here, so the several-profile verifier refuses it as wrong_issuer where one profile, judging
            # everything, reports the claim it stopped at.
            error = case["expect"]["error"]
            if case["expect"].get("claim") == "iss" or case["id"].endswith("/firebase-id-token"):
                error = "wrong_issuer"
            records.append(json.dumps({"token": case["token"], "at": case["at"], "id": case["id"]}))
            expected.append(error)
    config = os.path.join(tmp, "kinds.json")
    with open(config, "w") as f:
        json.dump({"profiles": profiles}, f)
    log = os.path.join(tmp, "kinds.log")
    with open(log, "w") as f:
        f.write("\n".join(records) + "\n")
    out = os.path.join(tmp, "kinds.ndjson")
    run = audit(binary, log, "--config", config, "--output", out, "--summary", os.devnull, "--threads", "2")
    check("several kinds: exit 0", run.returncode == 0, run.stderr[-500:])
    if run.returncode != 0:
        return
    with open(out) as f:
        verdicts = [json.loads(line) for line in f]
    check("several kinds: one verdict a record", len(verdicts) == len(records), f"{len(verdicts)} of {len(records)}")
    wrong = [(v["id"], v["error"], e) for v, e in zip(verdicts, expected) if v["error"] != e]
    check(f"several kinds: {len(records)} App Check, notification, Apple and Google records get their expected verdicts",
          not wrong and len(records) > 200, str(wrong[:40]))
    valid = [r for r, e in zip(records, expected) if e is None and "apple-notification/valid" in r]
    with open(log, "w") as f:
        f.write(valid[0] + "\n" + valid[0] + "\n")
    run = audit(binary, log, "--config", config, "--replay", "--output", out, "--summary", os.devnull)
    with open(out) as f:
        twice = [json.loads(line)["error"] for line in f] if run.returncode == 0 else []
    check("several kinds: a notification delivered twice is a replay the second time", twice == [None, "replayed"], str(twice))


def main():
    binary = sys.argv[1]
    expected = json.load(open(os.path.join(SAMPLES, "expected-summary.json")))
    config = os.path.join(SAMPLES, "audit-config.json")
    log = os.path.join(SAMPLES, "sample.log")
    with tempfile.TemporaryDirectory() as tmp:
        for source in [log, log + ".gz"]:
            out = os.path.join(tmp, "out.ndjson")
            run = audit(binary, source, "--config", config, "--output", out, "--summary", "-", "--threads", "3")
            check(f"{source}: exit 0", run.returncode == 0, run.stderr)
            summary = json.loads(run.stdout)
            for key in ["lines", "records", "blankLines", "valid", "invalid", "byError"]:
                check(f"{source}: summary {key}", summary[key] == expected[key], f"{summary[key]} != {expected[key]}")
            records = [json.loads(line) for line in open(out)]
            check(f"{source}: one NDJSON object per record", len(records) == expected["records"])
            check(f"{source}: fields in order", all(list(r.keys()) == FIELDS for r in records))
            check(f"{source}: input order", [r["line"] for r in records] == sorted(r["line"] for r in records))
            check(f"{source}: valid count", sum(r["valid"] for r in records) == expected["valid"])

        run = audit(binary, log, "--config", config, "--replay", "--summary", "-", "--output", os.devnull)
        summary = json.loads(run.stdout)
        check("replays", summary["replays"]["count"] == expected["replaysWithReplayOption"], run.stdout[:200])
        check("replays lower valid", summary["valid"] == expected["valid"] - expected["replaysWithReplayOption"])

        run = audit(binary, log, "--config", config, "--format", "csv", "--summary", os.path.join(tmp, "s.json"))
        rows = list(csv.reader(io.StringIO(run.stdout, newline="")))
        check("csv header", rows[0] == FIELDS, str(rows[0]))
        check("csv rows", len(rows) - 1 == expected["records"])
        check("csv row width", all(len(r) == len(FIELDS) for r in rows))
        errors = {}
        for r in rows[1:]:
            if r[3]:
                errors[r[3]] = errors.get(r[3], 0) + 1
        check("csv error counts", errors == expected["byError"], str(errors))

        with open(log + ".gz", "rb") as f:
            data = f.read()
        cut = os.path.join(tmp, "cut.log.gz")
        with open(cut, "wb") as f:
            f.write(data[: len(data) // 2])
        run = audit(binary, cut, "--config", config, "--summary", os.path.join(tmp, "cut.json"), "--output", os.path.join(tmp, "cut.ndjson"))
        check("truncated gzip: exit 1", run.returncode == 1, run.stderr)
        check("truncated gzip: says so", "truncated" in run.stderr, run.stderr)
        cut_summary = json.load(open(os.path.join(tmp, "cut.json")))
        check("truncated gzip: earlier records audited", 0 < cut_summary["records"] < expected["records"])
        check("truncated gzip: inputError", "truncated" in (cut_summary["inputError"] or ""))

        html = os.path.join(tmp, "r.html")
        run = audit(binary, log, "--config", config, "--html", html, "--output", os.devnull, "--summary", os.devnull)
        page = open(html).read()
        check("html: three plots, no script", page.count("<svg") == 3 and "<script" not in page)

        run = audit(binary, log, "--provider", "firebase")
        check("usage: --provider without --project-id exits 2", run.returncode == 2, run.stderr)
        run = audit(binary, log, "--config", config, "--format", "xml")
        check("usage: bad --format exits 2", run.returncode == 2, run.stderr)
        empty = os.path.join(tmp, "empty.log")
        open(empty, "w").close()
        run = audit(binary, empty, "--config", config, "--summary", "-", "--output", os.devnull)
        check("empty file: exit 0, no records", run.returncode == 0 and json.loads(run.stdout)["records"] == 0, run.stderr)

        check_other_kinds(binary, tmp)
        check_redis_store(binary, log, config, expected, tmp)
        check_streaming_memory(binary, log, config, expected, tmp)

    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
