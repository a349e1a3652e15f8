"""The Makefile's environment bookkeeping: a content key, and a swap that never leaves ``.venv`` broken.

Run with the base interpreter (``$(PYTHON)``, standard library only), never from the environment it manages.

    venvctl.py key FILE...           12 hex digits: SHA-256 of the files' names and contents, the Python version
                                     and the interpreter's path. The Makefile builds into ``.venv-<key>``, so a
                                     content change is a new directory and an mtime change is nothing.
    venvctl.py prepare LINK DIR      clear a failed earlier attempt at DIR (never the environment LINK points at)
    venvctl.py failed LINK DIR       remove the partial DIR, say that LINK still points at the old environment, exit 1
    venvctl.py switch LINK DIR       point the symlink LINK at DIR atomically (rename of a temporary link), mark DIR
                                     installed, then remove every other ``LINK-*`` directory; a real directory at
                                     LINK (built by the old Makefile) is moved aside and removed only after that.

Virtual environments are not relocatable (script shebangs hold absolute paths), so DIR is built where it stays
and only the symlink moves.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

STAMP = ".installed"  # inside DIR; the Makefile's $(STAMP), written last


def key(files: list[str]) -> str:
    digest = hashlib.sha256()
    digest.update(f"{sys.version}\n{os.path.realpath(sys.executable)}\n".encode())
    for name in files:  # a missing file hashes as such; make then says that it has no rule to make it
        content = Path(name).read_bytes() if Path(name).is_file() else b"missing"
        digest.update(f"{name}\0{hashlib.sha256(content).hexdigest()}\n".encode())
    return digest.hexdigest()[:12]


def _is_live(link: Path, target: Path) -> bool:
    return link.exists() and link.resolve() == target.resolve()


def _describe(link: Path) -> str:
    if link.is_symlink():
        state = "" if link.exists() else ", which does not exist"
        return f"{link} still points at {os.readlink(link)}{state}"
    if link.is_dir():
        return f"{link} (the environment built by the previous Makefile) is unchanged"
    return f"{link} does not exist yet"


def prepare(link: Path, target: Path) -> None:
    if _is_live(link, target):
        print(f"{target} is already the live environment; completing it in place")
    elif target.exists() or target.is_symlink():
        print(f"removing {target}, left by an earlier attempt that did not finish")
        _remove(target)


def failed(link: Path, target: Path) -> int:
    if not _is_live(link, target):
        _remove(target)
    print(
        f"\nmake: building the environment {target} failed (the step above says why: offline? PyPI unreachable? a "
        f"hash mismatch?). Nothing was switched: {_describe(link)}. Fix the cause and run make again.",
        file=sys.stderr,
    )
    return 1


def switch(link: Path, target: Path) -> None:
    if not (target / "bin" / "python").exists():
        raise SystemExit(f"{target}/bin/python does not exist; not switching {link}")
    temporary = link.with_name(f"{link.name}.switch-{os.getpid()}")
    _remove(temporary)
    temporary.symlink_to(target.name)  # relative: the link lives beside its target
    aside = None
    if link.is_dir() and not link.is_symlink():  # a real directory from the old Makefile: move it, delete it later
        aside = link.with_name(f"{link.name}.old-{os.getpid()}")
        link.rename(aside)
    try:
        os.replace(temporary, link)  # rename(2): atomic, whatever LINK pointed at
    except OSError:
        if aside is not None:
            aside.rename(link)
        _remove(temporary)
        raise
    (target / STAMP).touch()
    stale = [p for p in link.parent.glob(f"{link.name}[-.]*") if p.name != target.name and p.is_dir()]
    for path in stale:
        _remove(path)
    removed = f"; removed {', '.join(sorted(p.name for p in stale))}" if stale else ""
    print(f"{link} -> {target.name}{removed}")


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "key":
        print(key(argv[1:]))
        return 0
    if len(argv) == 3 and argv[0] in {"prepare", "failed", "switch"}:
        link, target = Path(argv[1]), Path(argv[2])
        if argv[0] == "failed":
            return failed(link, target)
        {"prepare": prepare, "switch": switch}[argv[0]](link, target)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
