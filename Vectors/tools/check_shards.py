#!/usr/bin/env python3
"""Runs `idtoken audit` as separate processes the way batch engines do (DESIGN §12) and checks that they give what
one process gives: N = 1, 2, 4, 7 shards (`--shard I/N`, run at the same time) merged by `idtoken audit merge`
give one process's verdict lines (`merge --shard-verdicts … --verdicts`, and the shards' own lines sorted by line),
summary and HTML report (timing aside), on the bundled sample and on a generated 100,000-line log (7 shards);
with one real redis-server, shards that find replays across shards (`--replay-store`, `--run-id`) merge to one
process's summary and verdict lines (one process with `--replay`), including the claims a shard run after the
others overturned (settled by merge), a shard killed half-way and run again loses and doubles nothing, and a
Redis stopped mid-run leaves the decision to `--replay-store-failure`; merge refuses other runs, overlapping and missing shards; the shard comes from the
environment of a Kubernetes Indexed Job or an AWS Batch array job; pipe mode through GNU parallel
(`parallel --pipe -N 1000`, as docs/audit.md shows) gives one process's verdict lines; a consumer that reads
slowly does not make the pipe's memory grow.

Usage: python3 Vectors/tools/check_shards.py PATH/TO/idtoken [--lines N]   (default 100,000)
Prints "N passed, M failed" and exits non-zero when a check fails.
"""
import argparse
import json
import os
import resource
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


def first_difference(got, want):
    """Where two lists of verdict lines part, for a failure's detail."""
    for k, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"line {k + 1}: got {a[:300]} want {b[:300]}"
    return f"{len(got)} lines vs {len(want)}"


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
        merged_verdicts = os.path.join(tmp, f"{name}-{n}-merged.ndjson")
        title = "Token audit of " + os.path.basename(log)
        merge = subprocess.run([binary, "audit", "merge", *[s for _, s, _ in reversed(processes)], "--html", merged_html,
                                "--title", title, "--shard-verdicts", *[o for o, _, _ in processes], "--verdicts", merged_verdicts],
                               capture_output=True, text=True)
        check(f"{name}: merge of {n} exits 0", merge.returncode == 0, merge.stderr)
        with open(merged_verdicts) as f:
            got = f.read().splitlines()
        check(f"{name}: merge --verdicts of {n} shards writes one process's verdict lines, in line order", got == expected_lines,
              first_difference(got, expected_lines))
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


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return f.read().splitlines()


def by_line(lines):
    return {line_of(l): l for l in lines}


class RedisRun:
    """The shards of one run on a shared Redis store (`--replay-store`, `--run-id`), and their merge."""

    def __init__(self, binary, log, name, tmp, store, run, n, expected, expected_lines):
        self.binary, self.log, self.name, self.tmp, self.store, self.run, self.n = binary, log, name, tmp, store, run, n
        self.expected, self.expected_lines = expected, expected_lines

    def files(self, i):
        return (os.path.join(self.tmp, f"redis-{self.run}-{i}.ndjson"), os.path.join(self.tmp, f"redis-{self.run}-{i}.json"))

    def start(self, i):
        out, summary = self.files(i)
        return subprocess.Popen(audit_args(self.binary, self.log, "--shard", f"{i}/{self.n}", "--threads", "1", "--replay-store",
                                           self.store, "--run-id", self.run, "--output", out, "--summary", summary),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, processes):
        for p in processes:
            _, err = p.communicate(timeout=900)
            check(f"{self.run}: a shard exits 0", p.returncode == 0, err[-300:])

    def shard_lines(self):
        """The shards' own verdict lines, sorted by line (claims a later shard overturned still say valid)."""
        lines = []
        for i in range(self.n):
            lines += read_lines(self.files(i)[0])
        return sorted(lines, key=line_of)

    def merge(self, settle=True):
        """Merges the summaries and verdict lines; checks both are one process's when settled from the store."""
        verdicts = os.path.join(self.tmp, f"redis-{self.run}-merged.ndjson")
        command = [self.binary, "audit", "merge", *[self.files(i)[1] for i in range(self.n)],
                   "--shard-verdicts", *[self.files(i)[0] for i in range(self.n)], "--verdicts", verdicts]
        r = subprocess.run(command + (["--replay-store", self.store] if settle else []), capture_output=True, text=True)
        check(f"{self.run}: merge exits 0", r.returncode == 0, r.stderr)
        summary = json.loads(r.stdout or "{}")
        lines = read_lines(verdicts)
        if settle:
            got, want = without_timing(summary), without_timing(self.expected)
            check(f"{self.run}: the merged summary is one process's", got == want,
                  {k: (got.get(k), want.get(k)) for k in want if got.get(k) != want.get(k)})
            check(f"{self.run}: the merged verdict lines are one process's", lines == self.expected_lines,
                  first_difference(lines, self.expected_lines))
        return summary, lines


def check_redis_shards(binary, log, name, tmp, counts=(1, 2, 4, 7), late=2, killed=4):
    """N shards at once on one Redis merge to one process's summary and verdict lines (`--replay` in one process);
    with shard 0 run after the others (`late` shards), its earlier lines overturn claims the others made, which the
    merge settles; a shard killed half-way and run again (of `killed` shards) changes nothing."""
    process, port = start_redis(tmp)
    if process is None:
        return
    try:
        one_out = os.path.join(tmp, f"redis-{name}-one.ndjson")
        one = subprocess.run(audit_args(binary, log, "--replay", "--threads", "2", "--output", one_out, "--summary", "-"),
                             capture_output=True, text=True)
        check(f"{name}: one process finding replays exits 0", one.returncode == 0, one.stderr)
        expected, expected_lines = json.loads(one.stdout or "{}"), read_lines(one_out)
        check(f"{name}: the log has replays", expected.get("replays", {}).get("count", 0) > 0)
        for db, n in enumerate(counts):
            run = RedisRun(binary, log, name, tmp, f"redis://127.0.0.1:{port}/{db}", f"{name}-{n}", n, expected, expected_lines)
            run.finish([run.start(i) for i in range(n)])
            run.merge()
            if n == killed:
                # A shard killed half-way and run again: its own claims are not replays of itself, nothing is lost
                # or counted twice.
                p = run.start(1)
                time.sleep(0.4)
                p.kill()
                p.wait()
                run.finish([run.start(1)])
                run.merge()
        if late:
            check_late_shard(RedisRun(binary, log, name, tmp, f"redis://127.0.0.1:{port}/15", f"{name}-late-{late}", late,
                                      expected, expected_lines), kill=late == killed)
    finally:
        process.terminate()
        process.wait(timeout=10)


def check_late_shard(run, kill=False):
    """Every shard but 0 at once, then shard 0: the others judged the first acceptance of tokens whose first line is
    shard 0's (they wrote valid), and shard 0 overturned those claims; merge settles them in the summary and in the
    verdict lines. With `kill`, shard 1 is also killed half-way and run again before shard 0 runs."""
    others = [run.start(i) for i in range(1, run.n)]
    if kill and run.n > 1:
        time.sleep(0.4)
        others[0].kill()
        others[0].wait()
        run.finish(others[1:])
        run.finish([run.start(1)])
    else:
        run.finish(others)
    run.finish([run.start(0)])
    raw = by_line(run.shard_lines())
    want = by_line(run.expected_lines)
    overturned = [l for l, text in raw.items() if '"valid":true' in text and '"error":"replayed"' in want.get(l, "")]
    check(f"{run.run}: shard 0 run last overturned claims of the others (their lines say valid where one process says replayed)",
          len(overturned) > 0 and len(raw) == len(want), f"{len(overturned)} overturned, {len(raw)} vs {len(want)} lines")
    unsettled, _ = run.merge(settle=False)
    check(f"{run.run}: before settling, the merged summary counts fewer replays",
          unsettled.get("replays", {}).get("count", 0) < run.expected["replays"]["count"], unsettled.get("replays"))
    _, lines = run.merge()
    merged = by_line(lines)
    check(f"{run.run}: every overturned claim's line is, merged, one process's replayed verdict",
          all(merged.get(l) == want[l] for l in overturned), [(merged.get(l), want[l]) for l in overturned if merged.get(l) != want[l]][:2])
    print(f"{run.run}: {len(overturned)} claims overturned by the late shard, settled by merge", file=sys.stderr)


def check_redis_outage(binary, log, tmp):
    """Redis stopped mid-run: --replay-store-failure decides, and the summary counts the records judged without
    the shared check.

    The log comes through standard input, its second half written only once Redis is stopped: those records are
    judged without the store however fast the audit is (a file read from disk was done before a timed stop once the
    audit got fast enough)."""
    process, port = start_redis(tmp)
    if process is None:
        return
    with open(log, "rb") as f:
        text = f.read()
    store = f"redis://127.0.0.1:{port}/9"
    results = {}
    try:
        for mode in ("allow", "reject"):
            p = subprocess.Popen(audit_args(binary, "-", "--shard", "0/1", "--threads", "1", "--replay-store", store,
                                            "--run-id", f"outage-{mode}", "--replay-store-failure", mode,
                                            "--output", os.devnull, "--summary", "-"),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            rest = text * 30
            if mode == "allow":
                # Half the log while the store answers, the rest after it has gone.
                p.stdin.write(text * 15)
                p.stdin.flush()
                time.sleep(0.5)
                process.terminate()
                process.wait(timeout=10)
                rest = text * 15
            # The rest written, standard input closed, the outputs read (a write the audit no longer reads, once it
            # has stopped at a record it could not check, is dropped).
            out, err = p.communicate(input=rest, timeout=600)
            results[mode] = (out.decode(), err.decode(), p.returncode)
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


def cpu_seconds():
    """User and system time of the processes this script ran and waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--lines", type=int, default=100_000)
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    started = time.time()

    def timed(what, body, *args, **kwargs):
        begun, cpu = time.time(), cpu_seconds()
        body(*args, **kwargs)
        print(f"{what}: {time.time() - begun:.1f} s, {cpu_seconds() - cpu:.1f} CPU-seconds", file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        sample = os.path.join(SAMPLES, "sample.log")
        generated = os.path.join(tmp, "generated.log")
        # Repeats (5 % distinct tokens) and replays planted within 5,000-line stretches, so across every shard.
        timed(f"generating {options.lines} lines", subprocess.run,
              [sys.executable, os.path.join(HERE, "audit_log.py"), "log", "--lines", str(options.lines), "--out",
               generated, "--distinct", str(options.lines // 20), "--mix",
               "valid=8,expired=1,forged=1,wrong_audience=1,replayed=2,malformed=1", "--seed", "18"],
              check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        timed("sample, 1, 2, 4, 7 shards", check_shards, binary, sample, "sample", tmp)
        # Without a replay store, 1, 2, 4 and 7 shards of the generated log's first 10,000 lines; the whole log runs
        # on Redis below. Every shard reads the whole input and a debug build audits some 2,000 lines a CPU-second,
        # so 1 + 2 + 4 + 7 shards and one process over 100,000 lines would add minutes to the test command.
        head = os.path.join(tmp, "generated-head.log")
        with open(generated, "rb") as f, open(head, "wb") as out:
            for _, text in zip(range(10_000), f):
                out.write(text)
        timed("generated (first 10,000 lines), 1, 2, 4, 7 shards", check_shards, binary, head, "generated", tmp)
        timed("merge refusals", check_merge_refusals, binary, tmp)
        timed("environment", check_environment, binary, tmp)
        timed("pipe", check_pipe, binary, sample, tmp)
        timed("sample on redis", check_redis_shards, binary, sample, "sample", tmp)
        # The whole generated log on Redis: one process and 7 shards (the most, where replays cross most shards), in
        # one run that also has shard 1 killed half-way and run again and shard 0 run after the others, so that its
        # lines overturn claims the others made (settled by merge); 1, 2 and 4 shards, each scenario on its own,
        # run on the sample above. One run of 7 keeps the test command's added time near a minute.
        timed("generated on redis, 7 shards", check_redis_shards, binary, generated, "generated", tmp, counts=(), late=7, killed=7)
        timed("redis outage", check_redis_outage, binary, sample, tmp)
    print(f"{passed} passed, {failed} failed in {time.time() - started:.0f} s ({cpu_seconds():.0f} CPU-seconds)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
