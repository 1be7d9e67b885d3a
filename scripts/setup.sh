#!/usr/bin/env bash
# Installs what IDTokenKit's scripts need on a Debian or Ubuntu machine that already has a Swift toolchain.
# Sourced by scripts/demo, scripts/test, scripts/package and scripts/sanitize; each asks for what it uses, so the
# demo installs the build's libraries and nothing of the test suite's. Safe to run again: it installs only what
# is missing. The package manager's output goes to a log (.build/setup.log); one line is printed per install.
set -euo pipefail

# What building idtoken needs (system libraries through SwiftPM's system-library targets).
IDTK_BUILD_PACKAGES=(pkg-config libssl-dev libjansson-dev libhiredis-dev zlib1g-dev)
# What the test suite runs beside the binaries: redis-server (the Redis replay cache's tests), nginx and caddy
# (scripts/check_serve.py, scripts/check_caddy.py: the service behind real proxies), GNU parallel (the audit's
# pipe mode as docs/audit.md shows it, Vectors/tools/check_shards.py).
IDTK_TEST_PACKAGES=(redis-server nginx caddy parallel)
IDTK_SETUP_LOG=${IDTK_SETUP_LOG:-.build/setup.log}

idtk_require_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        echo "error: no Swift toolchain on PATH. Install Swift 6.1 or newer from swift.org, then run this again." >&2
        exit 2
    fi
}

# idtk_install_packages WHY PACKAGE...: installs those of the Debian packages that are missing.
idtk_install_packages() {
    local why=$1 missing=() pkg
    shift
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "error: not a Debian-like system. Install with your package manager: ${missing[*]} ($why)" >&2
        exit 2
    fi
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo)
        else
            echo "error: missing system packages ($why): ${missing[*]}" >&2
            echo "       run:  sudo apt-get install ${missing[*]}" >&2
            exit 2
        fi
    fi
    mkdir -p "$(dirname "$IDTK_SETUP_LOG")"
    echo "==> installing ${missing[*]} ($why; apt-get's output in $IDTK_SETUP_LOG)" >&2
    if ! { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
           "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
           >>"$IDTK_SETUP_LOG" 2>&1; then
        tail -20 "$IDTK_SETUP_LOG" >&2
        echo "error: apt-get could not install ${missing[*]} (log above, whole in $IDTK_SETUP_LOG)" >&2
        exit 2
    fi
}

# idtk_install_python WHY MODULE PACKAGE...: installs the PyPI packages when the module does not import.
idtk_install_python() {
    local why=$1 module=$2
    shift 2
    python3 -c "import $module" >/dev/null 2>&1 && return 0
    mkdir -p "$(dirname "$IDTK_SETUP_LOG")"
    echo "==> installing the Python package(s) $* ($why; pip's output in $IDTK_SETUP_LOG)" >&2
    if ! python3 -m pip install --quiet "$@" >>"$IDTK_SETUP_LOG" 2>&1; then
        tail -20 "$IDTK_SETUP_LOG" >&2
        echo "error: could not install $*; run: python3 -m pip install $*" >&2
        exit 2
    fi
}

# The toolchain and the libraries a build needs: scripts/demo, and every build of scripts/test.
idtk_setup() {
    idtk_require_swift
    idtk_install_packages "to build idtoken" "${IDTK_BUILD_PACKAGES[@]}"
}

# The tools the test suite runs beside the binaries.
idtk_test_setup() {
    idtk_install_packages "for the test suite" "${IDTK_TEST_PACKAGES[@]}"
}

idtk_python_setup() {
    # The independent vector checker uses the 'cryptography' package, not this project's code.
    idtk_install_python "the independent vector checker" cryptography cryptography
}

idtk_package_check_setup() {
    # scripts/check_package.py validates the Kubernetes manifests against Kubernetes' schemas, which this PyPI
    # package carries (offline).
    idtk_install_python "the deployment recipes' check" kubernetes_validate kubernetes-validate
}

idtk_spark_setup() {
    # scripts/check_spark.py runs docs/audit.md's PySpark recipe in local mode: Java 17 and PyPI's pyspark.
    command -v java >/dev/null 2>&1 || idtk_install_packages "the Spark recipe's check" openjdk-17-jre-headless
    idtk_install_python "the Spark recipe's check, about 320 MB" pyspark pyspark
}

idtk_grpc_check_setup() {
    # scripts/check_grpc.py calls the gRPC door from Python's grpcio, with stubs grpcio-tools generates from Protos/;
    # scripts/check_grpc_hostile.py builds HTTP/2 frames with h2's hpack and hyperframe.
    idtk_install_python "the gRPC door's checks" "grpc, grpc_tools, hpack, hyperframe" grpcio grpcio-tools h2
}
