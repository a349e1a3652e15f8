#!/usr/bin/env python
"""Compare two sets of results (``results/*.json``): every claim whose verdict flipped or whose recorded values moved,
each move next to the claim's own uncertainty where the claim records one. Used after a re-run that changed random
streams, to state which claims moved and by how much.

    python tools/compare_results.py OLD_DIR NEW_DIR          # two directories of results/*.json
    python tools/compare_results.py --rev HEAD~3 results      # OLD from a git revision of results/

Values are compared leaf by leaf (nested dicts and lists flattened to paths ``key/key``). A leaf whose path names a
spread (``s.e.``, ``se``, ``std``, ``sd``, ``stderr``) is reported as the claim's uncertainty, not as a moved value.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPREAD = re.compile(r"(^|[^a-z])(s\.e\.|se|std|sd|stderr)([^a-z]|$)", re.I)


def flatten(value, prefix: str = "") -> dict[str, object]:
    """Nested dicts/lists → {path with / between keys: leaf}."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in flatten(item, f"{prefix}{key}/").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in flatten(item, f"{prefix}{i}/").items()}
    return {prefix[:-1] or "value": value}


def _number(value) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def compare_claims(old: dict, new: dict) -> list[dict]:
    """Differences between two claims with the same id: ``{"path", "old", "new", "relative"}`` per moved leaf, the
    verdict first when it flipped; spreads recorded by the new claim are attached as ``"spreads"``."""
    changes = []
    if old.get("verdict") != new.get("verdict"):
        changes.append({"path": "verdict", "old": old.get("verdict"), "new": new.get("verdict"), "relative": None})
    before, after = flatten(old.get("ours")), flatten(new.get("ours"))
    spreads = {k: v for k, v in after.items() if SPREAD.search(k) and _number(v) is not None}
    for path in sorted(set(before) | set(after)):
        a, b = before.get(path), after.get(path)
        if a == b or SPREAD.search(path):
            continue
        x, y = _number(a), _number(b)
        relative = abs(y - x) / abs(x) if x is not None and y is not None and x != 0 else None
        if x is not None and y is not None and math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-300):
            continue
        changes.append({"path": path, "old": a, "new": b, "relative": relative})
    if changes:
        changes[0]["spreads"] = spreads
    return changes


sys.path.insert(0, str(ROOT / "tools"))
from make_report import SIDE_FILES as NOT_RESULTS  # noqa: E402  (the files beside paper results that hold no claims)


def load_dir(directory: Path) -> dict[str, dict]:
    """{notebook: {claim id: claim}} from a directory of results JSON."""
    paths = sorted(p for p in directory.glob("*.json") if p.name not in NOT_RESULTS)
    return {p.stem: {c["id"]: c for c in json.loads(p.read_text())["claims"]} for p in paths}


def load_rev(rev: str, directory: str) -> dict[str, dict]:
    """The same, from ``directory`` at git revision ``rev``."""
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", rev, f"{directory}/"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    out = {}
    for name in (n for n in names if n.endswith(".json") and Path(n).name not in NOT_RESULTS):
        text = subprocess.run(["git", "show", f"{rev}:{name}"], cwd=ROOT, check=True, capture_output=True, text=True)
        out[Path(name).stem] = {c["id"]: c for c in json.loads(text.stdout)["claims"]}
    return out


def report(old: dict[str, dict], new: dict[str, dict]) -> str:
    """Markdown: per notebook, claims added, removed, flipped and moved."""
    lines = []
    for notebook in sorted(set(old) | set(new)):
        a, b = old.get(notebook, {}), new.get(notebook, {})
        section = [f"- added: `{i}`" for i in sorted(set(b) - set(a))]
        section += [f"- removed: `{i}`" for i in sorted(set(a) - set(b))]
        for claim_id in (i for i in b if i in a):
            for change in compare_claims(a[claim_id], b[claim_id]):
                rel = "" if change["relative"] is None else f" ({100 * change['relative']:.3g} %)"
                spread = change.get("spreads")
                spread = f"; recorded spreads {spread}" if spread else ""
                section.append(f"- `{claim_id}` {change['path']}: {change['old']} → {change['new']}{rel}{spread}")
        if section:
            lines += [f"### {notebook}", *section, ""]
    return "\n".join(lines) if lines else "no claim moved\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", nargs="?", help="directory of the old results (omit with --rev)")
    parser.add_argument("new", help="directory of the new results")
    parser.add_argument("--rev", help="git revision whose results/ are the old results")
    args = parser.parse_args(argv)
    if (args.rev is None) == (args.old is None):
        parser.error("give either OLD_DIR or --rev REV")
    old = load_rev(args.rev, "results") if args.rev else load_dir(Path(args.old))
    sys.stdout.write(report(old, load_dir(Path(args.new))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
