#!/usr/bin/env bash
# The GPU host, simulated on CPU (issue 53; docs/stages/acceptance.md "The CI simulation"): a fresh venv holding only
# the host's packages at the host's versions where PyPI has them (pipeline/acceptance/host.py; CPU torch 2.13.0
# standing in for 2.11 + CUDA 13), none of the corpus stages' (polars, blingfire, jsonschema, opencc, jieba,
# snakemake); the bundle made by the project's venv (`python -m pipeline gpu-bundle` for this interpreter); then the
# one command a GPU host runs, with --device cpu: it installs the bundle's wheels with pip --no-index, runs the
# preflight and every row.
#
#   .ci/host_simulation.sh venv        make the simulated host's venv (.ci/run starts it beside the tests)
#   .ci/host_simulation.sh run         the bundle and the run, in it
set -euo pipefail
cd "$(dirname "$0")/.."
SIM=${HOST_SIM:-/tmp/ulr-host-simulation}
PROJECT=.venv/bin/python

make_venv() {
    rm -rf "$SIM"
    python3 -m venv "$SIM"
    local version
    version=$("$SIM/bin/python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    # shellcheck disable=SC2046  # one requirement a word
    "$SIM/bin/python" -m pip install --quiet --disable-pip-version-check $("$PROJECT" -c "
from pipeline.acceptance import gpu_bundle, host
print(' '.join(host.simulation_requirements('$version', gpu_bundle.lock_pins())))")
    touch "$SIM/.made"
}

run_simulation() {
    [[ -f $SIM/.made ]] || make_venv
    local version bundle out
    version=$("$SIM/bin/python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    for lacking in polars blingfire jsonschema opencc jieba snakemake; do
        if "$SIM/bin/python" -c "import $lacking" 2>/dev/null; then
            echo "host simulation: $lacking is installed, and the host has none" >&2
            return 1
        fi
    done
    bundle=$(mktemp -d)/gpu-bundle
    out=$(mktemp -d)/out
    "$PROJECT" -m pipeline gpu-bundle --python-version "$version" --out "$bundle"
    # the host's python3 from the repository root, nothing of the project's venv on its path
    env -u PYTHONPATH -u VIRTUAL_ENV PATH="$SIM/bin:/usr/bin:/bin" \
        "$SIM/bin/python" -m pipeline gpu-acceptance --device cpu --bundle "$bundle" --out "$out"
    ls "$out"
}

case ${1:-run} in
    venv) make_venv ;;
    run) run_simulation ;;
    *) echo "usage: $0 [venv|run]" >&2; exit 2 ;;
esac
