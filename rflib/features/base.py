"""The common representation of a random feature map: φ(X) = exp(log_scale)[:, None] · body.

Softmax-kernel features carry factors like exp(±‖x‖²/2) and exp(ωᵀx) that overflow long before the estimate
itself does. Every map in ``rflib.features`` therefore returns its per-row log scale separately from a bounded
body. Attention (``rflib.attention``) uses this split to stabilise exactly: a per-query scale cancels in the row
normalisation, and one global scale over all keys cancels too.

Positive maps (FAVOR+, hyperbolic, every DERF) also return ``log_body = log(body)``, computed before the exponential so
that it stays exact where ``body`` underflows to 0 (at large norms most of a row does, in float32). Attention then
stabilises per feature instead of per row, which keeps every output finite whatever the norms.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Features(NamedTuple):
    """Random features of n points in factored form.

    Attributes:
      log_scale: (n,) per-row log of the common positive factor.
      body: (n, F) the remaining factor; |body| ≤ 1 for positive maps, bounded by 1 for trigonometric ones.
      log_body: (n, F) log(body) for positive maps (≤ 0, finite where body underflows); None for signed maps.
    """

    log_scale: jax.Array
    body: jax.Array
    log_body: jax.Array | None = None

    def dense(self) -> jax.Array:
        """φ(X): (n, F), the features themselves, so that ``phi(X) @ phi(Y).T`` is the kernel estimate."""
        return jnp.exp(self.log_scale)[:, None] * self.body
