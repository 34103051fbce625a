#!/usr/bin/env bash
# The GPU runtime suite (tests marked `gpu`) on a CUDA machine, from a clean checkout.
#
#   bash tests/runtime/gpu_suite.sh fetch        # where pip reaches the index, in the test venv:
#                                                # wheels for CPython 3.12 x86-64 into .whl/
#   bash tests/runtime/gpu_suite.sh run [DIR]    # on the GPU machine (no network needed): install
#                                                # .whl/ beside its torch/accelerate/transformers,
#                                                # run the suite, write DIR/gpu-suite.log and
#                                                # DIR/launches.log (every launch's whole output)
#
# The GPU machines have torch, accelerate and transformers but not libcst (trllint itself),
# deepspeed or deepspeed's small dependencies: those travel as wheels, at the versions of the
# test venv this script is fetched from, so the GPU run tests what CI tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
WHEELS=.whl
PYTHON_VERSION=${GPU_PYTHON_VERSION:-3.12}

fetch() {
    local python=${PYTHON:-.venv/bin/python}
    # name==version as installed here.
    pins=$("$python" - <<'EOF'
import importlib.metadata as m
names = ["libcst", "pyyaml", "deepspeed", "hjson", "pydantic", "pydantic_core", "annotated-types", "typing-inspection", "typing_extensions"]
print(" ".join(f"{n}=={m.version(n)}" for n in names))
EOF
)
    mkdir -p "$WHEELS"
    local binary=() deepspeed=""
    for pin in $pins; do
        case $pin in deepspeed==*) deepspeed=$pin ;; *) binary+=("$pin") ;; esac
    done
    "$python" -m pip download -q --no-deps --only-binary=:all: --python-version "$PYTHON_VERSION" \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$WHEELS" "${binary[@]}"
    # DeepSpeed publishes only a source archive; its wheel is pure Python (ops build at run time).
    "$python" -m pip wheel -q --no-deps -w "$WHEELS" "$deepspeed"
    ls "$WHEELS"
}

run() {
    local out=${1:-gpu-run}
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/trllint-gpu-site "$WHEELS"/*.whl
    export PYTHONPATH=/tmp/trllint-gpu-site${PYTHONPATH:+:$PYTHONPATH}
    export TRLLINT_RUNTIME_LOG=$out/launches.log
    : >"$TRLLINT_RUNTIME_LOG"
    {
        echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
        python3 - <<'EOF'
import importlib.metadata as m, platform, torch
print("python", platform.python_version(), "| torch", torch.__version__, "cuda", torch.version.cuda,
      "| gpus", torch.cuda.device_count())
print(" | ".join(f"{n} {m.version(n)}" for n in ("accelerate", "transformers", "deepspeed", "libcst")))
EOF
        python3 -m pytest -p no:cacheprovider tests/runtime -m gpu -v -rs --no-header -o addopts=""
    } 2>&1 | tee "$out/gpu-suite.log"
}

case ${1:-} in
    fetch) fetch ;;
    run) run "${2:-gpu-run}" ;;
    *) echo "usage: $0 fetch | run [DIR]" >&2; exit 2 ;;
esac
