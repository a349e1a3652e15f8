"""Exact checks of the numbered lemmas of "Why softmax attention outperforms linear attention" (Deng, Song, Yuan, Zhou)
on rflib.separation's constructions: the score entries, attention-weight bounds and output-coordinate bounds of
Apps D (QKᵀ = 1_{d×d}), E (QKᵀ = I_d, b² + c² = 1) and F (cross-attention), the deterministic cores of the toy
Lemmas 4.1–4.2, and one exact instance of Hoeffding's bound (Lemma 3.1). Everything is deterministic float64 numpy;
probabilities over sign vectors are exact (all 2^d vectors, or binomial sums).

Conventions: 0-based indices (the paper's column 1 is column 0, its column d is column d − 1), L = log n, s = √L,
t = n/(d − 2) (self) or n/(d − 1) (cross), g = the middle column of j3's group. A part printed wrongly is tested in
its corrected form and cites the ERRATA.md id; a part that is false as printed has a test named
``..._is_false_as_printed``. Parts 3 and 6 of Lemmas D.3, D.7, D.11, D.15 (c_{d−1} = c·s) are asserted in
tests/test_separation.py::test_self_attention_ones_closed_forms and not repeated here.
"""

import math

import numpy as np
import pytest

from rflib import separation as sp

B, C = 0.2, 0.8  # Def D.1: b + c = 1
SLACK = 1 + 1e-12  # several bounds are attained with equality (uniform rows 1/n): ≤ up to round-off

# (n, d, a, j3): D1 needs (1 + a1)² > 2 + a1 for Lemma D.2 Part 3a (a1 > 0.618); D0 has a0 ∈ (0, 0.1)
SELF_D1 = [(200, 22, 1.2, 5), (200, 22, 0.7, 37), (60, 12, 0.7, 13), (256, 130, 1.2, 255)]
SELF_D0 = [(200, 22, 0.01, 5), (60, 12, 0.05, 13), (256, 130, 0.01, 255)]
# (n, d, a1, b, j3) with c = √(1 − b²) and a1 > 1 (Lemma E.1)
SELF_IDENTITY = [(200, 22, 1.2, 0.15, 5), (256, 130, 1.2, 0.15, 7), (60, 12, 1.1, 0.1, 13), (200, 22, 1.05, 0.19, 199)]
# (n, d, a, j2, j3): a1 > 1, a0 ∈ (0, 0.1); j2 = j3 included
CROSS_D1 = [(200, 11, 3.0, 4, 17), (200, 41, 3.0, 4, 17), (200, 11, 1.5, 9, 9), (200, 41, 1.5, 199, 0)]
CROSS_D0 = [(200, 11, 0.01, 4, 17), (200, 41, 0.01, 9, 9), (200, 11, 0.05, 199, 0), (200, 41, 0.05, 4, 17)]


def below(x, bound) -> bool:
    return bool(np.all(np.asarray(x) <= bound * SLACK))


def self_case(n, d, a, j3, b=B, c=C, X="ones"):
    """Data, scores A X Aᵀ, t, s and the group column g of j3 for one self-attention point (Def D.1)."""
    A = sp.self_data(n, d, a, b, c, j3)
    return A, A @ sp.qk_matrix(X, d) @ A.T, n // (d - 2), math.sqrt(math.log(n)), 1 + j3 % (d - 2)


def spike_exponent(n, a, j3):
    """(1 + a·[j0 = j3])(1 + a·[j1 = j3]): the score of rows j0, j1 over log n when QKᵀ = 1 and b + c = 1."""
    e = 1 + a * (np.arange(n) == j3)
    return np.outer(e, e)


def cross_case(n, d, a, j2, j3):
    A1, A2 = sp.cross_data(n, d, a, j2, j3)
    return A1 @ sp.qk_matrix("identity", d) @ A2.T, n // (d - 1), 1 + j3 % (d - 1)


# --- App D: self-attention with QKᵀ = 1_{d×d} ---------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d", "a", "j3"), SELF_D1 + SELF_D0)
def test_lemmas_d2_d6_softmax_scores_are_exact_powers_of_n(n, d, a, j3):
    """Lemmas D.2 and D.6, Parts 1a–2b: u_exp(j3, j3) = n^{(1+a)²}, u_exp(j3, j1) = u_exp(j0, j3) = n^{1+a}, and every
    other entry is n (every row not j3 sums to (b + c)s = s)."""
    _, S, *_ = self_case(n, d, a, j3)
    u = np.exp(S)
    np.testing.assert_allclose(u, float(n) ** spike_exponent(n, a, j3), rtol=1e-10)
    assert u[j3, j3] == pytest.approx(n ** ((1 + a) ** 2), rel=1e-10)
    assert np.isclose(np.delete(u, j3, axis=0), n, rtol=1e-12).sum() == (n - 1) ** 2


@pytest.mark.parametrize(("n", "d", "a", "j3"), SELF_D1)
def test_lemma_d2_softmax_weights_obey_parts_3_and_4(n, d, a, j3):
    """Lemma D.2 (𝒟1): Part 3a f(j3, j3) ≥ 1/2 (under its condition (1 + a1)² > 2 + a1), Part 3b f(j3, j1 ≠ j3) ≤ 1/n,
    Part 4a f(j0 ≠ j3, j3) ≤ n^{a1−1} (vacuous for a1 ≥ 1), Part 4b f(j0 ≠ j3, j1 ≠ j3) ≤ 1/n (SVL-E10: j1 ≠ j3)."""
    _, S, *_ = self_case(n, d, a, j3)
    f = sp.normalise(S, "exp")
    assert (1 + a) ** 2 > 2 + a
    assert f[j3, j3] >= 0.5
    assert below(np.delete(f[j3], j3), 1 / n)
    others = np.delete(f, j3, axis=0)
    assert below(others[:, j3], n ** (a - 1))
    assert below(np.delete(others, j3, axis=1), 1 / n)


@pytest.mark.parametrize(("n", "d", "a", "j3"), SELF_D0)
def test_lemma_d6_softmax_weights_obey_parts_3_and_4(n, d, a, j3):
    """Lemma D.6 (data from 𝒟0, SVL-E11): Part 3a f(j3, j3) ≤ n^{−(1−2a0)}, Part 3b f(j3, j1 ≠ j3) ≤ 1/n, Part 4a
    f(j0 ≠ j3, j3) ≤ n^{−(1−a0)} (tight: 5.2706e−3 against 5.2721e−3 at n = 200), Part 4b f(j0 ≠ j3, j1 ≠ j3) ≤ 1/n
    (SVL-E10)."""
    _, S, *_ = self_case(n, d, a, j3)
    f = sp.normalise(S, "exp")
    assert f[j3, j3] <= n ** (2 * a - 1)
    assert below(np.delete(f[j3], j3), 1 / n)
    others = np.delete(f, j3, axis=0)
    assert below(others[:, j3], n ** (a - 1))
    assert below(np.delete(others, j3, axis=1), 1 / n)


@pytest.mark.parametrize(("n", "d", "a", "j3"), SELF_D1)
def test_lemma_d3_softmax_outputs_obey_parts_1_2_and_4(n, d, a, j3):
    """Lemma D.3 (𝒟1, V = I): Part 1 c(j3, 0) ≥ a1·s/2; Part 2 c(j3, g) ≥ b·s/2 and the other middle coordinates of
    row j3 ≤ (t/n)·b·s; Part 4 c(j0 ≠ j3, 0) ≤ n^{a1−1}·a1·s. (Part 5 is false as printed: next test.)"""
    _, _, t, s, g = self_case(n, d, a, j3)
    c = sp.self_outputs(n, d, a, B, C, j3, "ones")["exp"]
    rest = [i for i in range(1, d - 1) if i != g]
    assert c[j3, 0] >= a * s / 2
    assert c[j3, g] >= B * s / 2
    assert below(c[j3, rest], t / n * B * s)
    assert below(np.delete(c[:, 0], j3), n ** (a - 1) * a * s)


@pytest.mark.parametrize(
    ("n", "d", "a", "j3", "value"),
    [
        (200, 22, 1.2, 5, 0.151036),
        (200, 22, 0.7, 37, 0.041538),
        (60, 12, 0.7, 13, 0.058948),
        (256, 130, 1.2, 255, 0.150730),
    ],
)
def test_lemma_d3_part_5_is_false_as_printed(n, d, a, j3, value):
    """Lemma D.3 Part 5 prints c(j0 ≠ j3, i0) ≤ (t/n)·b·s for every middle coordinate. False: row j0 ≠ j3 puts weight
    w = n^{1+a1}/(n^{1+a1} + (n − 1)n) on row j3 (Lemma D.2 Part 2), so coordinate g = 1 + g(j3) carries
    (w + (t − 1)·v)·b·s with v = n/(n^{1+a1} + (n − 1)n): 0.1510·s against the printed 0.01·s at n = 200, d = 22,
    a1 = 1.2 (15×). Corrected (as Lemma D.7 Part 5 writes it for 𝒟0): coordinate g ≤ (n^{a1−1} + (t − 1)/n)·b·s, the
    other middle coordinates ≤ (t/n)·b·s — both hold."""
    _, _, t, s, g = self_case(n, d, a, j3)
    c = np.delete(sp.self_outputs(n, d, a, B, C, j3, "ones")["exp"], j3, axis=0)
    printed = t / n * B * s
    assert c[:, g].min() / s == pytest.approx(value, abs=2e-6)
    assert c[:, g].min() > 2 * printed  # every row j0 ≠ j3 violates the printed bound
    assert below(c[:, g], (n ** (a - 1) + (t - 1) / n) * B * s)
    assert below(np.delete(c[:, 1 : d - 1], g - 1, axis=1), printed)


@pytest.mark.parametrize(("n", "d", "a", "j3"), SELF_D0)
def test_lemma_d7_softmax_outputs_obey_parts_1_2_4_and_5(n, d, a, j3):
    """Lemma D.7 (𝒟0, V = I): Part 1 c(j3, 0) ≤ n^{−(1−2a0)}·a0·s; Part 2 every middle coordinate of row j3
    ≤ t·n^{−(1−2a0)}·b·s, coordinate g ≤ (n^{−(1−2a0)} + (t − 1)/n)·b·s, the others ≤ (t/n)·b·s; Part 4
    c(j0 ≠ j3, 0) ≤ n^{−(1−a0)}·a0·s (tight); Part 5 every middle coordinate ≤ t·n^{−(1−a0)}·b·s, coordinate g
    ≤ (n^{−(1−a0)} + (t − 1)/n)·b·s, the others ≤ (t/n)·b·s."""
    _, _, t, s, g = self_case(n, d, a, j3)
    c = sp.self_outputs(n, d, a, B, C, j3, "ones")["exp"]
    rest = [i for i in range(1, d - 1) if i != g]
    w3, w0 = n ** (2 * a - 1), n ** (a - 1)
    assert c[j3, 0] <= w3 * a * s
    assert below(c[j3, 1 : d - 1], t * w3 * B * s)
    assert c[j3, g] <= (w3 + (t - 1) / n) * B * s
    assert below(c[j3, rest], t / n * B * s)
    others = np.delete(c, j3, axis=0)
    assert below(others[:, 0], w0 * a * s)
    assert below(others[:, 1 : d - 1], t * w0 * B * s)
    assert below(others[:, g], (w0 + (t - 1) / n) * B * s)
    assert below(others[:, rest], t / n * B * s)


@pytest.mark.parametrize(("n", "d", "a", "j3"), SELF_D1 + SELF_D0)
def test_lemmas_d10_d14_linear_scores_are_exact_multiples_of_log_n(n, d, a, j3):
    """Lemmas D.10 (𝒟1) and D.14 (𝒟0, with QKᵀ = 1_{d×d}: SVL-E12), Parts 1a–2b: u_lin(j3, j3) = (1 + a)²·L,
    u_lin(j3, j1 ≠ j3) = u_lin(j0 ≠ j3, j3) = (1 + a)·L, every other entry L."""
    _, S, *_ = self_case(n, d, a, j3)
    np.testing.assert_allclose(S / math.log(n), spike_exponent(n, a, j3), rtol=1e-12)


@pytest.mark.parametrize(("n", "d", "a", "j3"), SELF_D1 + SELF_D0)
def test_lemmas_d10_d14_linear_weights_obey_parts_3_and_4(n, d, a, j3):
    """Lemmas D.10 and D.14, Parts 3a/4a f_lin(·, j3) ≤ (1 + a)/n and Parts 3b/4b f_lin(·, j1 ≠ j3) ≤ 1/n (SVL-E10)."""
    _, S, *_ = self_case(n, d, a, j3)
    f = sp.normalise(S, "lin")
    assert below(f[:, j3], (1 + a) / n)
    assert below(np.delete(f, j3, axis=1), 1 / n)


@pytest.mark.parametrize(("n", "d", "a", "j3"), SELF_D1 + SELF_D0)
def test_lemmas_d11_d15_linear_outputs_obey_parts_1_2_4_and_5(n, d, a, j3):
    """Lemmas D.11 (𝒟1) and D.15 (𝒟0, f_lin: SVL-E12), Parts 1/4 c_lin(·, 0) ≤ (1 + a)·a·s/n and Parts 2/5 every
    middle coordinate ≤ (1 + a)·t·b·s/n (tight for 𝒟0: 5.04975e−5·s against 5.05e−5·s at n = 200)."""
    _, _, t, s, _ = self_case(n, d, a, j3)
    c = sp.self_outputs(n, d, a, B, C, j3, "ones")["lin"]
    assert below(c[:, 0], (1 + a) * a * s / n)
    assert below(c[:, 1 : d - 1], (1 + a) * t * B * s / n)


# --- App E: self-attention with QKᵀ = I_d, b² + c² = 1 -------------------------------------------------------------


@pytest.mark.parametrize(("n", "d", "a", "b", "j3"), SELF_IDENTITY)
def test_lemma_e1_scores_have_the_corrected_powers_and_counts(n, d, a, b, j3):
    """Lemma E.1, Parts 1–2: u(j0, j1) = n^{c² + b²·[same group] + a1²·[j0 = j1 = j3]}. Part 1a corrected to
    n^{a1²+b²+c²} (SVL-E14); Part 1b as printed: row j3 has t − 1 other entries n^{b²+c²} and n − t entries n^{c²};
    Part 2 corrected (SVL-E14): every row j0 ≠ j3 has t entries n^{b²+c²} (its own group, itself included) and n − t
    entries n^{c²}."""
    c = math.sqrt(1 - b * b)
    _, S, t, _, _ = self_case(n, d, a, j3, b, c, "identity")
    u = np.exp(S)
    group = np.arange(n) % (d - 2)
    same = group[:, None] == group[None, :]
    spike = np.zeros((n, n))
    spike[j3, j3] = a * a
    np.testing.assert_allclose(u, float(n) ** (c * c + b * b * same + spike), rtol=1e-10)
    assert u[j3, j3] == pytest.approx(n ** (a * a + b * b + c * c), rel=1e-10)
    row = np.delete(u[j3], j3)
    assert np.isclose(row, n ** (b * b + c * c), rtol=1e-10).sum() == t - 1
    assert np.isclose(row, n ** (c * c), rtol=1e-10).sum() == n - t
    for j0 in ((j3 + 1) % n, (j3 + d - 2) % n):  # a row of another group and one of j3's group
        assert np.isclose(u[j0], n ** (b * b + c * c), rtol=1e-10).sum() == t
        assert np.isclose(u[j0], n ** (c * c), rtol=1e-10).sum() == n - t


@pytest.mark.parametrize(("n", "d", "a", "b", "j3"), SELF_IDENTITY)
def test_lemma_e1_weights_obey_parts_3_and_4(n, d, a, b, j3):
    """Lemma E.1, Part 3a f(j3, j3) ≥ 1/2 (a1 > 1), Part 3b f(j3, j1 ≠ j3) ≤ n^{−(1−b²)}, Part 4 (f_exp, SVL-E14) in
    every row j0 ≠ j3 the t weights of j0's group are ≤ n^{−(1−b²)} and the other n − t are ≤ 1/n."""
    c = math.sqrt(1 - b * b)
    _, S, t, _, _ = self_case(n, d, a, j3, b, c, "identity")
    f = sp.normalise(S, "exp")
    assert f[j3, j3] >= 0.5
    assert below(np.delete(f[j3], j3), n ** (b * b - 1))
    group = np.arange(n) % (d - 2)
    for j0 in np.delete(np.arange(n), j3):
        same = group == group[j0]
        assert same.sum() == t
        assert below(f[j0, same], n ** (b * b - 1))
        assert below(f[j0, ~same], 1 / n)


@pytest.mark.parametrize(("n", "d", "a", "b", "j3"), SELF_IDENTITY)
def test_lemma_e2_outputs_obey_every_part(n, d, a, b, j3):
    """Lemma E.2 with QKᵀ = I_d (SVL-E15): Part 1 c(j3, 0) ≥ a1·s/2; Part 2 c(j3, g) ≥ b·s/2, the other middle
    coordinates ≤ t·n^{−(1−b²)}·b·s; Parts 3/6 c(·, d − 1) = c·s; Part 4 c(j0 ≠ j3, 0) ≤ n^{−(1−b²)}·a1·s (within 1%);
    Part 5 middle coordinates of rows j0 ≠ j3 ≤ t·n^{−(1−b²)}·b·s (within 1%)."""
    c = math.sqrt(1 - b * b)
    _, _, t, s, g = self_case(n, d, a, j3, b, c, "identity")
    out = sp.self_outputs(n, d, a, b, c, j3, "identity")["exp"]
    rest = [i for i in range(1, d - 1) if i != g]
    w = n ** (b * b - 1)
    assert out[j3, 0] >= a * s / 2
    assert out[j3, g] >= b * s / 2
    assert below(out[j3, rest], t * w * b * s)
    np.testing.assert_allclose(out[:, d - 1], c * s, rtol=1e-12)
    others = np.delete(out, j3, axis=0)
    assert below(others[:, 0], w * a * s)
    assert below(others[:, 1 : d - 1], t * w * b * s)


# --- App F: cross-attention (Def F.1 with the SVL-E8 columns) ------------------------------------------------------


@pytest.mark.parametrize(("n", "d", "a", "j2", "j3"), CROSS_D1 + CROSS_D0)
def test_lemmas_f2_f6_f10_f14_scores_are_log_n_except_the_spike(n, d, a, j2, j3):
    """Lemmas F.10/F.14 Parts 1–2: u_lin(j2, j3) = (1 + a)·L and every other entry L; Lemmas F.2/F.6 Parts 1a–2b:
    u_exp(j2, j3) = n^{1+a}, every other entry n (F.14's rows read j2 for j3, its Part 2 "j0 ≠ j2 or j1 ≠ j3":
    SVL-E16)."""
    S, _, _ = cross_case(n, d, a, j2, j3)
    L = math.log(n)
    expected = np.full((n, n), L)
    expected[j2, j3] = (1 + a) * L
    np.testing.assert_allclose(S, expected, rtol=1e-12)
    u = np.exp(S)
    assert u[j2, j3] == pytest.approx(n ** (1 + a), rel=1e-10)
    np.testing.assert_allclose(np.delete(u.ravel(), j2 * n + j3), n, rtol=1e-12)


@pytest.mark.parametrize(("n", "d", "a", "j2", "j3"), CROSS_D1)
def test_lemma_f2_softmax_weights_obey_parts_3_and_4b(n, d, a, j2, j3):
    """Lemma F.2 (𝒟1): Part 3a f(j2, j3) ≥ 1/2 (a1 > 1), Part 3b f(j2, j1 ≠ j3) ≤ 1/n, Part 4b rows j0 ≠ j2 are
    uniform 1/n (Part 4's header reads j0 ≠ j2: SVL-E16)."""
    S, _, _ = cross_case(n, d, a, j2, j3)
    f = sp.normalise(S, "exp")
    assert f[j2, j3] >= 0.5
    assert below(np.delete(f[j2], j3), 1 / n)
    np.testing.assert_allclose(np.delete(f, j2, axis=0), 1 / n, rtol=1e-12)


@pytest.mark.parametrize(("n", "d", "a", "j2", "j3"), CROSS_D1)
def test_lemma_f3_softmax_outputs_obey_every_part(n, d, a, j2, j3):
    """Lemma F.3 (𝒟1, V = I): Part 1 c(j2, 0) ≥ 1/2; Part 2 c(j2, g) ≥ 1/2 and the other coordinates 1..d − 1 of row
    j2 ≤ t/n; Part 3 c(j0 ≠ j2, 0) ≤ 1/n; Part 4 c(j0 ≠ j2, i0 ≥ 1) ≤ t/n (both with equality)."""
    _, t, g = cross_case(n, d, a, j2, j3)
    c = sp.cross_outputs(n, d, a, j2, j3)["exp"]
    assert c[j2, 0] >= 0.5 and c[j2, g] >= 0.5
    assert below(np.delete(c[j2, 1:], g - 1), t / n)
    others = np.delete(c, j2, axis=0)
    assert below(others[:, 0], 1 / n)
    assert below(others[:, 1:], t / n)


@pytest.mark.parametrize(("n", "d", "a", "j2", "j3"), CROSS_D0)
def test_lemma_f6_softmax_weights_obey_parts_3_and_4b(n, d, a, j2, j3):
    """Lemma F.6 (data from 𝒟0, SVL-E16): Part 3a f(j2, j3) ≤ n^{−(1−a0)} (SVL-E16's reading; strict, 5.2706e−3 against
    5.2721e−3 at a0 = 0.01), Part 3b f(j2, j1 ≠ j3) ≤ 1/n, Part 4b rows j0 ≠ j2 uniform 1/n. (Part 4a is false as
    printed: test_cross_row_labels_of_lemmas_f6_f11_f14_are_false_as_printed.)"""
    S, _, _ = cross_case(n, d, a, j2, j3)
    f = sp.normalise(S, "exp")
    assert f[j2, j3] < n ** (a - 1)
    assert below(np.delete(f[j2], j3), 1 / n)
    np.testing.assert_allclose(np.delete(f, j2, axis=0), 1 / n, rtol=1e-12)


@pytest.mark.parametrize(("n", "d", "a", "j2", "j3"), CROSS_D0)
def test_lemma_f7_softmax_outputs_obey_every_part(n, d, a, j2, j3):
    """Lemma F.7 (𝒟0, rows j3 read as j2: SVL-E16): Part 1 c(j2, 0) ≤ n^{−(1−a0)}; Part 2 c(j2, i0 ≥ 1)
    ≤ t·n^{−(1−a0)}; Part 4 c(j0 ≠ j2, 0) ≤ 1/n; Part 5 c(j0 ≠ j2, i0 ≥ 1) ≤ t/n (Part 3 is not printed)."""
    _, t, _ = cross_case(n, d, a, j2, j3)
    c = sp.cross_outputs(n, d, a, j2, j3)["exp"]
    assert c[j2, 0] <= n ** (a - 1)
    assert below(c[j2, 1:], t * n ** (a - 1))
    others = np.delete(c, j2, axis=0)
    assert below(others[:, 0], 1 / n)
    assert below(others[:, 1:], t / n)


@pytest.mark.parametrize(("n", "d", "a", "j2", "j3"), CROSS_D1 + CROSS_D0)
def test_lemmas_f10_f14_linear_weights_obey_parts_3_to_5(n, d, a, j2, j3):
    """Lemmas F.10 (𝒟1) and F.14 (𝒟0, rows j3 read as j2: SVL-E16): Part 3 f_lin(j2, j3) ≤ (1 + a)/n, Part 4
    f_lin(j2, j1 ≠ j3) ≤ 1/n, Part 5 rows j0 ≠ j2 are uniform 1/n."""
    S, _, _ = cross_case(n, d, a, j2, j3)
    f = sp.normalise(S, "lin")
    assert f[j2, j3] <= (1 + a) / n
    assert below(np.delete(f[j2], j3), 1 / n)
    np.testing.assert_allclose(np.delete(f, j2, axis=0), 1 / n, rtol=1e-12)


@pytest.mark.parametrize(("n", "d", "a", "j2", "j3"), CROSS_D1 + CROSS_D0)
def test_lemmas_f11_f15_linear_outputs_obey_every_part(n, d, a, j2, j3):
    """Lemmas F.11 (data from 𝒟1, SVL-E16; rows j3 read as j2) and F.15 (𝒟0, n = t(d − 1): SVL-E16): Part 1
    c_lin(j2, 0) ≤ (1 + a)/n; Part 2 c_lin(j2, i0 ≥ 1) ≤ (1 + a)·t/n; Part 3 c_lin(j0 ≠ j2, 0) ≤ 1/n; Part 4
    c_lin(j0 ≠ j2, i0 ≥ 1) ≤ t/n (Parts 3–4 with equality)."""
    _, t, _ = cross_case(n, d, a, j2, j3)
    c = sp.cross_outputs(n, d, a, j2, j3)["lin"]
    assert c[j2, 0] <= (1 + a) / n
    assert below(c[j2, 1:], (1 + a) * t / n)
    others = np.delete(c, j2, axis=0)
    assert below(others[:, 0], 1 / n)
    assert below(others[:, 1:], t / n)


def test_cross_row_labels_of_lemmas_f6_f11_f14_are_false_as_printed():
    """Read literally, three row labels of App F are false (n = 200, d = 11, j2 = 4 ≠ j3 = 17); with j2 for the row
    they hold (tests above). Lemma F.6 Part 4a: "for j0 = j2, f_exp(j0, j1) = 1/n" — f_exp(j2, j3) =
    n^{a0}/(n^{a0} + n − 1) = 5.2706e−3 ≠ 5e−3 (a0 = 0.01; the F.2 Part 4 slip of SVL-E16, repeated). Lemma F.11
    Part 3: "for j0 ≠ j3, c_lin(j0, 0) ≤ 1/n" — row j2 has (1 + a1)/(n + a1) = 0.019704 > 0.005 (a1 = 3). Lemma F.14
    Part 1: "u_lin(j3, j3) = (1 + a0)·L" — it is L; Part 5: "for j0 ≠ j3, f_lin(j0, ·) = 1/n" — row j2 has
    f_lin(j2, j3) = (1 + a0)/(n + a0) = 5.0497e−3."""
    n, d, j2, j3, a0, a1 = 200, 11, 4, 17, 0.01, 3.0
    S0, _, _ = cross_case(n, d, a0, j2, j3)
    f_exp = sp.normalise(S0, "exp")
    assert f_exp[j2, j3] == pytest.approx(n**a0 / (n**a0 + n - 1), rel=1e-12)
    assert f_exp[j2, j3] == pytest.approx(5.2706e-3, abs=1e-7) and abs(f_exp[j2, j3] * n - 1) > 0.05
    c_lin = sp.cross_outputs(n, d, a1, j2, j3)["lin"]
    assert c_lin[j2, 0] == pytest.approx((1 + a1) / (n + a1), rel=1e-12) and c_lin[j2, 0] > 3.9 / n
    assert S0[j3, j3] == pytest.approx(math.log(n), rel=1e-12)  # not (1 + a0)·log n
    f_lin = sp.normalise(S0, "lin")
    assert f_lin[j2, j3] == pytest.approx((1 + a0) / (n + a0), rel=1e-12) and f_lin[j2, j3] > 1.0099 / n


@pytest.mark.parametrize("d", [6, 11])
@pytest.mark.parametrize("a1", [3.0, 1.5])
def test_lemma_f4_part_1_spike_row_reaches_0_9_for_exactly_a_quarter_of_sign_vectors(d, a1):
    """Lemma F.4 Part 1 with row j2 and "≥ 1/10" (SVL-E16): over all 2^d sign vectors, ⟨c_exp(j2), σ⟩ ≥ 1 − 0.1
    exactly when σ0 = σg = +1, so the probability is 1/4."""
    n, j2, j3 = 200, 4, 17
    c = sp.cross_outputs(n, d, a1, j2, j3)["exp"][j2]
    sigmas = sp.sign_vectors(d)
    fires = sigmas @ c >= 0.9
    g = 1 + j3 % (d - 1)
    np.testing.assert_array_equal(fires, (sigmas[:, 0] > 0) & (sigmas[:, g] > 0))
    assert fires.mean() == 0.25


@pytest.mark.parametrize(
    ("lemma", "a", "kind", "rows"),
    [
        ("F.4 Part 2", 3.0, "exp", [0, 199]),
        ("F.8 Parts 1-2", 0.01, "exp", [4, 17, 0]),
        ("F.12 Parts 1-2", 3.0, "lin", [4, 17, 0]),
        ("F.16 Parts 1-2", 0.01, "lin", [4, 17, 0]),
    ],
)
def test_lemma_f4_part_2_and_lemmas_f8_f12_f16_are_false_as_printed_at_d_11(lemma, a, kind, rows):
    """Lemmas F.4 Part 2, F.8, F.12, F.16 claim Pr_σ[|⟨c(j0), σ⟩| < 0.5] = 1 − δ/poly(n). At the paper's own Fig 7
    size n = 200, d = 11 (SVL-E18) every covered row has failure probability exactly 112/1024 = 0.109375 over all
    2^11 sign vectors (rows j0 ≠ j2 are [1/n, 1/(d − 1), …], so |⟨c, σ⟩| ≥ 0.5 iff at most 2 or at least 8 of the
    10 middle signs are +), more than δ ≤ 0.1 allows. Asymptotically (d = ω(n^0.02)) the Hoeffding argument holds;
    the statement fails at the sizes the experiments use (at d = 41 the probability is 1.45e−3)."""
    n, d, j2, j3 = 200, 11, 4, 17
    c = sp.cross_outputs(n, d, a, j2, j3)[kind][rows]
    p = np.mean(np.abs(sp.sign_vectors(d) @ c.T) >= 0.5, axis=0)
    np.testing.assert_array_equal(p, 112 / 1024)
    assert p.min() > 0.1, lemma


# --- §3–4: Hoeffding (quoted) and the toy model ------------------------------------------------------------------


def test_lemma_3_1_hoeffding_holds_exactly_on_all_2_to_the_16_sign_vectors():
    """Lemma 3.1 for X_i = f_i·σ_i ∈ [−f_i, f_i] with f the softmax of an adversarial toy D0 logit vector (n = 16):
    the exact Pr[|Σ X_i| ≥ t] over all 65 536 sign vectors is below 2·exp(−2t²/Σ(2f_i)²)."""
    u, _ = sp.toy_logits(np.random.default_rng(0), 16, 0, mode="adversarial")
    f = sp.normalise(u, "exp")
    sums = sp.sign_vectors(16) @ f
    for t, exact in ((0.3, 0.267669677734375), (0.5, 0.100677490234375), (0.7, 0.0137939453125)):
        p = float(np.mean(np.abs(sums) >= t))
        assert p == pytest.approx(exact, abs=1e-15)
        assert p <= 2 * math.exp(-2 * t * t / np.sum((2 * f) ** 2))


def two_level_tail(f, t) -> float:
    """Exact Pr_σ[|Σ f_i σ_i| ≥ t] when f takes two values (binomial counts of + signs in each level)."""
    (lo, hi), counts = np.unique(f, return_counts=True)  # exactly two levels, or this unpacking fails
    k_lo, k_hi = (int(k) for k in counts)

    def pmf(k):
        return np.array([math.comb(k, j) / 2**k for j in range(k + 1)])

    sums = hi * (2 * np.arange(k_hi + 1) - k_hi)[:, None] + lo * (2 * np.arange(k_lo + 1) - k_lo)[None, :]
    return float((pmf(k_hi)[:, None] * pmf(k_lo)[None, :])[np.abs(sums) >= t].sum())


@pytest.mark.parametrize("n", [4, 10, 100, 1000])
def test_lemma_4_1_weights_of_d0_are_at_most_1_4_over_n_linear_and_n_to_the_minus_0_6_softmax(n):
    """Lemma 4.1, the deterministic cores of both proofs: for any D0 logits (entries in [L, 1.4L]), |f_lin,i| ≤ 1.4/n
    (the proof prints the weaker 2/n) and f_exp,i ≤ n^{−0.6}; checked on sampled and adversarial logits and on the
    extreme vectors (all L; one entry 1.4L, where f_exp comes within 2% of n^{−0.6} at n = 1000)."""
    L = math.log(n)
    rng = np.random.default_rng(n)
    logits = [sp.toy_logits(rng, n, 0, mode=mode)[0] for mode in ("uniform", "adversarial") for _ in range(10)]
    one_high = np.full(n, L)
    one_high[0] = 1.4 * L
    logits += [np.full(n, L), one_high]
    for u in logits:
        assert np.all((u >= L * (1 - 1e-12)) & (u <= 1.4 * L * (1 + 1e-12)))
        assert below(sp.normalise(u, "lin"), 1.4 / n)
        assert below(sp.normalise(u, "exp"), n**-0.6)


@pytest.mark.parametrize("n", [100, 1000])
def test_lemma_4_1_tails_are_below_hoeffding_and_the_printed_rates(n):
    """Lemma 4.1 Part 1 at t = C·√(log(n/δ)/n), δ = 0.01: on the adversarial D0 vector (⌈n^0.6⌉ entries 1.4L, the
    rest L) the exact tail ≤ Hoeffding's 2·exp(−2t²/Σ(2f_i)²) ≤ 2(δ/n)^{C²/8} (the proof's |f_i| ≤ 2/n).
    Part 2 holds trivially: its threshold C·√(log(n/δ))·n^{−0.1} exceeds 1 ≥ |Σ f_exp,i σ_i| for C ≥ 1."""
    delta, L = 0.01, math.log(n)
    u = np.full(n, L)
    u[: math.ceil(n**0.6)] = 1.4 * L
    f = sp.normalise(u, "lin")
    for C in (1, 2, 4):
        t = C * math.sqrt(math.log(n / delta) / n)
        hoeffding = 2 * math.exp(-2 * t * t / np.sum((2 * f) ** 2))
        assert two_level_tail(f, t) <= hoeffding <= 2 * (delta / n) ** (C * C / 8)
    assert math.sqrt(math.log(n / delta)) * n**-0.1 > 1.05  # C = 1; and |Σ f_i σ_i| ≤ Σ f_i = 1
    assert np.abs(sp.normalise(u, "exp")).sum() == pytest.approx(1, abs=1e-12)


@pytest.mark.parametrize("n", [4, 10, 100, 1000])
def test_lemma_4_2_part_1_linear_weights_are_at_most_4_over_n_plus_3(n):
    """Lemma 4.2 Part 1, deterministic core: for D1 logits f_lin,i ≤ 4/(n + 3), with equality at the spike when the
    background is L; and the exact tail of that two-level vector at t = C·√(log(n/δ)/n) is below Hoeffding's bound."""
    L, j = math.log(n), 3 % n
    u = np.full(n, L)
    u[j] = 4 * L
    f = sp.normalise(u, "lin")
    assert f[j] == pytest.approx(4 / (n + 3), rel=1e-12)
    rng = np.random.default_rng(n)
    for mode in ("uniform", "adversarial"):
        for _ in range(10):
            assert below(sp.normalise(sp.toy_logits(rng, n, 1, mode=mode)[0], "lin"), 4 / (n + 3))
    if n >= 100:
        for C in (1, 2):
            t = C * math.sqrt(math.log(n / 0.01) / n)
            assert two_level_tail(f, t) <= 2 * math.exp(-2 * t * t / np.sum((2 * f) ** 2))


@pytest.mark.parametrize("n", [4, 10, 12, 100, 1000])
def test_lemma_4_2_part_2_softmax_sum_stays_above_a_quarter_for_every_sign_vector(n):
    """Lemma 4.2 Part 2 on the worst D1 vector (background 1.4L): f_j ≥ 1/2, f_i ≤ n^{−2.6} for i ≠ j, and
    min_σ |Σ f_i σ_i| = 2f_j − 1 ≥ 1/2 − (n − 1)·n^{−2.6} ≥ 1/4 (0.8491 at n = 4); at n = 12 the minimum over all
    4096 sign vectors is 2f_j − 1 exactly."""
    L, j = math.log(n), 3
    u = np.full(n, 1.4 * L)
    u[j] = 4 * L
    f = sp.normalise(u, "exp")
    assert f[j] >= 0.5
    assert np.delete(f, j).max() <= n**-2.6
    assert 2 * f[j] - 1 >= 0.5 - (n - 1) * n**-2.6 >= 0.25
    if n == 12:
        assert np.abs(sp.sign_vectors(n) @ f).min() == pytest.approx(2 * f[j] - 1, rel=1e-12)
    if n == 4:
        assert 2 * f[j] - 1 == pytest.approx(0.84909, abs=1e-5)


@pytest.mark.parametrize("background", ["L", "1.4L", "uniform"])
def test_lemma_4_2_part_3_sign_is_sigma_j_for_every_sign_vector(background):
    """Lemma 4.2 Part 3 at n = 12: sign(Σ f_exp,i σ_i) = σ_j for all 4096 sign vectors, so each sign has probability
    exactly 1/2."""
    n, j = 12, 5
    L = math.log(n)
    if background == "uniform":
        u = np.random.default_rng(2).uniform(L, 1.4 * L, n)
    else:
        u = np.full(n, L if background == "L" else 1.4 * L)
    u[j] = 4 * L
    sigmas = sp.sign_vectors(n)
    sums = sigmas @ sp.normalise(u, "exp")
    np.testing.assert_array_equal(np.sign(sums), sigmas[:, j])
    assert np.mean(sums > 0) == 0.5
