"""The package's shape holds: layers import only downwards, no module uses another's private names, the map in
``rflib/__init__.py`` names every module, features/ and moments/ mirror each other, and the README example runs."""

import ast
import importlib
import inspect
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rflib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rflib"
FOUNDATIONS = {"_checks", "_atomic", "fastmath", "kernels", "quadrature", "kama", "projections", "sharding"}
COMBINING = {"attention", "sphere", "separation"}


def _modules() -> dict[str, Path]:
    """Dotted name below rflib → path, for every module file of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] != "__init__":
            out[".".join(parts)] = path
    return out


def _layer(module: str) -> int:
    top = module.split(".")[0]
    if top in FOUNDATIONS:
        return 0
    if top == "features":
        return 1
    if top == "moments":
        return 2
    if top in COMBINING:
        return 3
    return {"experiments": 4, "notebook": 5}[top]


def _rflib_imports(path: Path) -> list[tuple[str, str | None]]:
    """(imported rflib module below rflib, local alias or None) for every import of the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "rflib":
            base = node.module.removeprefix("rflib").lstrip(".")
            for alias in node.names:
                candidate = f"{base}.{alias.name}".lstrip(".")
                target = (
                    candidate if candidate in _modules() or (PACKAGE / candidate.replace(".", "/")).is_dir() else base
                )
                found.append((target, alias.asname or alias.name))
        elif isinstance(node, ast.Import):
            found += [(a.name.removeprefix("rflib."), None) for a in node.names if a.name.startswith("rflib.")]
    return [(m, a) for m, a in found if m]


@pytest.mark.parametrize("module", sorted(_modules()))
def test_each_module_imports_only_from_its_own_or_lower_layers(module):
    path = _modules()[module]
    for target, _ in _rflib_imports(path):
        assert _layer(target) <= _layer(module), f"rflib.{module} (layer {_layer(module)}) imports rflib.{target}"


@pytest.mark.parametrize("module", sorted(_modules()))
def test_no_module_uses_another_modules_private_names(module):
    path = _modules()[module]
    source = path.read_text()
    for target, alias in _rflib_imports(path):
        if alias is None or alias[0].isupper():
            continue
        used = set(re.findall(rf"\b{re.escape(alias)}\._[a-z]\w*", source))
        assert not used, f"rflib.{module} uses private names of rflib.{target}: {sorted(used)}"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rflib"):
            private = [a.name for a in node.names if a.name.startswith("_") and a.name not in _modules()]
            assert not private, f"rflib.{module} imports private names {private} from {node.module}"


def test_the_package_map_names_every_module_and_every_name_resolves():
    doc = rflib.__doc__
    for module in _modules():
        assert re.search(rf"(^|\s){re.escape(module)}(\s|$)", doc, re.M), f"rflib/__init__.py's map misses {module}"
    for name in rflib.__all__:
        assert getattr(rflib, name) is importlib.import_module(f"rflib.{name}")
    assert rflib.kama.random_product is not None and rflib.experiments.rl is not None


def test_features_and_moments_mirror_each_other():
    features = {p.stem for p in (PACKAGE / "features").glob("*.py")} - {"__init__", "base"}
    moments = {p.stem for p in (PACKAGE / "moments").glob("*.py")} - {"__init__"}
    assert moments <= features, f"moments without a feature family: {sorted(moments - features)}"
    missing = sorted(family for family in features if not (ROOT / "tests" / f"test_{family}.py").exists())
    assert not missing, f"feature families without tests/test_<family>.py: {missing}"


@pytest.mark.parametrize("family", sorted(p.stem for p in (PACKAGE / "moments").glob("*.py") if p.stem != "__init__"))
def test_every_moments_module_has_the_uniform_log_mse_entry_point(family):
    log_mse = getattr(importlib.import_module(f"rflib.moments.{family}"), "log_mse", None)
    assert log_mse is not None, f"rflib.moments.{family} has no log_mse(x, y, m, *, ...)"
    parameters = list(inspect.signature(log_mse).parameters.values())
    assert [p.name for p in parameters[:3]] == ["x", "y", "m"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[3:]), "family parameters are keywords"


def test_readme_example_runs():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Using rflib") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 3, "the examples: every family in one loop, a Flax layer, every family's exact MSE"
    namespace = {"print": lambda *a: None}
    for code in blocks:  # later examples use the first one's names
        exec(compile(code, "README.md", "exec"), namespace)
    assert all(np.isfinite(float(v)) for v in namespace["log_mses"].values())
    x = jax.random.normal(jax.random.key(1), (2, 10, 512), jnp.float32)
    params = namespace["layer"].init(jax.random.key(2), x, x)
    assert namespace["layer"].apply(params, x, x).shape == x.shape
