#!/usr/bin/env python3
"""Runs what scripts/package wrote in dist/ as a user without Swift would (docs/deploy.md):

- the tarball's binary on this machine with /opt/swift hidden (a tmpfs over it, in a mount namespace of its own),
  and, as the control that shows the hiding works, the source build, which then fails on libswiftCore.so;
- the tarball unpacked on a bare Debian rootfs (mmdebstrap) with only the runtime libraries the README names;
- the .deb installed by apt on a bare Debian rootfs: its dependencies, conffile, systemd unit (systemd-analyze
  verify and its offline security exposure), man pages, and its own /etc/idtoken/serve.json;
- the OCI image: skopeo reads its configuration (user, entry point, port, labels); umoci unpacks its root file
  system, where the entry point runs under chroot as the image's user. No container engine runs on these machines
  (podman's crun: "cgroups in hybrid mode not supported"), so this is as near as the test gets to a container.

Each system runs `idtoken --version`, `idtoken verify` on a vector, `idtoken audit` of the bundled sample (the
summary the generator expects) and `idtoken serve` behind a real nginx on this machine, answering a valid token
(the upstream reached, X-Auth-Subject set) and an expired one (401 with the challenge). The Kubernetes manifests
in packaging/kubernetes are validated against Kubernetes' schemas, offline, and their serve configurations are
started by the packaged binary.

Usage: scripts/check_package.py [PATH/TO/source-built/idtoken]     (exit status 0 when every check passed)
"""
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Vectors", "tools"))
from check_serve import NGINX_CONF, Key, Upstream, check, firebase_claims, firebase_config, free_port, request, wait_until, FAILURES  # noqa: E402
from check_cli import arguments  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DIST = os.path.join(REPO, "dist")
SAMPLES = os.path.join(REPO, "Vectors", "samples")
VECTOR = ("external/providers/cases.json", "real/apple/azimolabs-YuyXoY-0/inside-validity")
# A mount namespace of its own, then the system's root: /proc and /dev as a program expects them, the repository
# (read-only) and the check's working directory at their own paths, so that a path means the same inside and out.
# --kill-child: unshare's child is the program itself (sh and chroot exec it), stopped if unshare dies.
IN_ROOT = r'''set -e
root=$1; user=$2; shift 2
mkdir -p "$root/proc" "$root/dev" "$root$REPO" "$root$WORK"
# The unprivileged user reaches both through the root file system's own folders (its /root is 0700): the checkout
# may lie in root's home or a private temporary folder, and that must not decide what the check sees.
for dir in "$REPO" "$WORK"; do
    while [ "$dir" != / ]; do dir=$(dirname "$dir"); chmod o+x "$root$dir"; done
done
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --bind "$REPO" "$root$REPO"
mount -o remount,bind,ro "$root$REPO"
mount --bind "$WORK" "$root$WORK"
exec chroot --userspec="$user" "$root" "$@"
'''
WITHOUT_SWIFT = r'''set -e
mount -t tmpfs -o size=1m tmpfs /opt/swift
exec "$@"
'''


def in_root(root, user="0:0"):
    return ["unshare", "--mount", "--fork", "--kill-child=SIGTERM", "sh", "-c", IN_ROOT, "sh", root, user]


def without_swift():
    return ["unshare", "--mount", "--fork", "--kill-child=SIGTERM", "sh", "-c", WITHOUT_SWIFT, "sh"]


WORK = tempfile.mkdtemp(prefix="idtk-package-")
ENV = dict(os.environ, REPO=REPO, WORK=WORK)


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, env=ENV, **kwargs)


def terminate(process):
    """SIGTERM to the program: unshare's child where the program runs under unshare (unshare forwards no signal,
    and returns its child's exit status), else the process itself."""
    try:
        with open(f"/proc/{process.pid}/task/{process.pid}/children") as f:
            children = [int(pid) for pid in f.read().split()]
    except OSError:
        children = []
    name = open(f"/proc/{process.pid}/comm").read().strip() if os.path.exists(f"/proc/{process.pid}/comm") else ""
    for pid in (children if name == "unshare" and children else [process.pid]):
        os.kill(pid, signal.SIGTERM)


def bare_rootfs(work, name, include=(), deb=None):
    """A Debian bookworm root file system made by mmdebstrap: the minbase variant (Essential packages and apt)
    and `include`, apt resolving their dependencies; with `deb`, that package then installed by the rootfs's own
    apt (`apt-get install ./FILE.deb`, as a user would), which fetches what it depends on."""
    root = os.path.join(work, name)
    started = time.time()
    argv = ["mmdebstrap", "--variant=minbase"] + (["--include=" + ",".join(include)] if include else [])
    if deb:
        argv += ["--customize-hook=copy-in " + deb + " /tmp",
                 "--customize-hook=chroot \"$1\" env DEBIAN_FRONTEND=noninteractive apt-get install --yes "
                 "--no-install-recommends /tmp/" + os.path.basename(deb),
                 "--customize-hook=rm -f \"$1\"/tmp/" + os.path.basename(deb)]
    result = run(argv + ["bookworm", root])
    check(result.returncode == 0, f"{name}: mmdebstrap made a bare Debian rootfs in {time.time() - started:.0f} s"
          + ("" if result.returncode == 0 else ": " + result.stderr[-800:]))
    return root if result.returncode == 0 else None


def exercise(label, prefix, binary, work):
    """verify, audit and serve behind nginx, with `prefix + [binary, …]` as the command line."""
    version = run(prefix + [binary, "--version"])
    check(version.returncode == 0 and "commit" in version.stdout,
          f"{label}: idtoken --version names the version and commit ({version.stdout.strip() or version.stderr.strip()[-300:]})")

    path, case_id = VECTOR
    case = next(c for c in json.load(open(os.path.join(REPO, "Vectors", path)))["cases"] if c["id"] == case_id)
    verify = run(prefix + [binary] + arguments(case))
    verdict = json.loads(verify.stdout) if verify.stdout.startswith("{") else {}
    check(verify.returncode == 0 and verdict.get("valid") is True,
          f"{label}: idtoken verify accepts the real Apple token inside its validity ({verify.stderr.strip()[-300:]})")

    expected = json.load(open(os.path.join(SAMPLES, "expected-summary.json")))
    audit = run(prefix + [binary, "audit", os.path.join(SAMPLES, "sample.log"), "--config",
                          os.path.join(SAMPLES, "audit-config.json"), "--summary", "-", "--output", "/dev/null"])
    summary = json.loads(audit.stdout) if audit.stdout.startswith("{") else {}
    same = all(summary.get(key) == expected[key] for key in ("lines", "records", "valid", "invalid", "byError"))
    check(audit.returncode == 0 and same,
          f"{label}: idtoken audit of the sample gives the expected summary (exit {audit.returncode}: "
          f"{summary.get('valid')} valid, {summary.get('invalid')} invalid; {audit.stderr.strip()[-300:]})")

    serve_behind_nginx(label, prefix, binary, work)


def serve_behind_nginx(label, prefix, binary, work):
    key = Key("package-check")
    keys, config = firebase_config(work, key)
    os.chmod(work, 0o755)
    for p in (keys, config):
        os.chmod(p, 0o644)
    log = open(os.path.join(work, "serve.log"), "wb")
    serve = subprocess.Popen(prefix + [binary, "serve", "--config", config, "--listen", "127.0.0.1:0"],
                             stdout=subprocess.PIPE, stderr=log, env=ENV)
    nginx = None
    try:
        line = serve.stdout.readline().decode()
        check(line.startswith("listening on "), f"{label}: idtoken serve listens ({line.strip() or open(log.name).read()[-300:]})")
        if not line.startswith("listening on "):
            return
        port = int(line.strip().rsplit(":", 1)[1])
        upstream_port, nginx_port = free_port(), free_port()
        upstream = Upstream(upstream_port)
        nginx_dir = os.path.join(work, "nginx")
        os.makedirs(nginx_dir, exist_ok=True)
        conf = os.path.join(nginx_dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(dir=nginx_dir, serve=port, nginx=nginx_port, upstream=upstream_port))
        nginx = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-p", nginx_dir, "-c", conf],
                                 stderr=subprocess.DEVNULL)
        wait_until(lambda: socket.create_connection(("127.0.0.1", nginx_port), timeout=1).close() is None, 10)
        token = key.token(firebase_claims(sub="packaged-user"))
        status, _, body = request(nginx_port, path="/app", headers={"Authorization": "Bearer " + token})
        check(status == 200 and body.startswith(b"hello") and upstream.seen[-1:] and upstream.seen[-1]["subject"] == "packaged-user",
              f"{label}: serve behind nginx lets a valid token through with X-Auth-Subject (status {status})")
        now = int(time.time())
        expired = key.token(firebase_claims(iat=now - 7200, auth_time=now - 7200, exp=now - 3600))
        reached = len(upstream.seen)
        status, headers, _ = request(nginx_port, path="/app", headers={"Authorization": "Bearer " + expired})
        check(status == 401 and "www-authenticate" in headers and headers.get("x-auth-error") == "expired"
              and len(upstream.seen) == reached,
              f"{label}: serve behind nginx answers an expired token 401 with the challenge (status {status})")
        upstream.server.shutdown()
        if FAILURES and FAILURES[-1].startswith(label):
            print("serve log:\n" + open(log.name, errors="replace").read()[-2000:], flush=True)
    finally:
        if nginx:
            nginx.terminate()
            nginx.wait(timeout=10)
        terminate(serve)
        try:
            check(serve.wait(timeout=30) == 0, f"{label}: idtoken serve stops on SIGTERM with status 0")
        except subprocess.TimeoutExpired:
            serve.kill()
            check(False, f"{label}: idtoken serve stops on SIGTERM")


def starts_with(label, prefix, binary, config, work):
    """The shipped configuration is one idtoken serve accepts: it starts, and answers /healthz."""
    path = os.path.join(work, "shipped-serve.json")
    with open(path, "w") as f:
        f.write(config)
    os.chmod(path, 0o644)
    serve = subprocess.Popen(prefix + [binary, "serve", "--config", path, "--listen", "127.0.0.1:0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    line = serve.stdout.readline().decode()
    ok = line.startswith("listening on ")
    if ok:
        port = int(line.strip().rsplit(":", 1)[1])
        try:
            ok = request(port, path="/healthz")[0] == 200
        except OSError as error:    # answered nothing: the check fails, and the service is still stopped below
            ok, line = False, f"{line.strip()}, then {error}\n"
    terminate(serve)
    try:
        serve.wait(timeout=30)
    except subprocess.TimeoutExpired:
        serve.kill()
    check(ok, f"{label}: idtoken serve starts with it and answers /healthz"
          + ("" if ok else ": " + line + serve.stderr.read().decode()[-300:]))


def workdir(name):
    path = os.path.join(WORK, name)
    os.makedirs(path, mode=0o755, exist_ok=True)
    return path


def main():
    source_built = sys.argv[1] if len(sys.argv) > 1 else None
    tarballs = glob.glob(os.path.join(DIST, "idtoken-*-linux-*.tar.gz"))
    debs = glob.glob(os.path.join(DIST, "idtoken_*.deb"))
    layouts = [p for p in glob.glob(os.path.join(DIST, "idtoken-*-oci")) if os.path.isdir(p)]
    if not (len(tarballs) == len(debs) == len(layouts) == 1):
        raise SystemExit("dist/ does not hold one tarball, one .deb and one OCI layout: run scripts/package first")
    tarball, deb, layout = tarballs[0], debs[0], layouts[0]
    version = os.path.basename(layout)[len("idtoken-"):-len("-oci")]

    checksums = run(["sha256sum", "--check"] + glob.glob(os.path.join(DIST, "*.sha256")), cwd=DIST)
    check(checksums.returncode == 0, "every artifact matches its .sha256 (" + checksums.stdout.strip().replace("\n", ", ") + ")")

    work = WORK
    os.chmod(work, 0o755)
    try:
        # --- the tarball, on this machine with the toolchain hidden ---
        subprocess.run(["tar", "-xzf", tarball, "-C", work], check=True)
        unpacked = glob.glob(os.path.join(work, "idtoken-*"))[0]
        for member in ("bin/idtoken", "README.md", "LICENSE", "examples/serve.json", "systemd/idtoken-serve.service",
                       "completions/idtoken.bash", "completions/_idtoken", "completions/idtoken.fish",
                       "man/man1/idtoken.1", "man/man1/idtoken-serve.1"):
            check(os.path.exists(os.path.join(unpacked, member)), f"tarball: holds {member}")
        binary = os.path.join(unpacked, "bin", "idtoken")
        ldd = run(["ldd", binary]).stdout
        check("/opt/swift" not in ldd and "libswift" not in ldd and "libFoundation" not in ldd,
              "tarball: ldd shows no library of the Swift toolchain")
        if source_built:
            control = run(without_swift() + [source_built, "--version"])
            check(control.returncode != 0 and "libswift" in control.stderr and "cannot open shared object file" in control.stderr,
                  "control: with /opt/swift hidden, the source build fails on the Swift runtime ("
                  + control.stderr.strip()[-120:] + ")")
        host_work = os.path.join(work, "host")
        os.makedirs(host_work)
        exercise("tarball, /opt/swift hidden", without_swift(), binary, host_work)

        # --- the tarball on a bare Debian system with the runtime libraries the README names ---
        root = bare_rootfs(work, "rootfs-tarball", ["libssl3", "libjansson4", "libhiredis0.14", "zlib1g"])
        if root:
            subprocess.run(["tar", "-xzf", tarball, "-C", os.path.join(root, "opt")], check=True)
            inside = "/opt/" + os.path.basename(unpacked) + "/bin/idtoken"
            check(not os.path.exists(os.path.join(root, "opt/swift")) and not os.path.exists(os.path.join(root, "usr/bin/swift")),
                  "bare rootfs: no Swift toolchain in it")
            exercise("tarball on bare Debian", in_root(root, "65534:65534"), inside, workdir("tarball-rootfs"))
            shutil.rmtree(root, ignore_errors=True)

        # --- the .deb, installed by apt (which resolves its Depends) on a bare Debian system ---
        # systemd too, as on a server: the unit is checked against the units it names (sysinit.target, …).
        root = bare_rootfs(work, "rootfs-deb", ["systemd"], deb=os.path.abspath(deb))
        if root:
            status = run(["chroot", root, "dpkg-query", "-W", "-f=${Status} ${Version} ${Conffiles}", "idtoken"]).stdout
            check(status.startswith("install ok installed " + version) and "/etc/idtoken/serve.json" in status,
                  f"deb: installed by apt, /etc/idtoken/serve.json a conffile ({status.strip()[:120]})")
            for path in ("usr/bin/idtoken", "lib/systemd/system/idtoken-serve.service", "usr/share/man/man1/idtoken.1.gz",
                         "usr/share/man/man1/idtoken-audit.1.gz", "usr/share/doc/idtoken/copyright",
                         "usr/share/bash-completion/completions/idtoken"):
                check(os.path.exists(os.path.join(root, path)), f"deb: installs /{path}")
            unit = os.path.join(root, "lib/systemd/system/idtoken-serve.service")
            verify = run(["systemd-analyze", "verify", "--man=no", "--root=" + root, "/lib/systemd/system/idtoken-serve.service"])
            check(verify.returncode == 0, "deb: systemd-analyze verify accepts idtoken-serve.service"
                  + ("" if verify.returncode == 0 else ": " + (verify.stderr + verify.stdout)[-400:]))
            security = run(["systemd-analyze", "security", "--offline=true", "--threshold=20", unit])
            exposure = [line for line in security.stdout.splitlines() if "Overall exposure level" in line]
            check(security.returncode == 0 and exposure, "deb: the unit's hardening (systemd-analyze security, offline): "
                  + (exposure[0].split(":", 1)[1].strip() if exposure else security.stderr[-300:]))
            shipped = open(os.path.join(root, "etc/idtoken/serve.json")).read()
            starts_with("deb: /etc/idtoken/serve.json", in_root(root, "65534:65534"), "/usr/bin/idtoken", shipped,
                        workdir("deb-shipped"))
            exercise("deb on bare Debian", in_root(root, "65534:65534"), "/usr/bin/idtoken", workdir("deb-rootfs"))
            shutil.rmtree(root, ignore_errors=True)

        # --- the OCI image ---
        image = f"oci:{layout}:{version}"
        inspect = run(["skopeo", "inspect", "--config", image])
        config = json.loads(inspect.stdout).get("config", {}) if inspect.returncode == 0 else {}
        labels = config.get("Labels", {})
        check(inspect.returncode == 0, "oci: skopeo inspect reads the image" + ("" if inspect.returncode == 0 else ": " + inspect.stderr[-300:]))
        check(config.get("User") == "65532:65532", f"oci: runs as a non-root user ({config.get('User')})")
        check(config.get("Entrypoint") == ["/usr/bin/idtoken"], f"oci: idtoken is the entry point ({config.get('Entrypoint')})")
        check("8080/tcp" in config.get("ExposedPorts", {}), "oci: exposes the serve port 8080")
        check(labels.get("org.opencontainers.image.version") == version and labels.get("org.opencontainers.image.revision"),
              f"oci: labelled with its version and revision ({labels.get('org.opencontainers.image.version')}, "
              f"{labels.get('org.opencontainers.image.revision', '')[:12]})")
        archive = run(["skopeo", "inspect", f"oci-archive:{os.path.join(DIST, f'idtoken-{version}-oci.tar')}:{version}"])
        check(archive.returncode == 0, "oci: skopeo reads the oci-archive too")
        bundle = os.path.join(work, "bundle")
        unpack = run(["umoci", "unpack", "--image", f"{layout}:{version}", bundle])
        check(unpack.returncode == 0, "oci: umoci unpacks the image" + ("" if unpack.returncode == 0 else ": " + unpack.stderr[-300:]))
        if unpack.returncode == 0:
            root = os.path.join(bundle, "rootfs")
            check(not os.path.exists(os.path.join(root, "bin/sh")) and not os.path.exists(os.path.join(root, "usr/bin/apt")),
                  "oci: no shell and no package manager in the image")
            size = int(run(["du", "-sm", root]).stdout.split()[0])
            check(size < 200, f"oci: the root file system is {size} MB")
            user = config.get("User", "65532:65532")
            entry = config.get("Entrypoint", ["/usr/bin/idtoken"])[0]
            starts_with("oci: /etc/idtoken/serve.json", in_root(root, user), entry,
                        open(os.path.join(root, "etc/idtoken/serve.json")).read().replace("0.0.0.0:8080", "127.0.0.1:0"),
                        workdir("oci-shipped"))
            exercise("oci image rootfs under chroot", in_root(root, user), entry, workdir("oci-rootfs"))
            # A bare chroot of the image, without /proc: the Swift runtime cannot read the command line there, and the
            # tool must say so and exit 2 rather than print its help and exit 0 as if it had run.
            for argv in ([entry, "--version"], [entry, "verify", "a.b.c", "--provider", "apple"]):
                bare = run(["chroot", "--userspec=" + user, root] + argv)
                check(bare.returncode == 2 and "/proc" in bare.stderr and not bare.stdout,
                      f"oci rootfs without /proc: {' '.join(argv[1:])} says it cannot read its arguments, exit 2 "
                      f"(exit {bare.returncode}: {(bare.stderr or bare.stdout).strip()[:160]})")

        # --- deployment recipes ---
        manifests = sorted(glob.glob(os.path.join(REPO, "packaging", "kubernetes", "*.yaml")))
        validate = run([sys.executable, "-m", "kubernetes_validate", "--strict", "-k", "1.30.0"] + manifests)
        check(validate.returncode == 0 and len(manifests) == 3,
              f"kubernetes: {len(manifests)} manifests valid against the 1.30 schemas, strictly"
              + ("" if validate.returncode == 0 else ": " + (validate.stdout + validate.stderr)[-600:]))
        for manifest in manifests:
            for config_text in configmap_files(manifest, "serve.json"):
                starts_with(f"kubernetes: {os.path.basename(manifest)}'s serve.json", without_swift(), binary,
                            config_text, host_work)
            for job in documents(manifest, "Job"):
                run_indexed_job(manifest, job, binary, workdir("job"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"{len(FAILURES)} failed" if FAILURES else "package: every check passed", flush=True)
    sys.exit(1 if FAILURES else 0)


def documents(manifest, kind):
    import yaml
    return [doc for doc in yaml.safe_load_all(open(manifest)) if doc and doc.get("kind") == kind]


def configmap_files(manifest, name):
    return [doc["data"][name] for doc in documents(manifest, "ConfigMap") if name in doc.get("data", {})]


def run_indexed_job(manifest, job, binary, work):
    """Every index of an Indexed Job's audit container, run as Kubernetes would start it (its args with
    $(JOB_COMPLETION_INDEX) expanded, JOB_COMPLETION_INDEX and its env set), the sample log and configuration at its
    mount paths' places; then `idtoken audit merge` of the shards' summaries gives the sample's expected counts."""
    spec = job["spec"]
    container = spec["template"]["spec"]["containers"][0]
    completions = spec["completions"]
    places = {"/logs/gateway-2026-01.log.gz": os.path.join(SAMPLES, "sample.log.gz"),
              "/config/audit-config.json": os.path.join(SAMPLES, "audit-config.json"), "/results/": work + "/"}
    summaries, statuses = [], []
    for index in range(completions):
        env = dict(ENV, JOB_COMPLETION_INDEX=str(index), **{e["name"]: e["value"] for e in container.get("env", [])})
        args = []
        for arg in container["args"]:
            arg = arg.replace("$(JOB_COMPLETION_INDEX)", str(index))
            for path, place in places.items():
                arg = arg.replace(path, place)
            args.append(arg)
        statuses.append(subprocess.run(without_swift() + [binary] + args, capture_output=True, env=env).returncode)
        summaries.append(os.path.join(work, f"summary-{index}.json"))
    merge = run(without_swift() + [binary, "audit", "merge", *summaries, "--summary", "-"])
    merged = json.loads(merge.stdout) if merge.stdout.startswith("{") else {}
    expected = json.load(open(os.path.join(SAMPLES, "expected-summary.json")))
    check(statuses == [0] * completions and merged.get("records") == expected["records"]
          and merged.get("valid") == expected["valid"] and merged.get("byError") == expected["byError"],
          f"kubernetes: {os.path.basename(manifest)}'s {completions} indexes, as the Job starts them, merge into the "
          f"sample's summary (exit statuses {statuses}; {merged.get('records')} records, {merged.get('valid')} valid"
          + ("" if merge.returncode == 0 else "; " + merge.stderr[-300:]) + ")")


if __name__ == "__main__":
    main()
