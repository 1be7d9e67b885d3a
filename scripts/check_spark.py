#!/usr/bin/env python3
"""Runs docs/audit.md's Spark recipe for real: PySpark (local mode, Java 17) sends logs, in several partitions,
through `RDD.pipe("idtoken audit --pipe --config audit-config.json --at …")`. Checks:
- the bundled sample: one verdict line per input line in every partition, and the documented program's counts by
  error code equal to what the sample's generator expects (expected-summary.json; pipe mode answers a blank line
  with `malformed`, so the blank lines count there too);
- a generated log of 3,000 lines (Vectors/tools/audit_log.py): the partitions' verdict lines, in order, equal one
  `idtoken audit --pipe` process's over the whole log, but for the line numbers, which count within a partition.

Usage: scripts/check_spark.py PATH/TO/idtoken     (exit status 0 when every check passed)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SAMPLES = os.path.join(REPO, "Vectors", "samples")
FAILURES = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        FAILURES.append(what)


def main():
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="idtk-spark-")
    try:
        # The configuration and the key files it names, in the directory the command runs in (docs/audit.md:
        # "sc.addFile … and the key files it names, next to it").
        shutil.copy(os.path.join(SAMPLES, "audit-config.json"), work)
        shutil.copytree(os.path.join(SAMPLES, "keys"), os.path.join(work, "keys"))
        os.chdir(work)
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

        from pyspark.sql import SparkSession

        expected = json.load(open(os.path.join(SAMPLES, "expected-summary.json")))
        spark = (SparkSession.builder.master("local[2]").appName("token-audit")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        sc = spark.sparkContext
        try:
            sc.addFile("audit-config.json")
            partitions = 4
            records = sc.textFile(os.path.join(SAMPLES, "sample.log"), minPartitions=partitions)
            command = f"idtoken audit --pipe --config audit-config.json --at {expected['at']}"
            # RDD.pipe gives the command an empty environment unless told otherwise: PATH names where idtoken is
            # (the .deb's /usr/bin is on the default path; this check runs the build under test).
            environment = {"PATH": os.path.dirname(binary) + ":/usr/bin:/bin"}
            verdicts = records.pipe(command, env=environment, checkCode=True).map(json.loads)

            # One verdict line per input line, partition by partition.
            lines_per_partition = records.glom().map(len).collect()
            verdicts_per_partition = verdicts.glom().map(len).collect()
            check(len(lines_per_partition) >= 2 and lines_per_partition == verdicts_per_partition,
                  f"RDD.pipe: one verdict line per input line in each of {len(lines_per_partition)} partitions "
                  f"({verdicts_per_partition} for {lines_per_partition})")

            # The documented program's count of refusals by error code.
            by_error = dict(verdicts.filter(lambda v: not v["valid"]).map(lambda v: (v["error"], 1))
                            .reduceByKey(lambda a, b: a + b).collect())
            wanted = dict(expected["byError"])
            wanted["malformed"] = wanted.get("malformed", 0) + expected["blankLines"]
            check(by_error == wanted, f"refusals by error code as the sample's generator counts them ({by_error})")
            valid = verdicts.filter(lambda v: v["valid"]).count()
            check(valid == expected["valid"], f"valid tokens: {valid} of {expected['valid']}")

            # A generated log of a few thousand lines: Spark's verdicts equal one process's.
            log = os.path.join(work, "generated.log")
            subprocess.run([sys.executable, os.path.join(REPO, "Vectors", "tools", "audit_log.py"), "log", "--lines", "3000",
                            "--out", log, "--jobs", "1"], check=True, capture_output=True)
            spark_lines = sc.textFile(log, minPartitions=partitions).pipe(command, env=environment, checkCode=True).collect()
            with open(log, "rb") as f:
                one = subprocess.run(command.split(), stdin=f, capture_output=True, check=True,
                                     env=dict(os.environ, **environment)).stdout.decode().splitlines()

            def without_line(text):
                verdict = json.loads(text)
                verdict.pop("line", None)
                if verdict.get("message"):    # a malformed record's message names its line
                    verdict["message"] = re.sub(r"line \d+", "line N", verdict["message"])
                return verdict
            same = len(spark_lines) == len(one) == 3000 and all(
                without_line(a) == without_line(b) for a, b in zip(spark_lines, one))
            valid = sum(1 for line in one if json.loads(line)["valid"])
            check(same, f"a generated log of 3,000 lines in {partitions} partitions: the verdict lines equal one process's "
                        f"but for the line numbers ({len(spark_lines)} and {len(one)} lines, {valid} valid)")
        finally:
            spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES), file=sys.stderr)
        sys.exit(1)
    print("all spark checks passed")


if __name__ == "__main__":
    main()
