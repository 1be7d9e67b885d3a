#!/usr/bin/env bash
# Installs what IDTokenKit needs on a Debian or Ubuntu machine that already has a Swift toolchain.
# Sourced by scripts/demo and scripts/test. Safe to run again: it installs only what is missing.
set -euo pipefail

# nginx: scripts/check_serve.py runs `idtoken serve` behind a real nginx (auth_request); wrk: the serve benchmark;
# parallel: GNU parallel, which the audit's pipe-mode check (Vectors/tools/check_shards.py) runs as docs/audit.md shows;
# caddy: scripts/check_caddy.py runs the service behind a real Caddy (forward_auth).
IDTK_APT_PACKAGES=(pkg-config libssl-dev libjansson-dev libhiredis-dev redis-server zlib1g-dev nginx wrk parallel caddy)

idtk_missing_packages() {
    local missing=()
    for pkg in "${IDTK_APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    echo "${missing[@]:-}"
}

idtk_setup() {
    if ! command -v swift >/dev/null 2>&1; then
        echo "error: no Swift toolchain on PATH. Install Swift 6.1 or newer from swift.org, then run this again." >&2
        exit 2
    fi
    local missing
    missing=$(idtk_missing_packages)
    if [ -n "$missing" ]; then
        if ! command -v dpkg-query >/dev/null 2>&1; then
            echo "error: not a Debian-like system. Install OpenSSL 3 (libcrypto), Jansson, hiredis, redis-server, GNU parallel and pkg-config with your package manager." >&2
            exit 2
        fi
        if [ "$(id -u)" = 0 ]; then
            echo "==> installing system packages: $missing" >&2
            export DEBIAN_FRONTEND=noninteractive
            apt-get update -qq >&2
            # shellcheck disable=SC2086
            apt-get install -y -qq --no-install-recommends $missing >&2
        elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            echo "==> installing system packages with sudo: $missing" >&2
            sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
            # shellcheck disable=SC2086
            sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2
        else
            echo "error: missing system packages: $missing" >&2
            echo "       run:  sudo apt-get install $missing" >&2
            exit 2
        fi
    fi
}

idtk_python_setup() {
    # The independent vector checker uses the 'cryptography' package, not this project's code.
    if ! python3 -c 'import cryptography' >/dev/null 2>&1; then
        echo "==> installing the Python 'cryptography' package for the independent vector checker" >&2
        python3 -m pip install --quiet cryptography >&2 || {
            echo "error: could not install the Python 'cryptography' package; run: python3 -m pip install cryptography" >&2
            exit 2
        }
    fi
}

idtk_package_check_setup() {
    # scripts/check_package.py validates the Kubernetes manifests against Kubernetes' schemas, which this PyPI
    # package carries (offline).
    if ! python3 -c 'import kubernetes_validate' >/dev/null 2>&1; then
        echo "==> installing the Python 'kubernetes-validate' package for the deployment recipes' check" >&2
        python3 -m pip install --quiet kubernetes-validate >&2 || {
            echo "error: could not install the Python 'kubernetes-validate' package; run: python3 -m pip install kubernetes-validate" >&2
            exit 2
        }
    fi
}

idtk_spark_setup() {
    # scripts/check_spark.py runs docs/audit.md's PySpark recipe in local mode: Java 17 and PyPI's pyspark.
    if ! command -v java >/dev/null 2>&1; then
        local saved=("${IDTK_APT_PACKAGES[@]}")
        IDTK_APT_PACKAGES=(openjdk-17-jre-headless)
        idtk_setup
        IDTK_APT_PACKAGES=("${saved[@]}")
    fi
    if ! python3 -c 'import pyspark' >/dev/null 2>&1; then
        echo "==> installing the Python 'pyspark' package for the Spark recipe's check (about 320 MB)" >&2
        python3 -m pip install --quiet pyspark >&2 || {
            echo "error: could not install the Python 'pyspark' package; run: python3 -m pip install pyspark" >&2
            exit 2
        }
    fi
}

idtk_grpc_check_setup() {
    # scripts/check_grpc.py calls the gRPC door from Python's grpcio, with stubs grpcio-tools generates from Protos/.
    if ! python3 -c 'import grpc, grpc_tools' >/dev/null 2>&1; then
        echo "==> installing the Python 'grpcio' and 'grpcio-tools' packages for the gRPC door's check" >&2
        python3 -m pip install --quiet grpcio grpcio-tools >&2 || {
            echo "error: could not install grpcio and grpcio-tools; run: python3 -m pip install grpcio grpcio-tools" >&2
            exit 2
        }
    fi
}
