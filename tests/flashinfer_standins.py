"""Stand-ins for ``flashinfer.sampling`` of each sampling-API era, to test the adapters of
``probes/sampling_eras.py`` on CPU.

For each release in ``SIGNATURES`` the five public sampling functions have that release's exact
Python parameters (names, order, defaults; read from flashinfer/sampling.py at the git tag, and
for the releases whose wheels the oracle test caches, compared with the wheel by
``test_sampling_eras.py``) and run the tensor checks of its Python wrapper and C++ entry point
(csrc/sampling.cu at the tag), with the messages of FlashInfer's ``CHECK_*`` macros
(csrc/pytorch_extension_utils.h, csrc/tvm_ffi_utils.h), before drawing one sample per row on CPU
from the exact filtered distribution. ``CHECK_CUDA`` is left out: these run on CPU. The stand-ins
import torch only when called, so their signatures can be inspected without it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

KERNELS = (
    "sampling_from_probs",
    "top_p_sampling_from_probs",
    "top_k_sampling_from_probs",
    "min_p_sampling_from_probs",
    "top_k_top_p_sampling_from_probs",
)

_CHECK = ", deterministic=True, check_nan=False"
_UNIFORM = {  # flashinfer/sampling.py at v0.2.0, v0.2.0.post2, v0.2.1, v0.2.2.post1
    "sampling_from_probs": "probs, uniform_samples" + _CHECK,
    "top_p_sampling_from_probs": "probs, uniform_samples, top_p" + _CHECK,
    "top_k_sampling_from_probs": "probs, uniform_samples, top_k" + _CHECK,
    "min_p_sampling_from_probs": "probs, uniform_samples, min_p" + _CHECK,
    "top_k_top_p_sampling_from_probs": (
        "probs, uniform_samples, top_k, top_p, filter_apply_order='top_k_first'" + _CHECK
    ),
}
_GEN = ", deterministic=True, generator=None, check_nan=False"
_GENERATOR = {  # flashinfer/sampling.py at v0.2.3 (unchanged to v0.5.3)
    "sampling_from_probs": "probs, indices=None" + _GEN,
    "top_p_sampling_from_probs": "probs, top_p, indices=None" + _GEN,
    "top_k_sampling_from_probs": "probs, top_k, indices=None" + _GEN,
    "min_p_sampling_from_probs": "probs, min_p, indices=None" + _GEN,
    "top_k_top_p_sampling_from_probs": (
        "probs, top_k, top_p, indices=None, filter_apply_order='top_k_first'" + _GEN
    ),
}


def _extend(base: dict[str, str], tail: str) -> dict[str, str]:
    return {name: sig + tail for name, sig in base.items()}


_SEED_OFFSET = _extend(_GENERATOR, ", seed=None, offset=None")  # v0.6.0 (annotations widen 0.6.4)
_RETURN_VALID = _extend(_SEED_OFFSET, ", return_valid=False")  # v0.6.7 … 0.7.2.post1

# release → (its signatures, how it behaves); the behaviours are described in ``_call``
SIGNATURES: dict[str, tuple[dict[str, str], str]] = {
    "0.2.0": (_UNIFORM, "uniform-0.2.0"),
    "0.2.2.post1": (_UNIFORM, "uniform-0.2.0.post2"),
    "0.2.3": (_GENERATOR, "generator"),
    "0.5.3": (_GENERATOR, "generator"),
    "0.6.0": (_SEED_OFFSET, "seed-offset"),
    "0.6.6": (_SEED_OFFSET, "seed-offset"),
    "0.6.7": (_RETURN_VALID, "return-valid"),
    "0.7.2.post1": (_RETURN_VALID, "return-valid"),
}
EXPECTED_ERA = {
    "uniform-0.2.0": "uniform-samples",
    "uniform-0.2.0.post2": "uniform-samples",
    "generator": "generator",
    "seed-offset": "seed-offset",
    "return-valid": "return-valid",
}


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise RuntimeError(message)  # TORCH_CHECK / TVM_FFI_ICHECK raise RuntimeError in Python


def _check_input(x: Any, name: str) -> None:
    _check(x.is_contiguous(), f"{name} must be contiguous")


def _check_dim(d: int, x: Any, name: str) -> None:
    _check(x.dim() == d, f"{name} must be a {d}D tensor")


def _check_eq(a: int, b: int, text: str) -> None:
    _check(a == b, f"CHECK_EQ({text}) failed. {a} vs {b}")


def _check_tensor_param(param: Any, probs: Any) -> None:
    """csrc/sampling_utils.h ``check_tensor_param`` (0.6.0+)."""
    import torch

    if not isinstance(param, torch.Tensor):
        return
    if param.dim() != 1:
        raise ValueError(f"Expected a 1D tensor or scalar, but got a {param.dim()}D tensor.")
    if param.size(0) != probs.size(0):
        raise ValueError(
            "Sampling parameter tensor batch size mismatch: expected length "
            f"{probs.size(0)}, but got length {param.size(0)}."
        )


def _per_row(value: Any, batch: int, dtype: Any) -> Any:
    import torch

    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        return value.to(dtype).reshape(-1, 1)
    return torch.full((batch, 1), value, dtype=dtype)


def draw(probs: Any, u: Any, top_k: Any, top_p: Any, min_p: Any, joint: bool) -> Any:
    """One token per row: the exact filtered distribution, inverted at the uniforms ``u``."""
    import torch

    p = probs.double()
    p = p / p.sum(dim=-1, keepdim=True)
    sorted_p, order = torch.sort(p, dim=-1, descending=True, stable=True)
    batch, vocab = p.shape
    rank = torch.arange(vocab).expand(batch, vocab)
    keep = torch.ones_like(sorted_p, dtype=torch.bool)
    k = _per_row(top_k, batch, torch.int64)
    if k is not None:
        keep &= rank < k
    tp = _per_row(top_p, batch, torch.float64)
    if tp is not None:
        basis = sorted_p if joint else torch.where(keep, sorted_p, 0.0)
        basis = basis / basis.sum(dim=-1, keepdim=True)
        above = torch.cumsum(basis, dim=-1) - basis
        keep &= above < tp
    mp = _per_row(min_p, batch, torch.float64)
    if mp is not None:
        keep &= sorted_p >= mp * sorted_p[:, :1]
    cdf = torch.cumsum(torch.where(keep, sorted_p, 0.0), dim=-1)
    target = u.double().reshape(-1, 1) * cdf[:, -1:]
    picked = torch.searchsorted(cdf, target, right=True).clamp(max=vocab - 1)
    return order.gather(1, picked).reshape(-1).to(torch.int32)


def _call(behaviour: str, name: str, args: dict[str, Any]) -> Any:
    """The body every stand-in shares: the release's checks, then ``draw``."""
    import torch

    probs = args["probs"]
    order = args.get("filter_apply_order", "top_k_first")
    if order not in ("top_k_first", "joint"):
        raise ValueError(f"Invalid filter_apply_order: {order}")
    filters = {k: args.get(k) for k in ("top_k", "top_p", "min_p")}
    _check_input(probs, "probs")
    _check_dim(2, probs, "probs")
    batch = probs.size(0)
    if behaviour.startswith("uniform"):
        u = args["uniform_samples"]
        if name == "min_p_sampling_from_probs" and behaviour == "uniform-0.2.0.post2":
            if u.dim() == 2:  # "for backward compatibility" (PR #713), then a 1-D kernel
                u = u[0]
            one_dim, with_success = True, False
        else:
            one_dim = name == "sampling_from_probs"
            with_success = not one_dim
        _check_input(u, "uniform_samples")
        if one_dim:
            _check_dim(1, u, "uniform_samples")
            _check_eq(batch, u.size(0), "probs.size(0), uniform_samples.size(0)")
            first = u
        else:
            _check_dim(2, u, "uniform_samples")
            _check_eq(batch, u.size(1), "probs.size(0), uniform_samples.size(1)")
            first = u[0]
        samples = draw(probs, first, joint=order == "joint", **filters)
        return (samples, torch.ones(batch, dtype=torch.bool)) if with_success else samples
    generator = args.get("generator")
    if generator is not None:
        _check(isinstance(generator, torch.Generator), "generator must be a torch.Generator")
        _check(generator.device == probs.device, "generator on another device")
    if behaviour in ("seed-offset", "return-valid"):
        for value in filters.values():
            _check_tensor_param(value, probs)
        if args.get("seed") is not None and args.get("offset") is not None:
            generator = torch.Generator().manual_seed(int(args["seed"]) + int(args["offset"]))
    u = torch.rand(batch, generator=generator, dtype=torch.float32)
    samples = draw(probs, u, joint=order == "joint", **filters)
    if behaviour == "return-valid" and args.get("return_valid"):
        return samples, torch.ones(batch, dtype=torch.bool)
    return samples


def _function(behaviour: str, name: str, signature: str) -> Any:
    namespace: dict[str, Any] = {"_call": _call}
    exec(  # builds a function with the release's exact parameter list
        f"def {name}({signature}):\n    return _call({behaviour!r}, {name!r}, dict(locals()))\n",
        namespace,
    )
    return namespace[name]


def sampling_module(release: str, without: tuple[str, ...] = ()) -> SimpleNamespace:
    """A ``flashinfer.sampling`` stand-in for ``release`` (minus the kernels in ``without``)."""
    signatures, behaviour = SIGNATURES[release]
    return SimpleNamespace(
        **{
            name: _function(behaviour, name, sig)
            for name, sig in signatures.items()
            if name not in without
        }
    )
