"""Benchmarks of rflib: measured speed and memory, each reported as a ratio against a baseline timed in the same run.

Suites (one module each, every one with ``run(...) -> list[dict]``):

* :mod:`benchmarks.feature_maps` — feature maps vs the bare projection matmul ``X @ W.T``;
* :mod:`benchmarks.attention_scaling` — exact softmax attention vs linear attention (FAVOR+, FAVOR#, HRF), wall time
  and compiled working memory over L;
* :mod:`benchmarks.fitting_overhead` — FAVOR#'s closed-form parameter fit as a fraction of one attention call;
* :mod:`benchmarks.hrf_construction` — the O(nd + md + mn) hybrid map vs a regular map with as many features;
* :mod:`benchmarks.kama_rotations` — k = 5 d ln d Givens rotations vs a dense matmul.

Run them all with ``make bench`` (= ``.venv/bin/python -m benchmarks``); ``notebooks/11_performance.py`` runs the same
functions and plots them. Not part of ``make test``'s pass/fail: timings depend on the machine. JAX picks the device.
"""
