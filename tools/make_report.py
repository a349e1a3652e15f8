#!/usr/bin/env python
"""Aggregate ``results/*.json`` into ``REPRODUCTION.md``: per paper, every claim with the paper's value, ours, the
verdict and a link to the notebook section that checks it, and the paper-scale run's value and verdict beside them
where ``results/paper/`` has one (with its wall time from ``results/paper/timings.json``). The engine behind
``make report``.

    python tools/make_report.py              # write REPRODUCTION.md
    python tools/make_report.py --check      # exit 1 if REPRODUCTION.md is stale with respect to results/

The output depends on the results files and notebook sources only (no dates), so regenerating it from the same
results gives the same bytes; ``tests/test_report.py`` fails when the committed file is stale.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from rflib.notebook import coverage
from rflib.notebook.results import ON_THE_LINE, VERDICTS, cell, decided_at, meets_expectation

ROOT = Path(__file__).resolve().parent.parent
TIMINGS = "timings.json"  # {notebook: wall seconds} beside the paper-scale results (tools/run_notebooks.py)
SPEEDS = "matmul-gflops.json"  # {notebook: the machine's matmul GFLOP/s when that run started}, beside TIMINGS
MACHINES = "machines.json"  # {notebook: machine of a run made elsewhere (run_notebooks.py --machine)}, beside TIMINGS
SIDE_FILES = (TIMINGS, SPEEDS, MACHINES)  # the files beside the paper-scale results that hold no claims

# (title, authors, notebook prefixes): the papers in the order of the README; the book's landing page and table of
# contents use the same grouping.
PAPERS = (
    ("Background: random features of the softmax kernel", "Performer (FAVOR+) and HRF §2", ("00",)),
    ("Hybrid Random Features", "Choromanski et al., ICLR 2022", ("01", "02", "03")),
    ("FAVOR#: sharp attention kernel approximations", "Likhosherstov et al.", ("04", "05", "06")),
    ("KAMA-NNs: low-dimensional rotation based neural networks", "Choromanski et al., AISTATS 2019", ("07", "08")),
    ("Why softmax attention outperforms linear attention", "Deng, Song, Yuan, Zhou", ("09", "10")),
    ("Performance", "measured speed and scaling of rflib; all four papers' cost claims", ("11",)),
)
HEADING = re.compile(r"^# (#{2,3}) (.+)$")
FSTRING = re.compile(r'\bf"([^"]*)"')


def section_link(notebook: str, claim_id: str, root: Path = ROOT) -> str:
    """A Markdown link to the notebook section (its nearest ``## `` heading above the claim's id), or the file."""
    source = root / "notebooks" / f"{notebook}.py"
    rel = f"notebooks/{notebook}.py"
    if not source.exists():
        return notebook
    lines = source.read_text().splitlines()
    hit = next((i for i, line in enumerate(lines) if f'"{claim_id}"' in line), None)
    if hit is None:  # an id built by an f-string: match its template, {…} standing for anything
        for i, line in enumerate(lines):
            for template in FSTRING.findall(line):
                parts = re.split(r"\{[^}]*\}", template)
                static = sum(len(part) for part in parts)
                if len(parts) > 1 and static >= 4 and re.fullmatch(".+".join(map(re.escape, parts)), claim_id):
                    hit = i
                    break
            if hit is not None:
                break
    if hit is None:
        return f"[{notebook}]({rel})"
    for i in range(hit, -1, -1):
        match = HEADING.match(lines[i])
        if match:
            title = match.group(2).split("·")[-1].strip()
            return f"[{notebook[:2]} § {title}]({rel}#L{i + 1})"
    return f"[{notebook}]({rel}#L{hit + 1})"


def load_results(results_dir: Path) -> dict[str, dict]:
    """{notebook stem: its results document} for every ``*.json`` in ``results_dir`` but the side files (SIDE_FILES)."""
    paths = sorted(p for p in results_dir.glob("*.json") if p.name not in SIDE_FILES)
    return {p.stem: json.loads(p.read_text()) for p in paths}


def load_timings(results_dir: Path, name: str = TIMINGS) -> dict[str, float]:
    """{notebook stem: wall seconds of its last completed run} from ``results_dir/timings.json`` ({} if absent); with
    ``name=SPEEDS``, the machine's matmul GFLOP/s at the start of that run (recorded since 2026-11-27); with
    ``name=MACHINES``, the machine of each run made elsewhere than the 2-core CPU."""
    path = results_dir / name
    return json.loads(path.read_text()) if path.exists() else {}


def _minutes(seconds: float | None, gflops: float | None = None, machine: str | None = None) -> str:
    where = f" on {_text(machine)}" if machine else "" if gflops is None else f" at {gflops:.0f} GFLOP/s"
    return "—" if seconds is None else f"{seconds / 60:.1f} min{where}"


def paper_scale_section(
    docs: dict[str, dict],
    paper_docs: dict[str, dict],
    timings: dict[str, float],
    speeds: dict[str, float] | None = None,
    machines: dict[str, str] | None = None,
) -> list[str]:
    """The notebooks run at paper scale: wall time, verdict counts, and every verdict that differs from standard."""
    out = [
        "## Paper scale",
        "",
        "`make paper` runs the notebooks at the paper's full settings into `results/paper/`, beside the standard",
        "results (never over them). The notebooks below were run in full at that scale (wall time on the 2-core",
        "machine this repository is developed on, with its dense float32 matmul speed when the run started where it",
        "was recorded: about 310–360 GFLOP/s usually, 90–175 in its slow spells; or on the machine named, for runs",
        "made elsewhere with `tools/run_notebooks.py --machine`); their claims appear beside the",
        "standard-scale ones in each",
        "notebook's table. A notebook not listed was not run at paper scale: the README's Notebooks table gives its",
        "projected cost and the machine it needs.",
        "",
    ]
    if not paper_docs:
        return out + ["No notebook has been run at paper scale yet."]
    out += ["| notebook | wall time | claims at paper scale | verdicts that differ from standard scale |"]
    out += ["|---|---|---|---|"]
    for name, doc in paper_docs.items():
        standard = {c["id"]: c["verdict"] for c in docs.get(name, {}).get("claims", [])}
        changed = [
            f"{c['id']}: {standard[c['id']]} → {c['verdict']}"
            for c in doc["claims"]
            if c["id"] in standard and standard[c["id"]] != c["verdict"]
        ]
        complete = "" if doc.get("complete", False) else " (**incomplete run**)"
        wall_time = _minutes(timings.get(name), (speeds or {}).get(name), (machines or {}).get(name))
        out.append(
            f"| [{name}](notebooks/{name}.py){complete} | {wall_time} | {_counts(doc['claims'])} | "
            f"{_text('; '.join(changed) or 'none')} |"
        )
    return out


def _counts(claims) -> str:
    verdicts = [c["verdict"] for c in claims]
    return " · ".join(f"{verdicts.count(v)} {v}" for v in VERDICTS if v in verdicts) or "no claims"


def _text(value) -> str:
    """A value as one table cell (pipes escaped, newlines folded: :func:`rflib.notebook.results.cell`)."""
    return cell(value)


def collect_coverage(docs: dict[str, dict]) -> dict[str, dict[str, tuple[str, dict]]]:
    """{paper: {item: (notebook, its coverage entry)}} from every results document's ``coverage`` list."""
    found: dict[str, dict[str, tuple[str, dict]]] = {paper: {} for paper in coverage.PAPERS}
    for name, doc in docs.items():
        for entry in doc.get("coverage", []):
            paper, item = entry["item"].split(":", 1)
            found.setdefault(paper, {})[item] = (name, entry)
    return found


def coverage_section(docs: dict[str, dict]) -> list[str]:
    """The report's opening: per paper, how many numbered items have each status, then every item."""
    found = collect_coverage(docs)
    statuses = [s for s in coverage.STATUSES if any(e["status"] == s for f in found.values() for _, e in f.values())]
    out = [
        "## Coverage of the papers",
        "",
        "Every numbered figure, table, theorem, lemma, definition and algorithm of the four papers (main text and",
        "appendices), with how this repository covers it, as the notebooks record it (statuses: "
        "`rflib.notebook.coverage.STATUSES`).",
        "",
        "| paper | items | " + " | ".join(statuses) + " |",
        "|---|---|" + "---|" * len(statuses),
    ]
    for paper, title in coverage.PAPERS.items():
        counts = [sum(e["status"] == s for _, e in found[paper].values()) for s in statuses]
        out.append(f"| {title} | {len(coverage.PAPER_ITEMS[paper])} | " + " | ".join(map(str, counts)) + " |")
    for paper, title in coverage.PAPERS.items():
        out += ["", f"<details><summary>{title}: every item</summary>", ""]
        out += ["| item | states | status | how | notebook |", "|---|---|---|---|---|"]
        for item, what in coverage.PAPER_ITEMS[paper].items():
            name, entry = found[paper].get(item, (None, None))
            if entry is None:
                out.append(f"| {item} | {_text(what)} | **missing** | — | — |")
                continue
            out.append(
                f"| {item} | {_text(what)} | {entry['status']} | {_text(entry['detail'])} | "
                f"[{name[:2]}](notebooks/{name}.py) |"
            )
        out += ["", "</details>"]
    return out


def _claim_note(c: dict) -> str:
    note = f" — {_text(c['note'])}" if c.get("note") else ""
    if c.get("criterion"):
        note += f" — criterion: {_text(c['criterion'])}"
    if c.get("reduced"):
        note += f" — reduced: {_text(c['reduced'])}"
    if c.get("because"):
        note += f" — documented {c['expected']}: {_text(c['because'])}"
    return note


def _verdict(c: dict, scale: str) -> str:
    """The verdict cell: bold, and marked when the notebook documents the claim as on its threshold (a verdict that
    runs of the same design do not reproduce; ``results.ON_THE_LINE``) or when it departs from the documented
    outcome in a run at ``scale`` that must decide it (``results.decided_at``: the tests refuse that in the
    committed results; a report of other results can show it). A claim meaningful only at a larger scale is not
    marked: its documented outcome is for that scale, and its note says what this run reduced."""
    on_the_line = c.get("expected") in ON_THE_LINE
    departs = "expected" in c and decided_at(c, scale) and not meets_expectation(c)
    return (
        f"**{c['verdict']}**"
        + (" (on its line: runs differ)" if on_the_line else "")
        + (f" (**departs from its documented outcome, {c['expected']}**)" if departs else "")
    )


def _scale(doc: dict) -> str:
    """The scale a results document was run at (its ``parameters``; standard if it does not say)."""
    return doc.get("parameters", {}).get("scale", "standard")


def claims_table(name: str, doc: dict, paper_doc: dict | None, root: Path) -> list[str]:
    """One notebook's claims: the paper's value, ours and the verdict, and the paper-scale run's where one exists
    (matched by claim id; a claim only one of the two runs made shows "—" in the other's columns)."""
    if paper_doc is None:
        out = ["| claim | paper | ours | verdict | where |", "|---|---|---|---|---|"]
        for c in doc["claims"]:
            out.append(
                f"| {_text(c['claim'])}{_claim_note(c)} | {_text(c['paper'])} | {_text(c['ours'])} | "
                f"{_verdict(c, _scale(doc))} | {section_link(name, c['id'], root)} |"
            )
        return out
    out = [
        "| claim | paper | ours (standard) | verdict | ours (paper scale) | verdict (paper scale) | where |",
        "|---|---|---|---|---|---|---|",
    ]
    at_paper = {c["id"]: c for c in paper_doc["claims"]}
    standard_ids = {c["id"] for c in doc["claims"]}
    only_paper = [c for c in paper_doc["claims"] if c["id"] not in standard_ids]
    for c in doc["claims"] + only_paper:
        big = at_paper.get(c["id"])
        mine = c if c["id"] in standard_ids else None
        ours = (_text(mine["ours"]), _verdict(mine, _scale(doc))) if mine else ("—", "—")
        theirs = (_text(big["ours"]), _verdict(big, _scale(paper_doc))) if big else ("—", "—")
        out.append(
            f"| {_text(c['claim'])}{_claim_note(c)} | {_text(c['paper'])} | {ours[0]} | {ours[1]} | {theirs[0]} | "
            f"{theirs[1]} | {section_link(name, c['id'], root)} |"
        )
    return out


def render(results_dir: Path = ROOT / "results", root: Path = ROOT, paper_dir: Path | None = None) -> str:
    """The whole of REPRODUCTION.md as a string (paper-scale results from ``paper_dir``, default
    ``results_dir/paper``, shown beside the standard ones where they exist)."""
    docs = load_results(results_dir)
    paper_dir = results_dir / "paper" if paper_dir is None else paper_dir
    paper_docs = load_results(paper_dir) if paper_dir.is_dir() else {}
    out = [
        "# Reproduction report",
        "",
        "Generated by `make report` from `results/*.json` (written by the notebooks); do not edit by hand.",
        "Verdicts: **holds** (reproduced), **fails** (the claim as printed does not hold, or a target is missed),",
        "**inconclusive** (a statistical claim whose estimate ± 2 standard errors contains the threshold: the data",
        "cannot decide at this scale), **scaled** (the same criterion holds at a scale below the paper's), **info** (a",
        "measurement with no verdict). Every verdict is computed from the measurement by the criterion shown beside",
        "the claim, fixed in the notebook before the value is seen; a claim that is false as printed, or that our",
        "data cannot decide, says so as its documented outcome, and the tests fail if a verdict departs from it",
        "(quick-meaningful claims in every quick run, the others in the committed standard- and paper-scale",
        "results). Values",
        "are at the scale named per",
        'notebook; each notebook\'s closing section, "What was scaled (down), and why", gives the reasons for every',
        "departure from the paper, and [ERRATA.md](ERRATA.md) lists the printed errors the reproduction found, each",
        "with the notebook section or test that demonstrates it.",
        "",
        *coverage_section(docs),
        "",
        "## Claims",
        "",
        "| paper | notebooks | claims |",
        "|---|---|---|",
    ]
    groups = []
    for title, authors, prefixes in PAPERS:
        names = [n for n in docs if n[:2] in prefixes]
        claims = [c for n in names for c in docs[n]["claims"]]
        groups.append((f"{title} ({authors})", names))
        out.append(f"| {title} | {', '.join(n[:2] for n in names) or '—'} | {_counts(claims)} |")
    undecided = [(n, c) for n in docs for c in docs[n]["claims"] if c["verdict"] == "inconclusive"]
    if undecided:
        out += ["", "**Inconclusive claims** (the data cannot decide at the scale run):", ""]
        out += [f"- {_text(c['claim'])} ({section_link(n, c['id'], root)})" for n, c in undecided]
    side = {"timings": TIMINGS, "speeds": SPEEDS, "machines": MACHINES}
    side = {argument: load_timings(paper_dir, name) for argument, name in side.items()}
    out += ["", *paper_scale_section(docs, paper_docs, **side)]
    unassigned = [n for n in docs if all(n[:2] not in p for *_, p in PAPERS)]
    if unassigned:
        groups.append(("Other notebooks", unassigned))
    for heading, names in groups:
        out += ["", f"## {heading}"]
        for name in names:
            doc = docs[name]
            scale = doc.get("parameters", {}).get("scale", "?")
            also = f"; paper scale: {_counts(paper_docs[name]['claims'])}" if name in paper_docs else ""
            out += [
                "",
                f"### [{name}](notebooks/{name}.py) — scale: {scale}, {_counts(doc['claims'])}{also}",
                "",
            ]
            if not doc.get("complete", False):
                out += [
                    "**Incomplete run**: the notebook stopped before its last cell (it failed or was interrupted), so",
                    "the claims below are only those it reached. Re-run it before reading them as its results.",
                    "",
                ]
            out += claims_table(name, doc, paper_docs.get(name), root)
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if REPRODUCTION.md is stale")
    parser.add_argument("--output", type=Path, default=ROOT / "REPRODUCTION.md")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(f"{args.output.name} is stale: run `make report`", file=sys.stderr)
            return 1
        print(f"{args.output.name} is up to date")
        return 0
    args.output.write_text(text)
    print(f"wrote {args.output} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
