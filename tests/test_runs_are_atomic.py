"""Nothing committed is lost: a notebook run that fails or is interrupted leaves the published results, figures and
executed notebooks byte-identical (its output stays in a staging directory), every results/figure write is atomic,
the runner checks its arguments before running anything, and the book refuses runs that did not complete.

The notebooks here are tiny fakes (a Recorder, one figure, no JAX work); destinations and staging live in tmp_path.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from rflib._atomic import write_atomically
from rflib.experiments import allocator
from tools import build_book as book
from tools import run_notebooks as runner

ROOT = Path(__file__).resolve().parent.parent
HEADER = (ROOT / "notebooks" / "00_random_features_primer.py").read_text().split("\n\n")[0]  # jupytext header


def fake_notebook(path: Path, *cells: str) -> Path:
    """A percent-format notebook that records claim c1 and saves figure fake_fig, then runs ``cells``."""
    start = (
        "# %%\nimport matplotlib.pyplot as plt\nfrom rflib.notebook import plotting\n"
        "from rflib.notebook.results import Recorder\n"
        f"rec = Recorder({path.stem!r}, {{'scale': scale, 'seed': seed}})\n"
        "rec.record('c1', 'a fresh claim', ours=1, holds=True, criterion='ours = 1')\n"
        "plt.plot([0, 1], [0, 1])\nplotting.savefig('fake_fig', formats=('png',))"
    )
    parameters = '# %% tags=["parameters"]\nscale = "standard"\nseed = 0'
    path.write_text("\n\n".join([HEADER, parameters, start, *cells]) + "\n")
    return path


def committed(root: Path, name: str) -> dict[str, Path]:
    """Destination directories under ``root`` holding a complete earlier run of ``name`` (with a stale claim)."""
    dirs = runner.output_dirs("standard", root)
    for path in dirs.values():
        path.mkdir(parents=True)
    stale = {"id": "stale_claim", "claim": "from the committed run", "paper": None, "ours": 0, "verdict": "fails"}
    doc = {"notebook": name, "parameters": {}, "complete": True, "claims": [stale]}
    (dirs["results"] / f"{name}.json").write_text(json.dumps(doc, indent=2) + "\n")
    (dirs["figures"] / "fake_fig.png").write_bytes(b"committed figure")
    (dirs["executed"] / f"{name}.ipynb").write_text("committed executed notebook")
    return dirs


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the destination directories under ``root`` (the runner's timings file aside), with its bytes."""
    files = sorted(p for kind in runner.KINDS for p in (root / kind).rglob("*") if p.is_file())
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


def test_a_failing_run_promotes_nothing_and_reports_no_claims(tmp_path, capsys):
    source = fake_notebook(tmp_path / "98_fails.py", '# %%\nraise RuntimeError("midway")', "# %%\nrec.finish()")
    out, staging = tmp_path / "out", tmp_path / "staging"
    committed(out, source.stem)
    before = snapshot(out)
    assert runner.main(["--scale", "standard", "--out", str(out), "--staging", str(staging), str(source)]) == 1
    printed = capsys.readouterr().out
    assert snapshot(out) == before
    partial = staging / "standard" / source.stem
    assert f"partial output in {partial}" in printed and "RuntimeError: midway" in printed
    assert json.loads((partial / "results" / f"{source.stem}.json").read_text())["complete"] is False
    assert (partial / "figures" / "fake_fig.png").exists()
    assert "stale_claim" not in printed and "claims: -" in printed


def test_a_completed_run_is_promoted_and_marked_complete(tmp_path):
    source = fake_notebook(tmp_path / "97_completes.py", "# %%\nrec.finish()")
    dirs, staging = committed(tmp_path / "out", source.stem), tmp_path / "staging"
    report = runner.run_notebook(source, "standard", seed=5, dirs=dirs, staging=staging)
    assert report["ok"] and report["staging"] is None and not staging.exists(), report
    assert [c["id"] for c in report["claims"]] == ["c1"]
    doc = json.loads((dirs["results"] / f"{source.stem}.json").read_text())
    assert doc["complete"] and [c["id"] for c in doc["claims"]] == ["c1"]
    assert (dirs["figures"] / "fake_fig.png").read_bytes().startswith(b"\x89PNG")
    metadata = nbformat.read(dirs["executed"] / f"{source.stem}.ipynb", as_version=4).metadata
    assert metadata["rflib"] == {"complete": True, "scale": "standard", "seed": 5}
    assert not [p for p in (tmp_path / "out").rglob(".*")], "temporary files left behind"


def test_the_kernel_inherits_the_callers_environment_beside_the_runners_own_variables(tmp_path, monkeypatch):
    """A variable the caller sets (the tests' RFLIB_CHECK_FIGURES, a user's XLA_FLAGS) reaches the kernel with PATH
    and HOME; JAX_ENABLE_X64 does not (a notebook chooses its precision); XLA_FLAGS gains deterministic GPU kernels.
    Until 2026-11-26 the runner computed the kernel's environment after clearing its own, so kernels saw only
    FIG_DIR, RESULTS_DIR and the runner's others."""
    monkeypatch.setenv("RFLIB_TEST_PROBE", "kept")
    monkeypatch.setenv("JAX_ENABLE_X64", "1")
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
    probe = (
        "# %%\nimport os\nnames = ('RFLIB_TEST_PROBE', 'PATH', 'HOME', 'JAX_ENABLE_X64', 'FIG_DIR', 'XLA_FLAGS')\n"
        "rec.record('env', 'the kernel environment', ours={k: os.environ.get(k) for k in names}, holds=None)"
    )
    source = fake_notebook(tmp_path / "96_environment.py", probe, "# %%\nrec.finish()")
    dirs, staging = committed(tmp_path / "out", source.stem), tmp_path / "staging"
    caller_before = dict(os.environ)
    report = runner.run_notebook(source, "standard", dirs=dirs, staging=staging)
    assert report["ok"], report["error"]
    seen = {c["id"]: c for c in report["claims"]}["env"]["ours"]
    assert seen["RFLIB_TEST_PROBE"] == "kept" and seen["PATH"] == os.environ["PATH"] and seen["HOME"]
    assert seen["JAX_ENABLE_X64"] is None and seen["FIG_DIR"].startswith(str(staging))
    assert seen["XLA_FLAGS"] == "--xla_force_host_platform_device_count=1 --xla_gpu_deterministic_ops=true"
    assert dict(os.environ) == caller_before, "the runner must restore the caller's environment"


def test_a_run_without_finish_is_not_complete(tmp_path):
    results = tmp_path / "nb.json"
    assert "no results file" in runner.completion_error(results)
    results.write_text('{"complete": false')
    assert "unreadable" in runner.completion_error(results)
    results.write_text('{"complete": false}')
    assert "rec.finish()" in runner.completion_error(results)
    results.write_text('{"complete": true}')
    assert runner.completion_error(results) is None


@pytest.mark.timeout(120)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_promotes_nothing(tmp_path, signum):
    source = fake_notebook(tmp_path / "96_sleeps.py", "# %%\nimport time\ntime.sleep(60)", "# %%\nrec.finish()")
    out, staging = tmp_path / "out", tmp_path / "staging"
    committed(out, source.stem)
    before = snapshot(out)
    command = [sys.executable, str(ROOT / "tools" / "run_notebooks.py"), "--out", str(out), "--staging", str(staging)]
    # A shell that starts jobs in the background (CI runners may) sets SIGINT to "ignore", which children inherit;
    # restore the default so that the runner sees Ctrl-C as a user at a terminal would send it.
    proc = subprocess.Popen(
        [*command, str(source)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    partial = staging / "standard" / source.stem
    deadline = time.monotonic() + 60
    while not (partial / "figures" / "fake_fig.png").exists():  # the claim, then the figure, are written
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, (stdout, stderr)
    assert f"partial output in {partial}" in stderr and signum.name in stderr
    assert snapshot(out) == before
    assert json.loads((partial / "results" / f"{source.stem}.json").read_text())["claims"][0]["id"] == "c1"


WRITER = """
import sys
from rflib.notebook.results import Recorder

for i in range(20):
    rec = Recorder("shared", {"writer": sys.argv[1], "i": i})
    for j in range(4):
        rec.record(f"c{j}", "a claim " * 500, ours=list(range(500)), holds=True, criterion="c")
"""


@pytest.mark.timeout(120)
def test_concurrent_writers_never_leave_a_torn_results_file(tmp_path):
    env = dict(os.environ, RESULTS_DIR=str(tmp_path))
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(k)], env=env) for k in range(2)]
    shared, reads, torn = tmp_path / "shared.json", 0, []
    while any(w.poll() is None for w in writers):
        if not shared.exists():
            time.sleep(0.01)
            continue
        reads += 1
        try:
            json.loads(shared.read_text())
        except json.JSONDecodeError as exc:
            torn.append(str(exc))
    assert [w.returncode for w in writers] == [0, 0]
    assert reads > 50 and not torn, f"{len(torn)} of {reads} reads saw a torn file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.json"], "temporary files left behind"


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "fig.png"
    path.write_bytes(b"old")

    def half_written(temporary):
        temporary.write_bytes(b"ne")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, half_written)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["fig.png"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed=-1"], "seed must be in [0, 2**32)"),
        ([f"--seed={2**32}"], "seed must be in [0, 2**32)"),
        (["--seed=one"], "seed must be an integer"),
        (["--scale=huge"], "invalid choice"),
        (["{tmp}/missing.py"], "no such file"),
        (["{tmp}/notes.txt"], "not a notebook source"),
        (["{tmp}/plain.py"], "not a percent-format notebook"),
        (["--machine= "], "machine must be 1 to 120 characters, got 0"),
        (["--machine=" + "x" * 121], "machine must be 1 to 120 characters, got 121"),
        (["--machine=GPU\nrow"], "without '|' or control characters"),
        (["--machine=one | two"], "without '|' or control characters"),
    ],
)
def test_bad_arguments_exit_2_before_anything_runs(tmp_path, capsys, args, message):
    good = fake_notebook(tmp_path / "95_never_runs.py", "# %%\nrec.finish()")
    (tmp_path / "notes.txt").write_text("# %%\n")
    (tmp_path / "plain.py").write_text("print('not a notebook')\n")
    out, staging = tmp_path / "out", tmp_path / "staging"
    argv = ["--out", str(out), "--staging", str(staging), str(good), *(a.format(tmp=tmp_path) for a in args)]
    with pytest.raises(SystemExit) as exit_info:
        runner.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists() and not staging.exists()


def test_the_book_refuses_runs_that_did_not_complete(tmp_path):
    complete, interrupted = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    complete.metadata["rflib"] = {"complete": True, "scale": "standard", "seed": 0}
    nbformat.write(complete, tmp_path / "00_whole.ipynb")
    nbformat.write(interrupted, tmp_path / "01_cut_short.ipynb")
    names = ["00_whole", "01_cut_short", "02_not_run"]
    assert book.incomplete_runs(tmp_path, names) == ["01_cut_short"]
    with pytest.raises(SystemExit, match="did not complete .*: 01_cut_short\\."):
        book.require_complete(tmp_path, names)
    book.require_complete(tmp_path, ["00_whole", "02_not_run"])


def test_paper_scale_runs_land_beside_the_standard_results_never_over_them():
    standard, paper = runner.output_dirs("standard"), runner.output_dirs("paper")
    assert paper["results"] == standard["results"] / "paper" and paper["figures"] == standard["figures"] / "paper"
    assert paper["executed"] != standard["executed"]
    assert runner.output_dirs("paper", Path("/x")) == {kind: Path("/x") / kind for kind in runner.KINDS}


def test_wall_times_are_merged_and_paper_scale_ones_sit_beside_its_results(tmp_path):
    assert runner.timings_path("paper") == runner.output_dirs("paper")["results"] / "timings.json"
    assert runner.timings_path("standard", tmp_path) == tmp_path / "timings-standard.json"
    path = tmp_path / "timings.json"
    runner.record_timings(path, {"03_b": 12.34})
    runner.record_timings(path, {"01_a": 5.0})
    runner.record_timings(path, {"03_b": 7.06})
    runner.record_timings(path, {})  # nothing completed: the file stays as it was
    assert json.loads(path.read_text()) == {"01_a": 5.0, "03_b": 7.1}
    assert list(json.loads(path.read_text())) == ["01_a", "03_b"]
    assert runner.speed_path(path) == tmp_path / "matmul-gflops.json"
    assert runner.speed_path(runner.timings_path("quick", tmp_path)) == tmp_path / "matmul-gflops-quick.json"


def test_a_run_made_elsewhere_names_its_machine_instead_of_the_cpus_speed_until_a_cpu_run_replaces_it(tmp_path):
    source = fake_notebook(tmp_path / "94_machine.py", "# %%\nrec.finish()")
    out, staging = tmp_path / "out", tmp_path / "staging"
    out.mkdir()
    timings = runner.timings_path("standard", out)
    speeds, machines = runner.speed_path(timings), runner.machine_path(timings)
    assert machines == out / "machines-standard.json"
    assert runner.machine_path(runner.timings_path("paper")).name == "machines.json"  # beside the paper results
    assert runner.machine_argument(" " + "x" * 120 + " ") == "x" * 120
    speeds.write_text('{"00_other": 150.0, "94_machine": 160.0}')
    argv = ["--scale", "standard", "--out", str(out), "--staging", str(staging), str(source)]
    assert runner.main([*argv, "--machine", "one GPU"]) == 0
    assert json.loads(machines.read_text()) == {"94_machine": "one GPU"}
    assert json.loads(speeds.read_text()) == {"00_other": 150.0}  # the CPU's speed does not describe that run
    assert runner.main(argv) == 0  # a later run on this CPU: its speed again, the machine's name gone
    assert json.loads(machines.read_text()) == {}
    assert set(json.loads(speeds.read_text())) == {"00_other", "94_machine"}
    assert set(json.loads(timings.read_text())) == {"94_machine"}


def test_records_beside_the_wall_times_merge_and_drop_entries(tmp_path):
    path = tmp_path / "machines.json"
    runner.merge_record(path, {}, remove=["a"])  # nothing to change: no file written
    assert not path.exists()
    runner.merge_record(path, {"b": "gpu", "a": "tpu"})
    runner.merge_record(path, {"c": "cpu"}, remove=["a", "missing"])
    assert path.read_text() == '{\n  "b": "gpu",\n  "c": "cpu"\n}\n'


def test_the_machine_speed_beside_each_wall_time_is_a_plausible_matmul_rate():
    gflops = runner.matmul_gflops(n=256, repeats=2)
    assert 0.1 < gflops < 1e6  # GFLOP/s of 2 n³ flops: any real CPU or accelerator
    line = runner.summary_line({"name": "03_b", "seconds": 1.0, "ok": True, "claims": [], "matmul_gflops": 142.6})
    assert "(machine 143 GFLOP/s)" in line


def test_deterministic_gpu_kernels_are_added_once_and_a_callers_choice_is_kept():
    assert allocator.deterministic_xla_flags("") == "--xla_gpu_deterministic_ops=true"
    assert allocator.deterministic_xla_flags("--a=1") == "--a=1 --xla_gpu_deterministic_ops=true"
    for chosen in ("--xla_gpu_deterministic_ops=false", "--a=1 --xla_gpu_deterministic_ops=true"):
        assert allocator.deterministic_xla_flags(chosen) == chosen


def test_each_completed_run_is_recorded_before_the_next_notebook_starts(tmp_path):
    """A later notebook of the same run (notebook 11 under `make`) sees the earlier ones' wall times and speeds, and a
    run cut short later keeps them."""
    out, staging = tmp_path / "out", tmp_path / "staging"
    out.mkdir()
    timings = runner.timings_path("standard", out)
    first = fake_notebook(tmp_path / "93_first.py", "# %%\nrec.finish()")
    check = (
        "# %%\nimport json\n"
        f"assert '93_first' in json.load(open({str(timings)!r}))\n"
        f"assert '93_first' in json.load(open({str(runner.speed_path(timings))!r}))\nrec.finish()"
    )
    second = fake_notebook(tmp_path / "94_second.py", check)
    argv = ["--scale", "standard", "--out", str(out), "--staging", str(staging), str(first), str(second)]
    assert runner.main(argv) == 0
    assert set(json.loads(timings.read_text())) == {"93_first", "94_second"}
