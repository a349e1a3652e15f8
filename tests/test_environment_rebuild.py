"""The Makefile never destroys a working environment: it builds .venv-<content key> beside the current one and
switches the .venv symlink only after every step succeeded; an mtime change rebuilds nothing; installs need hashes.

The rebuild tests run the real Makefile and tools/venvctl.py in a temporary copy, with the installers stubbed on
make's command line (MKVENV, BOOTSTRAP, UV): offline and in a second or two.
"""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV_INPUTS = re.search(r"^ENV_INPUTS := (.*)$", (ROOT / "Makefile").read_text(), flags=re.M).group(1).split()
MAKE = shutil.which("make")
needs_make = pytest.mark.skipif(MAKE is None, reason="make is not installed")

# `python -m venv DIR` stand-in: DIR/bin/python is a script that names its environment.
MKVENV = """#!/bin/sh
mkdir -p "$1/bin" && printf '#!/bin/sh\\necho "python of %s"\\n' "$1" > "$1/bin/python" && chmod +x "$1/bin/python"
"""
UV_OK = "#!/bin/sh\nexit 0\n"
UV_OFFLINE = "#!/bin/sh\necho 'error: Failed to fetch: https://pypi.org/simple/jax/ (unreachable)' >&2\nexit 2\n"


@pytest.fixture
def project(tmp_path):
    """A copy of the Makefile, the environment's inputs and tools/venvctl.py, plus the installer stand-ins."""
    for name in ["Makefile", "tools/venvctl.py", *ENV_INPUTS]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name, text in {"mkvenv": MKVENV, "uv-ok": UV_OK, "uv-offline": UV_OFFLINE}.items():
        (stubs / name).write_text(text)
        (stubs / name).chmod(0o755)
    return tmp_path


def make(project: Path, *args: str, uv: str = "uv-ok") -> subprocess.CompletedProcess:
    stubs = project / "stubs"
    overrides = [f"PYTHON={sys.executable}", f"MKVENV={stubs / 'mkvenv'}", "BOOTSTRAP=true", f"UV={stubs / uv}"]
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}}
    return subprocess.run(
        [MAKE, "--no-print-directory", *args, *overrides], cwd=project, env=env, capture_output=True, text=True
    )


def python_of(project: Path) -> str:
    return subprocess.run([project / ".venv" / "bin" / "python"], capture_output=True, text=True, check=True).stdout


def envs(project: Path) -> list[str]:
    return sorted(p.name for p in project.glob(".venv*"))


@needs_make
def test_a_failed_rebuild_keeps_the_old_environment_and_mtimes_rebuild_nothing(project):
    built = make(project, "venv")
    assert built.returncode == 0, built.stdout + built.stderr
    old = os.readlink(project / ".venv")
    assert re.fullmatch(r"\.venv-[0-9a-f]{12}", old) and envs(project) == [".venv", old]
    assert python_of(project) == f"python of {old}\n"

    # Only mtimes change (a checkout, an editor's save): the environment is up to date.
    past = time.time() - 3600
    os.utime(project / old / ".installed", (past, past))
    for name in ENV_INPUTS:
        (project / name).touch()
    assert make(project, "-q", "venv").returncode == 0
    assert "Nothing to be done" in make(project, "venv").stdout

    # The content changes and the installer fails (offline): make says so and .venv is untouched.
    with open(project / "requirements.lock", "a") as f:
        f.write("# a new pin\n")
    assert make(project, "-q", "venv").returncode != 0, "a content change must trigger a rebuild"
    failed = make(project, "venv", uv="uv-offline")
    assert failed.returncode != 0
    assert "pypi.org/simple/jax/ (unreachable)" in failed.stderr
    assert re.search(r"building the environment \.venv-[0-9a-f]{12} failed", failed.stderr)
    assert f"Nothing was switched: .venv still points at {old}." in failed.stderr
    assert os.readlink(project / ".venv") == old and envs(project) == [".venv", old], "the partial build is removed"
    assert python_of(project) == f"python of {old}\n" and (project / old / ".installed").exists()

    # Back online: the new environment is switched in and the old one removed.
    rebuilt = make(project, "venv")
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    new = os.readlink(project / ".venv")
    assert new != old and envs(project) == [".venv", new]
    assert python_of(project) == f"python of {new}\n"
    assert make(project, "-q", "venv").returncode == 0


@needs_make
def test_a_venv_directory_from_the_old_makefile_is_replaced_only_after_a_successful_build(project):
    legacy = project / ".venv" / "bin" / "python"
    legacy.parent.mkdir(parents=True)
    legacy.write_text('#!/bin/sh\necho "python of the old layout"\n')
    legacy.chmod(0o755)

    failed = make(project, "venv", uv="uv-offline")
    assert failed.returncode != 0 and "the environment built by the previous Makefile) is unchanged" in failed.stderr
    assert not (project / ".venv").is_symlink() and envs(project) == [".venv"]
    assert python_of(project) == "python of the old layout\n"

    built = make(project, "venv")
    assert built.returncode == 0, built.stdout + built.stderr
    assert (project / ".venv").is_symlink() and envs(project) == [".venv", os.readlink(project / ".venv")]
    assert python_of(project) == f"python of {os.readlink(project / '.venv')}\n"


def _hashed_pins(path: Path) -> dict[str, int]:
    """{name==version: number of --hash=sha256 options} of a uv-generated lock."""
    pins, current = {}, None
    for line in path.read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            current = line.removesuffix("\\").strip()
            pins[current] = 0
        elif "--hash=sha256:" in line:
            pins[current] += 1
    return pins


@pytest.mark.parametrize("lock", ["requirements.lock", "requirements-nodeps.lock", "requirements-uv.lock"])
def test_every_locked_package_has_a_hash_and_make_requires_them(lock):
    pins = _hashed_pins(ROOT / lock)
    assert pins and all(pins.values()), f"{lock}: pins without a hash; run `make lock`"
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(rf"--require-hashes (--no-deps )?\\?\s*-r {re.escape(lock)}", makefile)
    assert lock in ENV_INPUTS


def test_the_hashed_locks_pin_what_their_inputs_ask_for():
    def normal(pin: str) -> str:
        name, version = pin.split("==")
        return f"{re.sub(r'[-_.]+', '-', name).lower()}=={version}"

    wanted = [line.split("#")[0].strip() for line in (ROOT / "requirements-nodeps.txt").read_text().splitlines()]
    nodeps = {normal(pin) for pin in wanted if pin}
    assert {normal(pin) for pin in _hashed_pins(ROOT / "requirements-nodeps.lock")} == nodeps, "run `make lock`"
    uv_pin = re.search(r"^UV_PIN\s*:= (\S+)", (ROOT / "Makefile").read_text(), flags=re.M).group(1)
    assert set(_hashed_pins(ROOT / "requirements-uv.lock")) == {uv_pin}, "run `make lock`"


def test_the_environment_and_the_checkout_ship_bytecode_for_machines_that_never_write_it():
    """uv installs without .pyc (pip writes them); with PYTHONDONTWRITEBYTECODE set, as on this project's machines,
    every process then compiled every module it imported (`import jax` 3.0 s instead of 1.1 s). The locked installs
    compile bytecode, and every target that starts many processes compiles the checkout's own modules first."""
    makefile = (ROOT / "Makefile").read_text()
    installs = re.findall(r"\$\(UV_INSTALL\)([^\\\n]*-r requirements[\w-]*\.lock)", makefile)
    assert len(installs) == 2 and all("--compile-bytecode" in line for line in installs), installs
    own = re.search(r"^OWN_PYC\s*=\s*\$\(PY\) -m compileall -q ([\w ]+)", makefile, flags=re.M)
    assert own and set(own.group(1).split()) >= {"rflib", "tools", "benchmarks"}
    for target, runs in (("test", "-m pytest"), ("notebooks", "$(RUN)"), ("quick", "$(RUN)"), ("paper", "$(RUN)")):
        recipe = re.search(rf"^{target}: .*\n((?:\t.*\n)+)", makefile, flags=re.M)
        assert recipe and "$(OWN_PYC)" in recipe.group(1), f"make {target} does not compile the checkout's modules"
        assert recipe.group(1).index("$(OWN_PYC)") < recipe.group(1).index(runs), f"make {target} compiles too late"
