"""Solvers in other processes (CBC) and HiGHS across fork: nothing outlives its owner, nothing
hangs, no answer is lost (issue 28).

* SIGTERM or SIGKILL of the Python process that runs CBC: no CBC process of it survives, and its
  files are removed (SIGTERM) or swept by the next solve (SIGKILL).
* Ctrl-C while CBC holds an incumbent but reads no signal (its root cuts, a long heuristic): the
  incumbent comes back with status ``interrupted``, re-verified against the model.
* A HiGHS solve in a child forked after a HiGHS solve in its parent (a ``fork`` pool) returns.

Every wait is a bounded number of polls or a generous hang guard, never an assertion on seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest
from conftest import CBC, hard_knapsack

from odtkit.solvers import _cmd, solve

TESTS = str(Path(__file__).resolve().parent)
needs_cbc_posix = pytest.mark.skipif(
    CBC is None or os.name != "posix", reason="needs a CBC binary and POSIX signals"
)

#: Solve a multi-dimensional knapsack that CBC does not finish within its time limit; print
#: ``CBC <pid> <folder>`` once CBC runs. ``prelude``: the program's own set-up.
CBC_CHILD = """
import os, subprocess, sys
sys.path.insert(0, {tests!r})
from conftest import hard_knapsack
from odtkit.solvers import solve

_Popen = subprocess.Popen
def _popen(args, *rest, **kwargs):
    child = _Popen(args, *rest, **kwargs)
    if "-solve" in args:
        print("CBC", child.pid, os.path.dirname(args[1]), flush=True)
    return child
subprocess.Popen = _popen
{prelude}
solve(hard_knapsack(400, 40), backend="pulp", solver="cbc", time_limit=600)
print("RETURNED", flush=True)
"""


def _running(pid: int, marker: str) -> bool:
    """Whether process ``pid`` runs (not a zombie) with ``marker`` on its command line."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmdline = fh.read().decode(errors="replace")
    except OSError:
        return False
    return state not in ("Z", "X") and marker in cmdline


def _polled(predicate, tries: int = 500) -> bool:
    """Whether ``predicate()`` holds within ``tries`` polls (a bounded wait, not a timing)."""
    pause = threading.Event()
    for _ in range(tries):
        if predicate():
            return True
        pause.wait(0.02)
    return False


#: the program's own SIGTERM handler ends it by SystemExit: the solve's clean-up runs on the way
OWN_HANDLER = "import signal; signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))"


@needs_cbc_posix
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL", "own-handler"])
def test_cbc_dies_with_its_python_process_and_leaves_no_files(how, tmp_path, monkeypatch):
    if how == "SIGKILL" and not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux only")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CBC_CHILD.format(tests=TESTS, prelude=OWN_HANDLER if how == "own-handler" else ""),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    cbc_pid = None
    try:
        line = child.stdout.readline()
        assert line.startswith("CBC "), (line, child.stderr.read())
        _, pid, folder = line.split()
        cbc_pid = int(pid)
        assert Path(folder).parent == tmp and Path(folder).is_dir()
        assert _polled(lambda: _running(cbc_pid, folder))
        sig = signal.SIGKILL if how == "SIGKILL" else signal.SIGTERM
        child.send_signal(sig)
        assert child.wait(timeout=120) == (3 if how == "own-handler" else -sig)
        assert _polled(lambda: not _running(cbc_pid, folder)), "CBC outlived its Python process"
        if how != "SIGKILL":
            assert not Path(folder).exists(), os.listdir(folder)
        else:
            # nobody could clean up: the next solve sweeps the dead process's directory
            assert Path(folder).exists()
            monkeypatch.setattr(tempfile, "tempdir", str(tmp))
            res = solve(hard_knapsack(8, 2), backend="pulp", solver="cbc")
            assert res.status == "optimal"
            assert not Path(folder).exists()
        assert os.listdir(tmp) == []
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if cbc_pid is not None and _running(cbc_pid, str(tmp)):
            os.kill(cbc_pid, signal.SIGKILL)  # the unchanged code's orphan


@pytest.mark.skipif(os.name != "posix", reason="POSIX pids")
def test_sweep_removes_only_directories_of_dead_processes(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(dead.stdout)
    stale = tmp_path / f"{_cmd.PREFIX}{dead_pid}_abc"
    alive = tmp_path / f"{_cmd.PREFIX}{os.getppid()}_def"
    mine = tmp_path / f"{_cmd.PREFIX}{os.getpid()}_ghi"
    other = tmp_path / f"odtkit_cbc_{dead_pid}_jkl"
    for d in (stale, alive, mine, other):
        d.mkdir()
        (d / "m.mps").write_text("x")
    if os.path.isdir(f"/proc/{dead_pid}"):
        pytest.skip("the pid was reused at once")
    assert _cmd.sweep_stale(str(tmp_path)) == [str(stale)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (alive, mine, other)
    )


# --- Ctrl-C while CBC holds an incumbent and reads no signal -----------------------------------

#: CBC behind a wrapper that forwards our SIGINT only ``DELAY`` s later: CBC in its root cuts or
#: a long heuristic, which read no signal for seconds (more than CBC_GRACE).
SLOW_TO_STOP = """#!{python}
import signal, subprocess, sys, time
child = subprocess.Popen([{cbc!r}] + sys.argv[1:])
def forward(*_):
    time.sleep({delay})
    child.send_signal(signal.SIGINT)
signal.signal(signal.SIGINT, forward)
sys.exit(child.wait())
"""


@needs_cbc_posix
def test_ctrl_c_while_cbc_reads_no_signal_keeps_the_incumbent_its_log_showed(tmp_path, monkeypatch):
    from odtkit.solvers import pulp
    from odtkit.solvers.pulp import CBC_GRACE

    # the behaviour, not the constant: CBC writes its incumbent late but within the grace (a
    # long one here, so that a loaded machine cannot push the wrapper's forward past it)
    monkeypatch.setattr(pulp, "CBC_INCUMBENT_GRACE", 60.0)

    wrapper = tmp_path / "slow_cbc"
    wrapper.write_text(SLOW_TO_STOP.format(python=sys.executable, cbc=CBC, delay=4 * CBC_GRACE))
    wrapper.chmod(0o755)
    seen = threading.Event()  # the log has shown an incumbent: interrupt now

    def on_line(line: str) -> None:
        if "Integer solution of" in line:
            seen.set()

    model = hard_knapsack(400, 40)
    res = solve(
        model,
        backend="pulp",
        solver="cbc",
        path=str(wrapper),
        time_limit=60,
        log_callback=on_line,
        should_stop=seen.is_set,
    )
    assert seen.is_set()
    assert res.status == "interrupted", res.log[-2000:]
    assert res.has_solution and res.x is not None
    assert model.is_feasible(res.x)
    assert res.objective == pytest.approx(model.objective_value(res.x), abs=1e-6)
    assert res.lower_bound <= res.objective + 1e-6
    assert res.stats["cbc_killed"] == 0
    assert res.objective <= res.stats["cbc_log_incumbent"] + 1e-6


# --- HiGHS across fork -------------------------------------------------------------------------

FORK_CHILD = """
import multiprocessing as mp, sys
sys.path.insert(0, {tests!r})
from conftest import hard_knapsack
from odtkit.solvers import solve

def job(threads):
    r = solve(hard_knapsack(30, 4), backend="highs", threads=threads)
    return str(r.status), r.objective

if __name__ == "__main__":
    parent = solve(hard_knapsack(30, 4), backend="highs")
    print("PARENT", parent.status, repr(parent.objective), flush=True)
    pool = mp.get_context("fork").Pool(1)
    try:
        # a hang guard only: the deadlock this catches never ends
        out = pool.map_async(job, [None, 2, None]).get(timeout=240)
        print("CHILD", out, flush=True)
    except mp.TimeoutError:
        print("CHILD HUNG", flush=True)
    except Exception as exc:
        print("CHILD ERROR", type(exc).__name__, exc, flush=True)
    finally:
        pool.terminate()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_highs_in_a_forked_child_after_a_solve_in_the_parent_returns_the_optimum(tmp_path):
    script = tmp_path / "fork_child.py"
    script.write_text(textwrap.dedent(FORK_CHILD.format(tests=TESTS)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env
    )
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert "CHILD" in lines, (done.stdout, done.stderr)
    assert not lines["CHILD"].startswith(("HUNG", "ERROR")), lines
    parent_status, parent_objective = lines["PARENT"].split()
    assert parent_status == "optimal"
    results = eval(lines["CHILD"])  # noqa: S307 - our own repr of [(str, float)]
    assert [s for s, _ in results] == ["optimal"] * 3
    assert all(obj == pytest.approx(float(parent_objective)) for _, obj in results)
