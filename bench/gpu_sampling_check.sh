#!/bin/sh
# The GPU check of FlashInfer's sampling kernels, from a bare machine (an NVIDIA GPU and driver,
# Python >= 3.10, a C++ compiler for nvcc's host side) to a verdict, in one command:
#
#     bench/gpu_sampling_check.sh [FLASHINFER_VERSION]        # default 0.7.2.post1
#
# It makes a venv under $WORKDIR, installs torch ($TORCH_SPEC) and the FlashInfer release from
# the package index, NVIDIA's nvcc wheels matching torch's CUDA (unless CUDA_HOME names an
# installed toolkit), builds FlashInfer's sampling module cold (a fresh JIT workspace), runs
# probes/validate_sampling.py (every kernel against its exact distribution, then the speed
# against torch.multinomial) and prints the compile time, each kernel's verdict and the speed
# ratio (bench/gpu_sampling_summary.py). Exit 0 only when every kernel passed.
#
# Environment: WORKDIR (default ${TMPDIR:-/tmp}/detective-tui-gpu-check), PYTHON (python3),
# TORCH_SPEC (torch==2.13.0: CUDA 13.0, needs driver >= 580), CUDA_HOME (use this toolkit),
# WHEELHOUSE (install from this folder of wheels, offline), VALIDATE_DEADLINE (seconds, 480).
# Rerunning reuses the venv (installs become no-ops) but always builds in a new JIT workspace.
set -eu

FLASHINFER_VERSION=${1:-0.7.2.post1}
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/detective-tui-gpu-check}
PYTHON=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
VALIDATE_DEADLINE=${VALIDATE_DEADLINE:-480}
REPO=$(cd "$(dirname "$0")/.." && pwd)
VENV=$WORKDIR/venv-$FLASHINFER_VERSION
PY=$VENV/bin/python
STARTED=$(date +%s)

say() { printf '[%4ss] %s\n' "$(($(date +%s) - STARTED))" "$*"; }
die() {
	echo "gpu_sampling_check: $*" >&2
	exit 2
}
pip_install() {
	if [ -n "${WHEELHOUSE:-}" ]; then
		"$PY" -m pip install -q --disable-pip-version-check --no-index --find-links "$WHEELHOUSE" "$@"
	else
		"$PY" -m pip install -q --disable-pip-version-check "$@"
	fi
}

command -v nvidia-smi >/dev/null 2>&1 || die "no nvidia-smi: this check needs an NVIDIA GPU and its driver"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader ||
	die "nvidia-smi cannot talk to the driver (see its message above)"
# FlashInfer links with $CXX (default c++); nvcc compiles the host side with gcc from PATH
# unless CC is set (it then passes -ccbin $CC)
for compiler in "${CXX:-c++}" "${CC:-gcc}"; do
	command -v "$compiler" >/dev/null 2>&1 ||
		die "no C++ compiler ($compiler): FlashInfer's JIT needs one; install g++ or set CXX and CC"
done
mkdir -p "$WORKDIR"

if [ ! -x "$PY" ]; then
	say "creating $VENV"
	"$PYTHON" -m venv "$VENV" || die "'$PYTHON -m venv' failed (Debian/Ubuntu: apt install python3-venv)"
fi
say "installing $TORCH_SPEC"
pip_install "$TORCH_SPEC"
TORCH_CUDA=$("$PY" -c 'import torch; print(torch.version.cuda or "")')
[ -n "$TORCH_CUDA" ] || die "$TORCH_SPEC installed a CPU-only torch"
"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
	die "torch (CUDA $TORCH_CUDA) sees no GPU: the driver may be too old for it (CUDA 13 needs >= 580); set TORCH_SPEC"

if [ -z "${CUDA_HOME:-}" ]; then
	[ "${TORCH_CUDA%%.*}" = 13 ] ||
		die "torch is built for CUDA $TORCH_CUDA: set CUDA_HOME to an installed CUDA ${TORCH_CUDA%%.*} toolkit (NVIDIA's pip toolkit used here is CUDA 13)"
	# the cuda-toolkit release torch's own wheels pin, so nvcc's headers match torch's runtime
	TOOLKIT=$("$PY" -c 'from importlib.metadata import version; print(version("cuda-toolkit"))')
	say "installing nvcc from cuda-toolkit $TOOLKIT (pip)"
	pip_install "cuda-toolkit[nvcc,cudart,crt,nvvm,cccl]==$TOOLKIT"
	CUDA_HOME=$("$PY" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
	export CUDA_HOME
fi
[ -x "$CUDA_HOME/bin/nvcc" ] || die "no nvcc at $CUDA_HOME/bin/nvcc"
say "nvcc: $("$CUDA_HOME/bin/nvcc" --version | grep release)"

say "installing flashinfer-python==$FLASHINFER_VERSION"
# --no-deps: what `import flashinfer` and the sampling JIT need (shared/knowledge §13), not the
# CLI, cuDNN or CUTLASS-DSL extras, which add minutes of downloads and play no part in sampling
pip_install --no-deps "flashinfer-python==$FLASHINFER_VERSION"
pip_install "apache-tvm-ffi<0.2,>=0.1.11" packaging requests nvidia-ml-py tqdm numpy ninja einops

RUN=$WORKDIR/run-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUN"
say "validating (cold JIT workspace $RUN; deadline ${VALIDATE_DEADLINE}s)"
DEADLINE=""
command -v timeout >/dev/null 2>&1 && DEADLINE="timeout -k 10 $VALIDATE_DEADLINE"
STATUS=0
# PATH: FlashInfer's JIT runs `ninja` from PATH (run_ninja, flashinfer/jit/cpp_ext.py), and the
# pip ninja is in the venv's bin
PATH="$VENV/bin:$PATH" FLASHINFER_WORKSPACE_BASE=$RUN PYTHONDONTWRITEBYTECODE=1 $DEADLINE "$PY" \
	"$REPO/probes/validate_sampling.py" >"$RUN/records.txt" 2>"$RUN/stderr.txt" || STATUS=$?
[ "$STATUS" = 0 ] || {
	say "validate_sampling.py exited $STATUS; its stderr (tail):"
	tail -n 20 "$RUN/stderr.txt" >&2
}
say "done; records in $RUN/records.txt"
echo
exec "$PY" "$REPO/bench/gpu_sampling_summary.py" "$RUN/records.txt"
