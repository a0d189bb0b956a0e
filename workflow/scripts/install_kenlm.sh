#!/usr/bin/env bash
# Build KenLM's `lmplz` (n-gram LM estimation) and `build_binary` into PREFIX/bin.
#
#   workflow/scripts/install_kenlm.sh PREFIX        (make install runs it with PREFIX = .venv)
#
# The sources are the kenlm source distribution on PyPI (it ships lm/builder, i.e. lmplz, and
# build_binary, not only the Python module), pinned by version and SHA-256. Only the two
# targets are compiled, with cmake, on every core. The build dependencies are Debian's Boost
# (program_options, system, thread, and test: KenLM's CMakeLists asks for all four), zlib,
# bz2, lzma, cmake and g++; when some are missing and we are root with apt-get they are
# installed, otherwise the script stops and says what to install.
#
# Idempotent: nothing is done when both binaries are already in PREFIX/bin and load. Quiet:
# the build log is printed only when a step fails. Environment overrides: PYTHON (the
# interpreter whose pip downloads the sdist), KENLM_VERSION + KENLM_SHA256, KENLM_MAX_ORDER
# (highest n-gram order; 6 matches the PyPI `kenlm` Python module), KENLM_JOBS.
set -euo pipefail

if [[ $# -ne 1 || $1 == -* ]]; then
    echo "usage: $0 PREFIX   (builds PREFIX/bin/lmplz and PREFIX/bin/build_binary)" >&2
    exit 64
fi
mkdir -p "$1/bin"
PREFIX=$(cd "$1" && pwd)
KENLM_VERSION=${KENLM_VERSION:-0.3.0}
KENLM_SHA256=${KENLM_SHA256:-c4628bb9fb63c8a6f9240035b8b037385cfc404cb72e933cf48878291edac1e8}
KENLM_MAX_ORDER=${KENLM_MAX_ORDER:-6}
KENLM_JOBS=${KENLM_JOBS:-$(nproc 2>/dev/null || echo 2)}
BINARIES=(lmplz build_binary)
DEBIAN_PACKAGES=(cmake g++ make libboost-program-options-dev libboost-system-dev libboost-thread-dev
                 libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev)

say() { echo "install_kenlm: $*" >&2; }

binaries_work() {
    local name
    for name in "${BINARIES[@]}"; do
        [[ -x $PREFIX/bin/$name ]] || return 1
        # A binary whose shared Boost libraries were removed since is not "installed".
        if command -v ldd >/dev/null && ldd "$PREFIX/bin/$name" 2>/dev/null | grep -q "not found"; then
            return 1
        fi
    done
}

if binaries_work; then
    say "already built: $PREFIX/bin/lmplz, $PREFIX/bin/build_binary"
    exit 0
fi

# ---- build dependencies -------------------------------------------------------------------
missing_debian_packages() {
    local package
    for package in "${DEBIAN_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || echo "$package"
    done
}

explain_dependencies() {
    cat >&2 <<EOF
install_kenlm: cannot build KenLM: missing build dependencies${1:+: $1}.
  Debian/Ubuntu:  apt-get install --no-install-recommends ${DEBIAN_PACKAGES[*]}
  Fedora/RHEL:    dnf install cmake gcc-c++ make boost-devel zlib-devel bzip2-devel xz-devel
  macOS:          brew install cmake boost
  conda-forge:    conda install -c conda-forge cmake make cxx-compiler libboost-devel zlib bzip2 xz
                  (conda-forge's own 'kenlm' package is the Python module; if your environment's
                  bin/ has lmplz and build_binary, point KENLM_BIN at that folder instead)
Then rerun: $0 $PREFIX
EOF
    exit 1
}

if command -v dpkg-query >/dev/null; then
    mapfile -t MISSING < <(missing_debian_packages)
    if ((${#MISSING[@]})); then
        if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
            say "installing Debian packages: ${MISSING[*]}"
            APT_LOG=$(mktemp)
            # Other jobs may hold the dpkg lock for a while: wait for it rather than fail.
            if ! { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq &&
                   DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
                       --no-install-recommends "${MISSING[@]}"; } >"$APT_LOG" 2>&1; then
                tail -n 30 "$APT_LOG" >&2
                rm -f "$APT_LOG"
                explain_dependencies "apt-get failed for ${MISSING[*]}"
            fi
            rm -f "$APT_LOG"
        else
            explain_dependencies "${MISSING[*]} (not root, or no apt-get)"
        fi
    fi
else
    for tool in cmake make c++; do
        command -v "$tool" >/dev/null || explain_dependencies "no '$tool' on PATH"
    done
    # Without dpkg the libraries are checked by cmake's find_package below.
fi

# ---- sources: the PyPI sdist ----------------------------------------------------------------
if [[ -z ${PYTHON:-} ]]; then
    if [[ -x $PREFIX/bin/python ]]; then PYTHON=$PREFIX/bin/python; else PYTHON=python3; fi
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kenlm-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LOG=$WORK/build.log

run_logged() {  # run a step with its output in the log; on failure show the log's tail and stop
    local what=$1
    shift
    if ! "$@" >>"$LOG" 2>&1; then
        say "$what failed; the last lines of its log:"
        tail -n 40 "$LOG" >&2
        exit 1
    fi
}

# --no-binary kenlm (not :all:): only kenlm as source; its build requirements come as wheels,
# otherwise pip would compile cmake itself from source just to read kenlm's metadata.
run_logged "downloading the kenlm $KENLM_VERSION sdist" \
    "$PYTHON" -m pip download --quiet --no-deps --no-binary kenlm --dest "$WORK" "kenlm==$KENLM_VERSION"
SDIST=$WORK/kenlm-$KENLM_VERSION.tar.gz
FOUND_SHA256=$(sha256sum "$SDIST" | cut -d' ' -f1)
if [[ $FOUND_SHA256 != "$KENLM_SHA256" ]]; then
    say "$SDIST: SHA-256 $FOUND_SHA256, expected $KENLM_SHA256 (set KENLM_SHA256 with KENLM_VERSION)"
    exit 1
fi
tar -xzf "$SDIST" -C "$WORK"
SRC=$WORK/kenlm-$KENLM_VERSION
[[ -f $SRC/lm/builder/lmplz_main.cc ]] || { say "$SDIST has no lm/builder/lmplz_main.cc"; exit 1; }

# ---- build only the two targets --------------------------------------------------------------
run_logged "cmake configure" cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release \
    -DKENLM_MAX_ORDER="$KENLM_MAX_ORDER" -DCOMPILE_TESTS=OFF -DENABLE_PYTHON=OFF
run_logged "cmake build" cmake --build "$WORK/build" --target "${BINARIES[@]}" --parallel "$KENLM_JOBS"
for name in "${BINARIES[@]}"; do
    # Copy under a temporary name then rename, so an interrupted install leaves no half binary.
    install -m 0755 "$WORK/build/bin/$name" "$PREFIX/bin/.$name.tmp"
    mv -f "$PREFIX/bin/.$name.tmp" "$PREFIX/bin/$name"
done
say "built KenLM $KENLM_VERSION (max order $KENLM_MAX_ORDER): $PREFIX/bin/lmplz, $PREFIX/bin/build_binary"
