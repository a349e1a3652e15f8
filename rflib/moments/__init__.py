"""Exact moments (closed forms and quadrature oracles), one module per estimator family of :mod:`rflib.features`.

Every module has the same entry point, ``log_mse(x, y, m, *, <the family's parameters>)``: the log mean-squared
error of the family's estimator with m iid features at each pair (x, y) of shape (..., d). The rest of a module is
the family's own moments and objectives.

- ``classic``: MSE of the trigonometric, positive and hyperbolic estimators (HRF Lemma 2.2, Performer Lemma 2).
- ``complex_exp``: MSE of the complex exponential estimators (HRF §2.3).
- ``hybrid``: λ-moments and MSE of the hybrid estimators (HRF Theorem 3.1, Lemma 3.2, Theorems D.1, F.1).
- ``dense_exp``: variances of dense-exponential features and the FAVOR# objectives (FAVOR# Theorems 4.1–4.3).
- ``png``: exact PNG kernels and the moments behind the orthogonal gain (KAMA-NNs Definition 2, Theorem 1).
"""

from rflib.moments import classic, complex_exp, dense_exp, hybrid, png

__all__ = ["classic", "complex_exp", "dense_exp", "hybrid", "png"]
