"""FlashInfer's sampling API by era, and one ``Sampler`` adapter per era.

Sent to GPU hosts with ``validate_sampling.py`` (registered as a module before it, like
``sampling_stats.py``). Standard library only at import, Python >= 3.8; torch is passed in.

Each era below was read from that release's ``flashinfer/sampling.py`` (the public functions)
and ``csrc/sampling.cu`` (the tensor checks its C++ entry points run), at the git tags named:

=================  ====================  ============================================  ==========
era                releases              randomness                                    returns
=================  ====================  ============================================  ==========
uniform-samples    0.2.0 - 0.2.2.post1   the caller's ``uniform_samples``, a shape     samples, or
                                         per function (``UNIFORM_SHAPES``)             (samples,
                                                                                       success)
generator          0.2.3 - 0.5.x         ``generator=``; ``indices=None`` (one sample  samples
                                         per row) comes before ``filter_apply_order``
seed-offset        0.6.0 - 0.6.6         ``generator=``; ``seed``/``offset`` are used  samples
                                         only when *both* are given, so neither is
return-valid       0.6.7 -               as seed-offset, plus ``return_valid=True``    (samples,
                                                                                       valid)
=================  ====================  ============================================  ==========

The era is told by the function's own parameters (``ERAS``, newest first), not by a version
string, so a patched or vendored FlashInfer is called the way its signature says. A signature
no era matches gets no adapter (``sampler_for`` returns None): that kernel is skipped, and a
run with a skipped kernel is ``partial``, never ``pass``.
"""

from __future__ import annotations

import inspect

FILTERS = ("top_k", "top_p", "min_p")

# Rejection rounds given to the 0.2.0 - 0.2.2 kernels: what FlashInfer's own tests pass
# (``max_top_p_trails = 32``, ``torch.empty(32, batch_size)``: tests/test_sampling.py at
# v0.2.2.post1). A sample the kernel could not settle within them comes back with
# ``success=False`` and is counted as invalid, not judged.
MAX_ROUNDS = 32

# The ``uniform_samples`` shape each 0.2.0 - 0.2.2.post1 function accepts, from csrc/sampling.cu:
# - sampling_from_probs: ``CHECK_DIM(1, uniform_samples)`` and
#   ``CHECK_EQ(probs.size(0), uniform_samples.size(0))`` -> (batch,) at every one of these tags;
# - top_p / top_k / top_k_top_p (both filter orders): ``CHECK_DIM(2, uniform_samples)`` with
#   ``uniform_samples.size(1) == batch`` -> (rounds, batch);
# - min_p: ``CHECK_DIM(2, ...)`` at v0.2.0 and v0.2.0.post1; ``CHECK_DIM(1, ...)`` from
#   v0.2.0.post2, whose Python wrapper takes row 0 of a 2-D tensor ("for backward
#   compatibility", flashinfer/sampling.py, PR #713) -> (rounds, batch) suits all of them.
BATCH = "batch"
ROUNDS = "rounds"
UNIFORM_SHAPES = {
    "sampling_from_probs": BATCH,
    "top_p_sampling_from_probs": ROUNDS,
    "top_k_sampling_from_probs": ROUNDS,
    "min_p_sampling_from_probs": ROUNDS,
    "top_k_top_p_sampling_from_probs": ROUNDS,
}


def parameters(fn):
    """The parameter names of ``fn`` (through ``functools.wraps``), or None if unreadable."""
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None


class Sampler:
    """Draws one sample per row of ``probs`` through one FlashInfer sampling function.

    ``__call__(probs, per_row)`` returns ``(samples, valid)``: ``valid`` is a bool tensor when
    the function reports which samples it could settle (``success``/``valid``), else None.
    ``per_row`` holds each row's filters (``top_k``, ``top_p``, ``min_p``, ``order``).
    """

    def __init__(self, torch, name, fn, generator, names, era):
        self.torch = torch
        self.era = era
        self.name = name
        self.fn = fn
        self.generator = generator
        self.names = frozenset(names)

    def missing(self, filters):
        """The parameters ``filters`` need that this function does not take."""
        needed = [k for k in FILTERS if filters.get(k) is not None]
        if filters.get("top_k") is not None and filters.get("top_p") is not None:
            needed.append("filter_apply_order")
        return [k for k in needed if k not in self.names]

    def filter_kwargs(self, probs, per_row):
        """top_k as an int (the cases use one per call), top_p/min_p as a float when every row
        shares it, else a float32 tensor of shape (batch,), as every era accepts."""
        torch = self.torch
        kwargs = {}
        first = per_row[0]
        if first.get("top_k") is not None:
            kwargs["top_k"] = int(first["top_k"])
        for key in ("top_p", "min_p"):
            if first.get(key) is not None:
                values = [row[key] for row in per_row]
                if all(v == values[0] for v in values):
                    kwargs[key] = float(values[0])
                else:
                    kwargs[key] = torch.tensor(values, dtype=torch.float32, device=probs.device)
        if first.get("top_k") is not None and first.get("top_p") is not None:
            kwargs["filter_apply_order"] = first["order"]
        return kwargs

    def draw_kwargs(self, probs):
        """How this era gets its randomness (and asks for validity)."""
        raise NotImplementedError

    def __call__(self, probs, per_row):
        kwargs = self.filter_kwargs(probs, per_row)
        kwargs.update(self.draw_kwargs(probs))
        out = self.fn(probs, **kwargs)
        if isinstance(out, tuple):  # (samples, success) before 0.2.3, (samples, valid) 0.6.7+
            return out[0], out[1].bool()
        return out, None


class UniformSamplesSampler(Sampler):
    """0.2.0 - 0.2.2.post1: the caller draws the uniforms, in the shape each function checks."""

    def draw_kwargs(self, probs):
        batch = probs.shape[0]
        shape = (batch,) if UNIFORM_SHAPES.get(self.name) == BATCH else (MAX_ROUNDS, batch)
        uniform = self.torch.rand(*shape, device=probs.device, generator=self.generator)
        return {"uniform_samples": uniform}


class GeneratorSampler(Sampler):
    """0.2.3 - 0.6.6: a ``torch.Generator`` on the probs' device. From 0.6.0 ``seed``/``offset``
    exist too, but the custom op falls back to the generator unless both are given
    (``if seed is None or offset is None``: flashinfer/sampling.py at v0.6.0), so neither is."""

    def draw_kwargs(self, probs):
        return {"generator": self.generator}


class ReturnValidSampler(GeneratorSampler):
    """0.6.7 onwards: also ask which samples are valid (``return_valid=True``)."""

    def draw_kwargs(self, probs):
        return {"generator": self.generator, "return_valid": True}


# (era, first release, the parameters that mark it, adapter), newest first: the first row whose
# parameters the function has decides. 0.6.0 - 0.6.6 (seed/offset) call as the generator era.
ERAS = (
    ("return-valid", "0.6.7", ("generator", "return_valid"), ReturnValidSampler),
    ("seed-offset", "0.6.0", ("generator", "seed", "offset"), GeneratorSampler),
    ("generator", "0.2.3", ("generator", "indices"), GeneratorSampler),
    ("uniform-samples", "0.2.0", ("uniform_samples", "deterministic"), UniformSamplesSampler),
)


def era_of(fn):
    """``(era name, adapter class)`` for a sampling function, or None for an unknown signature."""
    names = parameters(fn)
    if names is None:
        return None
    for era, _first, marks, adapter in ERAS:
        if all(m in names for m in marks):
            return era, adapter
    return None


def sampler_for(torch, name, fn, generator):
    """The adapter that calls ``fn`` (FlashInfer's ``name``) the way its era expects, or None."""
    found = era_of(fn)
    if found is None:
        return None
    era, adapter = found
    return adapter(torch, name, fn, generator, parameters(fn) or (), era)
