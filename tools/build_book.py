#!/usr/bin/env python
"""Build the offline HTML book of the executed notebooks: the engine behind ``make book``.

    python tools/build_book.py                       # build/book/_build/html/index.html
    python tools/build_book.py --executed build/quick/executed

Steps:
1. Choose the executed notebooks. By default these are ``build/executed`` (standard scale, written by ``make``)
   when it holds a completed run of every notebook. Otherwise they are ``build/quick/executed``; missing or
   incomplete quick runs are executed first. Only a run that completed is published: the runner marks it in the
   executed notebook's metadata (``rflib.complete``), and the build refuses, naming them, any notebook without it.
2. Vendor MathJax 3 from the npm registry. ``npm pack mathjax@3.2.2`` is checked against a pinned SHA-512 and its
   ``es5/`` is unpacked into the book's static files, so math renders with no network.
3. Write a Jupyter Book (< 2, Sphinx based) source tree. It holds a landing page listing each paper with its
   notebooks, the reproduction report, and the notebooks themselves (without their stderr: progress bars).
   Nothing is re-executed, and no launch, comment or repository buttons are added: the pages make no external
   request.
4. ``jupyter-book build``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from make_report import PAPERS  # noqa: E402  (one grouping of notebooks by paper, shared with the report)

MATHJAX = "mathjax@3.2.2"
# SHA-512 of mathjax-3.2.2.tgz in npm's Subresource Integrity form: `npm view mathjax@3.2.2 dist.integrity`.
MATHJAX_SHA512 = "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=="
BOOK_CONFIG = """\
title: rflib reproductions
author: rflib reproductions
copyright: "2026"
only_build_toc_files: true
execute:
  execute_notebooks: "off"
parse:
  myst_enable_extensions: [dollarmath, amsmath]
html:
  use_repository_button: false
  use_issues_button: false
  use_edit_page_button: false
  use_download_button: false
  comments:
    hypothesis: false
    utterances: false
launch_buttons:
  notebook_interface: classic
  binderhub_url: ""
  jupyterhub_url: ""
  colab_url: ""
  thebe: false
sphinx:
  config:
    html_static_path: [vendor]
    mathjax_path: mathjax/tex-chtml.js
    html_show_sourcelink: false
    html_theme_options:
      use_download_button: false
      use_fullscreen_button: false
      search_bar_text: "Search the book"
"""


def notebook_names() -> list[str]:
    return sorted(p.stem for p in (ROOT / "notebooks").glob("*.py"))


def run_is_complete(executed_notebook: Path) -> bool:
    """Whether ``tools/run_notebooks.py`` marked this executed notebook's run complete (``metadata.rflib``)."""
    if not executed_notebook.exists():
        return False
    metadata = nbformat.read(executed_notebook, as_version=4).metadata
    return metadata.get("rflib", {}).get("complete") is True


def incomplete_runs(executed: Path, names: list[str]) -> list[str]:
    """The notebooks among ``names`` that have an executed notebook in ``executed`` from a run that did not
    complete (it failed, was interrupted, or predates the completion marker)."""
    return [n for n in names if (executed / f"{n}.ipynb").exists() and not run_is_complete(executed / f"{n}.ipynb")]


def require_complete(executed: Path, names: list[str]) -> None:
    """Refuse, naming them, to publish notebooks whose run did not complete."""
    incomplete = incomplete_runs(executed, names)
    if incomplete:
        raise SystemExit(
            f"book: refusing to publish executed notebooks whose run did not complete ({executed}): "
            f"{', '.join(incomplete)}. Re-run them with tools/run_notebooks.py."
        )


def choose_executed(explicit: Path | None, *, quick_only: bool = False) -> tuple[Path, str]:
    """(directory of executed notebooks, its scale), running quick-scale notebooks when no complete runs exist."""
    names = notebook_names()
    if explicit is not None:
        return explicit, "as given"
    standard = ROOT / "build" / "executed"
    if not quick_only and all(run_is_complete(standard / f"{n}.ipynb") for n in names):
        return standard, "standard"
    quick = ROOT / "build" / "quick" / "executed"
    missing = [n for n in names if not run_is_complete(quick / f"{n}.ipynb")]
    if missing:
        print(f"no complete executed notebooks for {', '.join(missing)}: running them at quick scale", flush=True)
        # a staging directory of this process's own: a notebook test may be running the same notebook meanwhile
        # (its staging is build/staging/quick/<name>); the promotions into build/quick are atomic file by file
        staging = ROOT / "build" / "staging" / f"book-{os.getpid()}"
        runner = [
            sys.executable,
            str(ROOT / "tools" / "run_notebooks.py"),
            "--scale",
            "quick",
            "--staging",
            str(staging),
        ]
        subprocess.run(runner + [str(ROOT / "notebooks" / f"{n}.py") for n in missing], check=True)
    return quick, "quick"


def vendor_mathjax(cache: Path, static: Path) -> None:
    """Unpack MathJax's es5 bundle into ``static/mathjax`` (npm pack, checked against MATHJAX_SHA512)."""
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / f"{MATHJAX.replace('@', '-')}.tgz"
    if not tarball.exists():
        if shutil.which("npm") is None:
            raise SystemExit("make book needs npm (Debian: apt-get install npm) to fetch MathJax from the npm registry")
        subprocess.run(["npm", "pack", MATHJAX, "--pack-destination", str(cache), "--silent"], check=True)
    digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if digest != MATHJAX_SHA512:
        tarball.unlink()
        raise SystemExit(f"{tarball.name}: {digest} does not match the pinned {MATHJAX_SHA512}; run again")
    target = static / "mathjax"
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("package/es5/")]
        for m in members:
            m.name = m.name.removeprefix("package/es5/")
        tar.extractall(target, members=members, filter="data")


def notebook_title(name: str) -> str:
    """The notebook's title: its first ``# # `` heading in the percent-format source (else its name)."""
    for line in (ROOT / "notebooks" / f"{name}.py").read_text().splitlines():
        if line.startswith("# # "):
            return line[4:].strip()
    return name


def landing_page(names: list[str], scale: str) -> str:
    """index.md: what the book is, and each paper with its notebooks."""
    lines = [
        "# rflib reproductions",
        "",
        "A literate, executable reproduction of four papers on random features and attention, with `rflib`, the "
        "JAX/numpy library that implements their estimators. Every page below is an executed notebook: the claim, "
        "the derivation, the code, the figure, and a paper-vs-ours table. "
        "[The reproduction report](reproduction) lists every claim with its verdict.",
        "",
        f"*These pages show the notebooks executed at **{scale}** scale.*",
        "",
    ]
    for title, authors, prefixes in PAPERS:
        chapter = [n for n in names if n[:2] in prefixes]
        if not chapter:
            continue
        lines += [f"## {title}", "", f"*{authors}*", ""]
        lines += [f"- [{notebook_title(n)}]({n})" for n in chapter]
        lines.append("")
    return "\n".join(lines)


def reproduction_page() -> str:
    """REPRODUCTION.md with its links to notebook sources pointed at the book's notebook pages (ERRATA.md, not a book
    page, is named as the repository file it is)."""
    text = (ROOT / "REPRODUCTION.md").read_text().replace("[ERRATA.md](ERRATA.md)", "`ERRATA.md` (in the repository)")
    return re.sub(r"\]\(notebooks/(\w+)\.py(?:#L\d+)?\)", r"](\1.ipynb)", text)


def table_of_contents(names: list[str]) -> str:
    lines = ["format: jb-book", "root: index", "parts:"]
    for title, _, prefixes in PAPERS:
        chapter = [n for n in names if n[:2] in prefixes]
        if chapter:
            lines += [f'  - caption: "{title}"', "    chapters:"] + [f"      - file: {n}" for n in chapter]
    lines += ['  - caption: "Report"', "    chapters:", "      - file: reproduction"]
    return "\n".join(lines) + "\n"


def write_source(src: Path, executed: Path, scale: str, mathjax_cache: Path) -> list[str]:
    """The book's source tree under ``src``; returns the notebook names included."""
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    names = [n for n in notebook_names() if (executed / f"{n}.ipynb").exists()]
    for n in names:
        notebook = nbformat.read(executed / f"{n}.ipynb", as_version=4)
        for cell in notebook.cells:  # progress bars and kernel noise are for live runs, not for readers
            if cell.get("outputs"):
                cell.outputs = [
                    o for o in cell.outputs if not (o.get("output_type") == "stream" and o.name == "stderr")
                ]
        nbformat.write(notebook, src / f"{n}.ipynb")
    (src / "_config.yml").write_text(BOOK_CONFIG)
    (src / "_toc.yml").write_text(table_of_contents(names))
    (src / "index.md").write_text(landing_page(names, scale))
    (src / "reproduction.md").write_text(reproduction_page())
    vendor_mathjax(mathjax_cache, src / "vendor")
    return names


def build(executed: Path | None = None, out: Path = ROOT / "build" / "book", *, quick_only: bool = False) -> Path:
    """Build the book into ``out`` (``quick_only``: from the quick-scale runs even after ``make``); returns the HTML
    directory."""
    executed, scale = choose_executed(executed, quick_only=quick_only)
    require_complete(executed, notebook_names())
    names = write_source(out / "src", executed, scale, ROOT / "build" / "vendor")
    print(f"book: {len(names)} notebooks from {executed} ({scale} scale)", flush=True)
    shutil.rmtree(out / "_build", ignore_errors=True)
    command = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(out / "src"), "--path-output", str(out)]
    subprocess.run(command + ["--warningiserror", "--quiet"], check=True)
    html = out / "_build" / "html"
    print(f"book: {html / 'index.html'}")
    return html


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executed", type=Path, help="directory of executed .ipynb (default: see module doc)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "book")
    args = parser.parse_args(argv)
    build(args.executed, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
