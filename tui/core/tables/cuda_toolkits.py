"""Where NVIDIA's CUDA toolkits come from: the ``cuda-toolkit`` wheel releases (per CUDA
minor, the extras and the wheels they pull in, where they land) and NVIDIA's apt
repositories (cuda-facts.md §1.1, §5.5) — data, read by the toolkit and wheel fixes."""

PIP_DEFAULT_VERSION = "13.0.2"  # the cuda-toolkit release torch's cu130 wheels pin
# The newest cuda-toolkit release of each CUDA minor (cuda-facts.md §1.1): the wheels should
# match torch's CUDA minor — nvcc 13.3 headers with a cu130 torch fail (flashinfer#3493).
PIP_RELEASE_FOR_MINOR = {
    "13.0": "13.0.2",
    "13.1": "13.1.1",
    "13.2": "13.2.1",
    "13.3": "13.3.0",
    "13.5": "13.5.0",
}
PIP_EXTRAS = ("nvcc", "cudart", "crt", "nvvm", "cccl")
PIP_COMPONENTS = {  # extra → the wheel it pulls in
    "nvcc": "nvidia-cuda-nvcc",
    "cudart": "nvidia-cuda-runtime",
    "crt": "nvidia-cuda-crt",
    "nvvm": "nvidia-nvvm",
    "cccl": "nvidia-cuda-cccl",
}
PIP_HOME = "nvidia/cu13"  # site-packages/nvidia/cu13: a complete JIT toolkit (cuda-facts §5.5)

APT_REPOS = {
    ("ubuntu", "22.04"): "ubuntu2204",
    ("ubuntu", "24.04"): "ubuntu2404",
    ("debian", "12"): "debian12",
}
APT_ARCHES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "sbsa", "arm64": "sbsa"}
APT_KEYRING = "cuda-keyring_1.1-1_all.deb"
APT_URL = "https://developer.download.nvidia.com/compute/cuda/repos/{repo}/{arch}/" + APT_KEYRING
APT_PACKAGE = "cuda-toolkit-13-0"  # never `cuda`/`cuda-13-0`: those pull in a driver
APT_HOME = "/usr/local/cuda-13.0"
APT_VERSION = "13.0"
