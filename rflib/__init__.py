"""rflib: random-feature kernel estimators and attention, the reference implementation behind the notebooks.

Modules: ``kernels`` (exact kernels), ``projections`` (random ω matrices), ``features`` (feature maps: classic,
complex exponential, hybrid, cluster), ``moments`` (closed-form MSEs), ``sphere`` (HRF closed forms for equal norms,
Theorem 3.5), ``quadrature`` (exact Gaussian expectations), ``attention`` (softmax and linear attention),
``plotting`` and ``results`` (notebook output).
"""

from rflib import attention, features, kernels, moments, projections, quadrature, sphere

__version__ = "0.1.0"
__all__ = ["attention", "features", "kernels", "moments", "projections", "quadrature", "sphere"]
