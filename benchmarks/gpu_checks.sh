#!/usr/bin/env bash
# Every GPU check of fnx in one run, for a machine with an NVIDIA GPU and JAX's CUDA plugin:
# the examples on cuda, the cuda test subset on the real device (CI runs it on JAX's CPU under
# FNX_CUDA_ON_CPU=1), then the GPU benchmarks. Each step has a time limit, so a slow or stuck
# step costs its own limit only; logs go to $OUT (default /tmp/fnx-gpu), a summary to stdout.
#
#     bash benchmarks/gpu_checks.sh            # ~11 min on one H200 with 16 cores (BUDGET=S: no step starts after S s)
#     QUICK=1 bash benchmarks/gpu_checks.sh    # examples and benchmarks only (~4 min)
#     ONLY="bench_amp mini_gpt" bash benchmarks/gpu_checks.sh    # the named steps only
#
# fnx is used from the checkout (PYTHONPATH), with the machine's own jax/numpy/scipy.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/fnx-gpu}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
# several test workers share the GPU: allocate on demand instead of 75% per process
export XLA_PYTHON_CLIENT_PREALLOCATE=false
LOG=$OUT/gpu.log
: >"$LOG"

BUDGET=${BUDGET:-100000}     # seconds: no step starts after this

step() {    # step NAME SECONDS COMMAND...: run with a limit, log, report the status
    local name=$1 limit=$2 t0=$SECONDS rc
    shift 2
    if [ "$SECONDS" -ge "$BUDGET" ]; then echo "$name: skipped (over BUDGET)"; return; fi
    case " ${ONLY:-$name} " in *" $name "*) ;; *) return ;; esac
    echo "===== $name: $*" >>"$LOG"
    timeout "$limit" "$@" >>"$LOG" 2>&1
    rc=$?
    echo "===== $name: rc=$rc in $((SECONDS - t0)) s" >>"$LOG"
    echo "$name: rc=$rc in $((SECONDS - t0)) s"
}

nvidia-smi -L 2>&1 | tee -a "$LOG"
step env 60 "$PY" -c "
import jax, numpy, scipy, fnx
print('jax', jax.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__)
print('devices', jax.devices(), 'fnx.cuda.is_available', fnx.cuda.is_available())
x = fnx.randn(4, 4, device='cuda')
print('cuda tensor', x.device, type(x._data).__name__, float((x @ x).sum()))"
step quickstart 60 "$PY" examples/quickstart.py
step bench_gpu 200 "$PY" benchmarks/bench_gpu.py
step bench_mlp_train 120 "$PY" benchmarks/bench_mlp_train.py --device cuda --repeats 30
if [ -z "${QUICK:-}" ]; then
    step pytest_cuda 100 "$PY" -m pytest -q -n 12 -p no:cacheprovider -rfE --tb=short \
        tests/test_cuda.py tests/test_custom_ops.py tests/test_bad_inputs.py
fi
step bench_compile_memory 60 "$PY" benchmarks/bench_compile_memory.py --device cuda
step bench_gpt_block 150 "$PY" benchmarks/bench_gpt_block.py --device cuda
if [ -z "${QUICK:-}" ]; then
    step pytest_cuda_opinfo 150 "$PY" -m pytest -q -n 14 -p no:cacheprovider -rfE --tb=line \
        tests/test_cuda_opinfo.py
fi
# first call by precision: on an H200 (2026-11-27) fnx's first GPT-block call took 7.5 s
# against jax.jit's 18.9 s at full float32, 2.0 s against 2.9 s with TF32, and ~1.2 s each
# without autotuning: the seconds are XLA autotuning float32 GEMMs (an earlier 15 s vs
# 3.3 s compared fnx's full float32 with JAX's TF32 default)
step gpt_block_tf32 150 "$PY" benchmarks/bench_gpt_block.py --device cuda --repeats 5 --precision high
XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_autotune_level=0" \
    step gpt_block_no_autotune 150 "$PY" benchmarks/bench_gpt_block.py --device cuda --repeats 5
step bench_amp 150 "$PY" benchmarks/bench_amp.py --device cuda
step call_overhead 60 "$PY" benchmarks/bench_call_overhead.py --device cuda --calls 1000
step polynomials_cuda 60 "$PY" -m pytest -q -p no:cacheprovider -rfE --tb=short \
    tests/test_polynomials_lowering.py
step mini_gpt 60 "$PY" examples/mini_gpt.py --quick --device cuda

echo "----- summary (full log: $LOG)"
grep -E "^=====.*rc=|passed|failed|error|goal|x \(|/ jax.jit|/ JAX|overhead|Error|loss" "$LOG" \
    | grep -v "^===== .*: [^r]" | tail -n 120
