#!/usr/bin/env python3
"""Runs `idtoken audit` as separate processes the way batch engines do (DESIGN §12) and checks that they give what
one process gives: N = 1, 2, 4, 7 shards (`--shard I/N`, run at the same time) merged by `idtoken audit merge`
give one process's verdict lines (sorted by line), summary and HTML report (timing aside), on the bundled sample
and on a generated log; with one real redis-server, shards that find replays across shards (`--replay-store`,
`--run-id`) merge to one process's replay verdicts, a shard killed half-way and run again loses and doubles
nothing, and a Redis stopped mid-run leaves the decision to `--replay-store-failure`; merge refuses other runs, overlapping and missing shards; the shard comes from the
environment of a Kubernetes Indexed Job or an AWS Batch array job; pipe mode through GNU parallel
(`parallel --pipe -N 1000`, as docs/audit.md shows) gives one process's verdict lines; a consumer that reads
slowly does not make the pipe's memory grow.

Usage: python3 Vectors/tools/check_shards.py PATH/TO/idtoken [--lines N]
Prints "N passed, M failed" and exits non-zero when a check fails.
"""
import argparse
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
CONFIG = os.path.join(SAMPLES, "audit-config.json")
AT = "2026-01-01T12:00:00Z"
# What depends on the run, not on the log: left out when summaries are compared.
TIMING = {"elapsedSeconds", "tokensPerSecond", "cpuSeconds", "tokensPerCPUSecond", "verifications", "cacheHits", "threads"}

passed, failed = 0, 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name} {str(detail)[:600]}", file=sys.stderr)


def line_of(text):
    return json.loads(text)["line"]


def without_timing(summary):
    return {k: v for k, v in summary.items() if k not in TIMING}


def html_without_timing(text):
    return "\n".join(l for l in text.split("\n") if "Audited in" not in l)


def audit_args(binary, log, *extra):
    return [binary, "audit", log, "--config", CONFIG, "--at", AT, *extra]


def check_shards(binary, log, name, tmp, counts=(1, 2, 4, 7)):
    one_out, one_summary, one_html = (os.path.join(tmp, f"{name}-one.{e}") for e in ("ndjson", "json", "html"))
    one = subprocess.run(audit_args(binary, log, "--output", one_out, "--summary", one_summary, "--html", one_html,
                                    "--threads", "1"), capture_output=True, text=True)
    check(f"{name}: one process exits 0", one.returncode == 0, one.stderr)
    with open(one_out) as f:
        expected_lines = f.read().splitlines()
    with open(one_summary) as f:
        expected = json.load(f)
    with open(one_html) as f:
        expected_html = html_without_timing(f.read())
    for n in counts:
        processes = []
        for i in range(n):
            out, summary = (os.path.join(tmp, f"{name}-{n}-{i}.{e}") for e in ("ndjson", "json"))
            processes.append((out, summary, subprocess.Popen(
                audit_args(binary, log, "--shard", f"{i}/{n}", "--threads", "1", "--output", out, "--summary", summary),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        lines = []
        for out, summary, process in processes:
            _, err = process.communicate(timeout=600)
            check(f"{name}: shard of {n} exits 0", process.returncode == 0, err)
            with open(out) as f:
                lines += f.read().splitlines()
        lines.sort(key=line_of)
        check(f"{name}: {n} shards' verdict lines sorted by line are one process's", lines == expected_lines,
              f"{len(lines)} vs {len(expected_lines)}")
        merged_html = os.path.join(tmp, f"{name}-{n}-merged.html")
        title = "Token audit of " + os.path.basename(log)
        merge = subprocess.run([binary, "audit", "merge", *[s for _, s, _ in reversed(processes)], "--html", merged_html,
                                "--title", title], capture_output=True, text=True)
        check(f"{name}: merge of {n} exits 0", merge.returncode == 0, merge.stderr)
        merged = json.loads(merge.stdout or "{}")
        check(f"{name}: merged summary of {n} shards is one process's", without_timing(merged) == without_timing(expected),
              {k: (merged.get(k), expected.get(k)) for k in expected if merged.get(k) != expected.get(k) and k not in TIMING})
        with open(merged_html) as f:
            check(f"{name}: merged HTML report of {n} shards is one process's", html_without_timing(f.read()) == expected_html)
        shard_summary = json.load(open(processes[-1][1]))
        check(f"{name}: a shard's summary says its run, shard and lines",
              shard_summary.get("shard", {}).get("count") == n and shard_summary["shard"].get("lines") == expected["lines"]
              and str(shard_summary["shard"].get("run", "")).startswith("run-"))


def check_merge_refusals(binary, tmp):
    log = os.path.join(SAMPLES, "sample.log")
    def shard(i, n, *extra):
        path = os.path.join(tmp, f"refuse-{i}-{n}-{len(extra)}.json")
        r = subprocess.run(audit_args(binary, log, "--shard", f"{i}/{n}", "--output", os.devnull, "--summary", path, *extra),
                           capture_output=True, text=True)
        check("refusals: shard exits 0", r.returncode == 0, r.stderr)
        return path
    a, b, c = shard(0, 3), shard(1, 3), shard(2, 3)
    other = shard(2, 3, "--run-id", "another-run")
    def merge(*paths):
        return subprocess.run([binary, "audit", "merge", *paths], capture_output=True, text=True)
    r = merge(a, b)
    check("merge: a missing shard is refused, named", r.returncode == 2 and "missing shard 2/3" in r.stderr, r.stderr)
    r = merge(a, b, b, c)
    check("merge: a shard twice is refused, named", r.returncode == 2 and f"{b} and {b} are both shard 1/3" in r.stderr, r.stderr)
    r = merge(a, b, other)
    check("merge: another run's summary is refused, named", r.returncode == 2 and other in r.stderr and "another-run" in r.stderr, r.stderr)
    check("merge: the three shards of one run merge", merge(a, b, c).returncode == 0)


def check_environment(binary, tmp):
    log = os.path.join(SAMPLES, "sample.log")
    def run(env):
        return subprocess.run(audit_args(binary, log, "--output", os.devnull, "--summary", "-"), capture_output=True,
                              text=True, env={**os.environ, **env})
    r = run({"JOB_COMPLETION_INDEX": "1", "JOB_COMPLETIONS": "2"})
    check("environment: Kubernetes index and count make a shard, said on stderr",
          r.returncode == 0 and "shard 1/2 from JOB_COMPLETION_INDEX=1" in r.stderr
          and json.loads(r.stdout).get("shard", {}).get("index") == 1, r.stderr)
    r = run({"AWS_BATCH_JOB_ARRAY_INDEX": "0", "AWS_BATCH_JOB_ARRAY_SIZE": "3"})
    check("environment: AWS Batch index and size make a shard", r.returncode == 0 and "shard 0/3" in r.stderr, r.stderr)
    r = run({"JOB_COMPLETION_INDEX": "4", "JOB_COMPLETIONS": "4"})
    check("environment: an index out of range is exit 2 naming the variable", r.returncode == 2 and "JOB_COMPLETION_INDEX=4" in r.stderr, r.stderr)
    r = run({"AWS_BATCH_JOB_ARRAY_INDEX": "1"})
    check("environment: a missing count is exit 2 naming the variable", r.returncode == 2 and "AWS_BATCH_JOB_ARRAY_SIZE" in r.stderr, r.stderr)
    r = subprocess.run(audit_args(binary, log, "--shard", "1/x"), capture_output=True, text=True)
    check("--shard 1/x is exit 2", r.returncode == 2 and "--shard" in r.stderr, r.stderr)


def check_pipe(binary, log, tmp):
    """The GNU parallel line of docs/audit.md, and a slow consumer."""
    parallel = shutil.which("parallel")
    check("GNU parallel is installed (scripts/setup.sh installs it)", parallel is not None)
    with open(log, "rb") as f:
        text = f.read()
    with_blanks = os.path.join(tmp, "pipe-input.log")
    with open(with_blanks, "wb") as f:       # blank lines and junk too: each gets its line out
        f.write(b"\n" + text.replace(b"\n", b"\n\n", 3) + b"not a token\n")
    count = open(with_blanks, "rb").read().count(b"\n")
    with open(with_blanks, "rb") as f:
        one = subprocess.run([binary, "audit", "--pipe", "--config", CONFIG, "--at", AT], stdin=f, capture_output=True)
    check("pipe: one process exits 0", one.returncode == 0, one.stderr)
    one_lines = one.stdout.decode().splitlines()
    check("pipe: one line out per line in", len(one_lines) == count, f"{len(one_lines)} vs {count}")
    check("pipe: in input order", [line_of(l) for l in one_lines] == list(range(1, count + 1)))
    normal = subprocess.run(audit_args(binary, with_blanks, "--summary", os.devnull), capture_output=True)
    check("pipe: the non-blank lines' verdicts are the audit's",
          [l for l in one_lines if "is blank: no token" not in l] == normal.stdout.decode().splitlines())
    if parallel:
        command = (f"parallel --pipe -N 1000 -k {binary} audit --pipe --config {CONFIG} --at {AT} "
                   "--first-line '{= $_=(seq()-1)*1000+1 =}'")
        with open(with_blanks, "rb") as f:
            piped = subprocess.run(command, shell=True, stdin=f, capture_output=True)
        check("pipe: parallel --pipe -N 1000 exits 0", piped.returncode == 0, piped.stderr[-500:])
        check("pipe: parallel --pipe -N 1000 gives one process's verdict lines", piped.stdout.decode().splitlines() == one_lines,
              f"{len(piped.stdout.decode().splitlines())} vs {len(one_lines)}")

    # A consumer that reads slowly: the audit waits for it (bounded batches in flight) instead of holding the
    # verdicts of the whole input in memory.
    big = os.path.join(tmp, "pipe-big.log")
    with open(big, "wb") as f:
        for _ in range(max(1, 120_000 // max(1, count))):
            f.write(text)
    total = open(big, "rb").read().count(b"\n")
    with open(big, "rb") as f:
        process = subprocess.Popen([binary, "audit", "--pipe", "--config", CONFIG, "--at", AT, "--threads", "2"],
                                   stdin=f, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        peak, received, deadline = 0, 0, time.time() + 4
        while time.time() < deadline:
            chunk = process.stdout.read(16 * 1024)
            received += chunk.count(b"\n")
            peak = max(peak, resident_kb(process.pid))
            time.sleep(0.05)
        slow_peak = peak
        for chunk in iter(lambda: process.stdout.read(1 << 20), b""):
            received += chunk.count(b"\n")
        process.wait(timeout=600)
    check("pipe: a slow consumer gets every line", received == total and process.returncode == 0, f"{received} of {total}")
    check("pipe: while the consumer reads slowly, the audit stays under 100 MB", 0 < slow_peak < 100 * 1024, f"{slow_peak} kB")
    print(f"pipe: slow consumer, peak resident {slow_peak // 1024} MB over {total} lines", file=sys.stderr)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(tmp):
    server = shutil.which("redis-server")
    check("redis-server is installed (scripts/setup.sh installs it)", server is not None)
    if server is None:
        return None, None
    port = free_port()
    process = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                "--dir", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, port


def replay_view(summary):
    """What replays decide in a summary: every count, and the examples' lines and first lines."""
    view = without_timing(summary)
    view["replays"] = {"count": summary["replays"]["count"],
                       "examples": [(e["line"], e["firstLine"]) for e in summary["replays"]["examples"]]}
    return view


def check_redis_shards(binary, log, name, tmp, counts=(1, 2, 4, 7)):
    process, port = start_redis(tmp)
    if process is None:
        return
    try:
        one = subprocess.run(audit_args(binary, log, "--replay", "--output", os.devnull, "--summary", "-"), capture_output=True, text=True)
        expected = json.loads(one.stdout)
        check(f"{name}: the log has replays", expected["replays"]["count"] > 0)
        for db, n in enumerate(counts):
            store = f"redis://127.0.0.1:{port}/{db}"
            run = f"{name}-{n}"
            def shard(i, *, kill_after=None):
                summary = os.path.join(tmp, f"redis-{name}-{n}-{i}.json")
                p = subprocess.Popen(audit_args(binary, log, "--shard", f"{i}/{n}", "--threads", "1", "--replay-store", store,
                                                "--run-id", run, "--output", os.devnull, "--summary", summary),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                return summary, p
            running = [shard(i) for i in range(n)]
            summaries = []
            for summary, p in running:
                _, err = p.communicate(timeout=600)
                check(f"{name}: redis shard of {n} exits 0", p.returncode == 0, err)
                summaries.append(summary)
            merge = subprocess.run([binary, "audit", "merge", *summaries, "--replay-store", store], capture_output=True, text=True)
            check(f"{name}: merge of {n} redis shards exits 0", merge.returncode == 0, merge.stderr)
            merged = json.loads(merge.stdout or "{}")
            got, want = replay_view(merged), replay_view(expected)
            check(f"{name}: {n} shards finding replays on Redis, merged, are one process's replays", got == want,
                  {k: (got.get(k), want.get(k)) for k in want if got.get(k) != want.get(k)})
            if n == 2:
                # The shards one after the other, the last first: the first shard to run claims copies whose
                # originals the other finds later; merge settles those claims from the store's record.
                store = f"redis://127.0.0.1:{port}/15"
                ordered = []
                for i in reversed(range(n)):
                    summary = os.path.join(tmp, f"redis-{name}-ordered-{i}.json")
                    r = subprocess.run(audit_args(binary, log, "--shard", f"{i}/{n}", "--replay-store", store, "--run-id", "ordered",
                                                  "--output", os.devnull, "--summary", summary), capture_output=True, text=True)
                    check(f"{name}: ordered shard exits 0", r.returncode == 0, r.stderr)
                    ordered.append(summary)
                unsettled = json.loads(subprocess.run([binary, "audit", "merge", *ordered], capture_output=True, text=True).stdout or "{}")
                settled = json.loads(subprocess.run([binary, "audit", "merge", *ordered, "--replay-store", store],
                                                    capture_output=True, text=True).stdout or "{}")
                check(f"{name}: a later shard overturned claims (the order matters before settling)",
                      unsettled.get("replays", {}).get("count", 0) < want["replays"]["count"], unsettled.get("replays"))
                got = replay_view(settled)
                check(f"{name}: shards run last-first, settled by merge, are one process's replays", got == want,
                      {k: (got.get(k), want.get(k)) for k in want if got.get(k) != want.get(k)})
            if n == 4:
                # A shard killed half-way and run again: its own claims are not replays of itself, nothing is lost
                # or counted twice.
                summary, p = shard(1)
                time.sleep(0.4)
                p.kill()
                p.wait()
                summary, p = shard(1)
                p.communicate(timeout=600)
                check(f"{name}: a shard run again exits 0", p.returncode == 0)
                merge = subprocess.run([binary, "audit", "merge", *summaries, "--replay-store", store], capture_output=True, text=True)
                merged = json.loads(merge.stdout or "{}")
                got = replay_view(merged)
                check(f"{name}: after a shard is killed and run again, the merge is one process's", got == want,
                      {k: (got.get(k), want.get(k)) for k in want if got.get(k) != want.get(k)})
    finally:
        process.terminate()
        process.wait(timeout=10)


def check_redis_outage(binary, log, tmp):
    """Redis stopped mid-run: --replay-store-failure decides, and the summary counts the records judged without
    the shared check."""
    process, port = start_redis(tmp)
    if process is None:
        return
    big = os.path.join(tmp, "outage.log")
    with open(log, "rb") as f:
        text = f.read()
    with open(big, "wb") as f:
        for _ in range(30):
            f.write(text)
    store = f"redis://127.0.0.1:{port}/9"
    results = {}
    try:
        for mode in ("allow", "reject"):
            p = subprocess.Popen(audit_args(binary, big, "--shard", "0/1", "--threads", "1", "--replay-store", store,
                                            "--run-id", f"outage-{mode}", "--replay-store-failure", mode,
                                            "--output", os.devnull, "--summary", "-"),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if mode == "allow":
                time.sleep(0.5)
                process.terminate()
                process.wait(timeout=10)
            results[mode] = p.communicate(timeout=600) + (p.returncode,)
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)
    out, err, code = results["allow"]
    summary = json.loads(out or "{}")
    check("redis stopped mid-run, allow: the audit finishes (exit 0)", code == 0, err[-300:])
    check("redis stopped mid-run, allow: every record is judged and the unchecked ones are counted",
          summary.get("lines") == text.count(b"\n") * 30 and summary.get("replayUnchecked", 0) > 0, out[-400:])
    out, err, code = results["reject"]
    check("redis down, reject: the audit stops with exit 1 naming the replay store", code == 1 and "replay store" in err, err[-300:])


def resident_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--lines", type=int, default=10_000)
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    with tempfile.TemporaryDirectory() as tmp:
        generated = os.path.join(tmp, "generated.log")
        subprocess.run([sys.executable, os.path.join(HERE, "audit_log.py"), "log", "--lines", str(options.lines), "--out",
                        generated, "--distinct", str(options.lines // 20), "--mix",
                        "valid=8,expired=1,forged=1,wrong_audience=1,replayed=2,malformed=1", "--seed", "18"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        check_shards(binary, os.path.join(SAMPLES, "sample.log"), "sample", tmp)
        check_shards(binary, generated, "generated", tmp)
        check_merge_refusals(binary, tmp)
        check_environment(binary, tmp)
        check_pipe(binary, os.path.join(SAMPLES, "sample.log"), tmp)
        check_redis_shards(binary, os.path.join(SAMPLES, "sample.log"), "sample", tmp)
        check_redis_shards(binary, generated, "generated", tmp)
        check_redis_outage(binary, os.path.join(SAMPLES, "sample.log"), tmp)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
