"""Random feature maps. One module per family; every map returns features whose inner products estimate a kernel."""

from rflib.features import cluster, complex_exp, dense_exp, estimators, hybrid
from rflib.features.base import Features
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
    "Features",
    "cluster",
    "complex_exp",
    "dense_exp",
    "estimators",
    "hybrid",
    "gaussian_kernel_features",
    "hyperbolic",
    "hyperbolic_features",
    "positive",
    "positive_features",
    "trig",
    "trig_features",
]
