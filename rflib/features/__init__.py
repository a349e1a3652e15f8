"""Random feature maps, one module per estimator family; each family's closed forms are in the same-named module of
:mod:`rflib.moments`, and every family builds a :class:`~rflib.features.base.Estimator`.

- ``base``: :class:`Features` (factored log form), :class:`Estimator` (query map, key map) and the feature algebra.
- ``classic``: trigonometric, positive (FAVOR+) and hyperbolic maps of the softmax kernel (HRF §2.1, Performer).
- ``complex_exp``: complex exponential estimators with a matrix A (HRF §2.3).
- ``hybrid``: hybrid estimators with λ-coefficients (HRF §3, App F).
- ``cluster``: HRF with clustered inputs and per-cluster CE estimators (HRF §3.3).
- ``dense_exp``: dense-exponential random features and their closed-form fits: GERF, ADERF, SDERF, SADERF (FAVOR#).
- ``png``: pointwise nonlinear Gaussian features f(Wx)/√m (KAMA-NNs §4).
"""

from rflib.features import base, classic, cluster, complex_exp, dense_exp, hybrid, png
from rflib.features.base import Estimator, Features
from rflib.features.classic import (
    gaussian_kernel_features,
    hyperbolic,
    hyperbolic_features,
    positive,
    positive_features,
    trig,
    trig_features,
)

__all__ = [
    "Estimator",
    "Features",
    "base",
    "classic",
    "cluster",
    "complex_exp",
    "dense_exp",
    "gaussian_kernel_features",
    "hybrid",
    "hyperbolic",
    "hyperbolic_features",
    "png",
    "positive",
    "positive_features",
    "trig",
    "trig_features",
]
