"""Data: what each CUDA, driver, torch, nvcc, ptxas, Triton and FlashInfer release supports, each
table citing its source. Imports only the base (``tui.core``)."""
