"""Settings and output paths that used to pass the checks and fail late (issue 32): each
is one line naming what is wrong, exit status 2, before any work (no game played, no
file written), instead of an allocation traceback or a lost run after minutes.

"Unwritable" must hold for root too (the tests may run as root, who may write anywhere
permissions allow): a path under a file, ``/proc`` (no file can be made there) and
``/sys`` (a read-only kernel file system).
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents import load_agent
from vrhcaby.base.files import check_output_dir, check_output_file
from vrhcaby.cli import main as cli
from vrhcaby.play import pool
from vrhcaby.play import tournament as pairs
from vrhcaby.play.pool import growing_chunks

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "tests" / "configs" / "smoke.toml")


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
    return int(code or 0), out.getvalue(), err.getvalue()


def refused_at_once(argv: list[str], *words: str, seconds: float = 20.0) -> str:
    """`vrhcaby ARGV` ends with exit status 2 and one line on stderr holding `words`,
    within `seconds` (long before the work it would do)."""
    start = time.perf_counter()
    code, _, err = run_cli(argv)
    elapsed = time.perf_counter() - start
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    for word in words:
        assert word in lines[0], err
    assert elapsed < seconds, f"{elapsed:.1f} s before the error"
    return lines[0]


# --- settings ---------------------------------------------------------------------------

#: (--set, words of the error). Each would have failed only after games: an allocation
#: of the network or of the evaluation's games, or the first checkpoint's write.
TRAIN_SETTINGS = [
    ("net.hidden=[100000000]", "weights"),
    ("net.hidden=[50000, 50000]", f"{199 * 50000 + 50001 * 50000 + 50001 * 5:,} weights"),
    ("sixdice.hidden=[100000000]", "weights"),
    ("eval.games=100000000000", "eval.games must be at most"),
    ("eval.judge_games=100000000000", "eval.judge_games must be at most"),
    ("td.batch_games=100000000", "batch_games must be at most"),
    ("checkpoint_dir=/proc/vrhcaby-ck", "checkpoint_dir"),
    ("runs_dir=/sys/vrhcaby-runs", "runs_dir"),
]


@pytest.mark.parametrize(("setting", "word"), TRAIN_SETTINGS, ids=[s for s, _ in TRAIN_SETTINGS])
def test_a_training_setting_that_would_fail_late_fails_first(tmp_path, setting, word):
    game = ["--set", "game=sixdice"] if setting.startswith("sixdice") else []
    argv = [
        "train",
        "--config",
        SMOKE,
        *game,
        "--set",
        f"checkpoint_dir={tmp_path / 'ck'}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
        "--set",
        setting,
    ]
    refused_at_once(argv, word)
    assert not (tmp_path / "ck").exists() and not (tmp_path / "runs").exists()


def test_the_network_size_limit_counts_weights_as_a_plain_sum():
    """Below the limit by one weight passes, at one more it is refused (the count
    written out: (inputs + 1) * width per layer)."""
    from vrhcaby.nn.net import MAX_WEIGHTS, NetConfig

    inputs = 198
    width = (MAX_WEIGHTS - 6) // (inputs + 1 + 5)  # (198+1)*w + (w+1)*5 <= MAX
    assert (inputs + 1) * width + (width + 1) * 5 <= MAX_WEIGHTS
    NetConfig("tesauro", (width,))
    with pytest.raises(ValueError, match="weights"):
        NetConfig("tesauro", (width + 1,))


def test_label_settings_fail_before_the_teacher_plays(tmp_path):
    base = ["label", "--set", f"out_dir={tmp_path / 'labels'}", "--no-progress"]
    refused_at_once([*base, "--set", "games_per_shard=100000000000"], "games_per_shard")
    refused_at_once(["label", "--set", "out_dir=/proc/vrhcaby-labels", "--no-progress"], "out_dir")
    assert not (tmp_path / "labels").exists()


#: Counts whose per-item results (or processes) would be allocated only once the work
#: runs: each is one line before it starts.
COUNTS = [
    (["tournament", "random", "pubeval", "--games", "100000000000"], "--games"),
    (["dice", "tournament", "random", "greedy", "--games", "100000000000"], "--games"),
    (["rollout", "4HPwATDgc/ABMA", "--trials", "100000000000"], "--trials"),
    (["label", "--set", "shards=100000000000", "--set", "out_dir=/tmp/x"], "shards"),
    (["tournament", "random", "pubeval", "--games", "2", "--jobs", "100000"], "--jobs"),
    (["rollout", "4HPwATDgc/ABMA", "--jobs", "100000"], "--jobs"),
]


@pytest.mark.parametrize(
    ("argv", "word"), COUNTS, ids=[" ".join(a[:2] + a[-2:]) for a, _ in COUNTS]
)
def test_a_count_too_large_to_hold_is_refused_before_the_work(argv, word):
    refused_at_once(argv, word, "at most")


# --- output paths -----------------------------------------------------------------------


@pytest.fixture()
def places(tmp_path) -> dict[str, Path]:
    """A folder, a file, a path under that file, and paths root cannot write."""
    folder = tmp_path / "folder"
    folder.mkdir()
    file = tmp_path / "file.txt"
    file.write_text("mine")
    return {
        "folder": folder,
        "under a file": file / "x.out",
        "in /proc": Path("/proc/vrhcaby-test.out"),
        "in /sys": Path("/sys/vrhcaby-test.out"),
    }


def test_the_output_checks_refuse_what_cannot_be_written(places, tmp_path):
    with pytest.raises(ValueError, match="is a folder, not a file"):
        check_output_file(places["folder"], "--x")
    for name in ("under a file", "in /proc", "in /sys"):
        with pytest.raises(ValueError, match="cannot be written"):
            check_output_file(places[name], "--x")
        with pytest.raises(ValueError, match="cannot be written"):
            check_output_dir(places[name], "--x")
    # What can be written passes, and the checks leave nothing behind.
    check_output_file(tmp_path / "new" / "deeper" / "a.json", "--x")
    check_output_dir(tmp_path / "new2" / "d", "--x")
    check_output_file(places["folder"] / "a.svg", "--x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "folder"]
    assert list(places["folder"].iterdir()) == []


def test_show_svg_to_a_place_it_cannot_write_is_one_line(places):
    refused_at_once(["show", "start", "--svg", str(places["folder"])], "is a folder")
    for name in ("under a file", "in /proc", "in /sys"):
        refused_at_once(["show", "start", "--svg", str(places[name])], "--svg")


def test_netset_out_to_a_place_it_cannot_write_is_one_line(places):
    source = str(ROOT / "checkpoints" / "td-best.pt")
    for name, word in (
        ("folder", "is a folder"),
        ("under a file", "cannot"),
        ("in /proc", "cannot"),
    ):
        argv = ["netset", "--contact", source, "--out", str(places[name]), "--force"]
        refused_at_once(argv, "--out", word)


def test_label_json_to_a_folder_fails_before_the_teacher_plays(places, tmp_path):
    out_dir = f"out_dir={tmp_path / 'labels'}"
    for name in ("folder", "under a file", "in /proc"):
        refused_at_once(
            ["label", "--set", out_dir, "--shards", "1", "--json", str(places[name])], "--json"
        )
    assert not (tmp_path / "labels").exists()


def tournament(out: Path, *more: str) -> list[str]:
    return [
        "tournament",
        "random",
        "pubeval",
        "--games",
        "4",
        "--no-progress",
        "--out",
        str(out),
        *more,
    ]


def test_an_interrupted_tournament_resumes_to_the_games_of_an_uninterrupted_one(tmp_path):
    """The same command on the folder of an interrupted run keeps the games it finished
    and plays the rest: games and results as one uninterrupted run's (the reference).
    The interruption is made by cutting the saved games file at several points (within
    a mirrored pair, a chunk, a pair of agents) and dropping its results."""
    argv = ["tournament", "random?seed=4", "pubeval", "random?seed=9", "--games", "12"]
    argv += ["--seed", "3", "--jobs", "1", "--json", "--no-progress", "--out"]
    code, whole, err = run_cli([*argv, str(tmp_path / "whole")])
    assert code == 0, err
    games = (tmp_path / "whole" / "games.jsonl").read_text().splitlines(keepends=True)
    assert len(games) == 36  # three pairs of six mirrored samples: chunks of 1, 2 and 3
    for cut in (0, 5, 17, 35):
        out = tmp_path / f"cut{cut}"
        out.mkdir()
        (out / "run.json").write_text((tmp_path / "whole" / "run.json").read_text())
        if cut:
            (out / "games.jsonl").write_text("".join(games[:cut]))
        code, resumed, err = run_cli([*argv, str(out)])
        assert code == 0 and f"{cut} games kept" in err, err
        assert json.loads(resumed) == json.loads(whole)
        assert (out / "games.jsonl").read_text() == "".join(games)


def test_tournament_out_whose_result_names_are_folders_fails_before_a_game(tmp_path):
    for name in ("results.json", "games.jsonl", "table.svg", "pair0.mat"):
        out = tmp_path / name.replace(".", "-")
        (out / name).mkdir(parents=True)
        refused_at_once(tournament(out), name, "is a folder")
        assert [p.name for p in out.iterdir()] == [name]
    refused_at_once(tournament(Path("/proc/vrhcaby-tournament")), "cannot be written")


def test_tournament_out_never_overwrites_an_earlier_run_silently(tmp_path):
    out = tmp_path / "run"
    code, _, err = run_cli([*tournament(out), "--seed", "1"])
    assert code == 0, err
    first = (out / "games.jsonl").read_text()
    refused_at_once([*tournament(out), "--seed", "2"], "--force", "other settings")
    assert (out / "games.jsonl").read_text() == first
    (out / "pair7.mat").write_text("an older run's pair")
    code, _, err = run_cli([*tournament(out), "--seed", "2", "--force"])
    assert code == 0, err
    assert (out / "games.jsonl").read_text() != first
    assert not (out / "pair7.mat").exists()  # nothing of the earlier run stays
    seeds = {json.loads(line)["seed"] for line in (out / "games.jsonl").read_text().splitlines()}
    assert seeds == {2}


# --- stops: what was finished is kept, and progress moves at once ----------------------


def test_the_units_of_work_grow_from_one_and_cover_everything_once():
    """Small first units (progress, and something to keep at an early stop), then the
    full size; every item in exactly one unit, in order."""
    for total, size in ((1296, 216), (500, 64), (5, 216), (1, 1), (1000, 3), (0, 8)):
        units = growing_chunks(total, size)
        assert [i for u in units for i in u] == list(range(total))
        planned = [min(2**k, size) for k in range(len(units))]  # doubling, then the size
        assert [len(u) for u in units[:-1]] == planned[:-1]
        assert all(0 < len(u) <= p for u, p in zip(units[-1:], planned[-1:], strict=True))


def _until_cut_short(task: int) -> tuple[str, int]:
    """A task that works until its pool asks for what it finished."""
    deadline = time.monotonic() + 30
    while not pool.stop_requested() and time.monotonic() < deadline:
        time.sleep(0.01)
    return ("cut short" if pool.stop_requested() else "ran out", task)


def test_a_pool_interrupted_gets_the_finished_part_of_the_tasks_in_flight(monkeypatch):
    monkeypatch.setattr(pool, "start_method", lambda: "fork")
    got = []
    previous = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))
    try:
        with pool.WorkerPool(2, _until_cut_short) as workers:
            signal.setitimer(signal.ITIMER_REAL, 1.0)
            with pytest.raises(KeyboardInterrupt):
                got += list(workers.imap_unordered([10, 20, 30]))
            start = time.monotonic()
            got += list(workers.cut_short())
            assert time.monotonic() - start < 5
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert sorted(got) == [("cut short", 10), ("cut short", 20)]


def test_a_chunk_cut_short_returns_its_finished_games_as_they_were(monkeypatch):
    """`play_chunk` asked to stop part way returns the games it finished, each exactly as
    the uninterrupted chunk plays it (the reference: the same chunk played whole)."""
    agents = (load_agent("pubeval"), load_agent("heuristic"))
    settings = pairs.PairSettings(record=True)
    whole = pairs.play_chunk(agents, range(0, 16), 5, settings)
    turns = iter(range(10**6))
    monkeypatch.setattr(pairs, "stop_requested", lambda: next(turns) >= 40)
    cut = pairs.play_chunk(agents, range(0, 16), 5, settings)
    assert 0 < len(cut) < len(whole)
    by_game = {(g.sample, g.copy): g for g in whole}
    for g in cut:
        ref = by_game[(g.sample, g.copy)]
        assert (g.winner, g.points, g.value) == (ref.winner, ref.points, ref.value)
        assert g.record == ref.record


def background(argv: list[str]) -> subprocess.Popen:
    """`vrhcaby ARGV` as a shell's background job (SIGINT ignored until it takes it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "vrhcaby.cli.main", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )


@pytest.mark.slow
def test_a_rollout_stopped_early_keeps_its_first_trials_and_prints_json():
    """The default network's rollout (about a second a trial on a busy machine; its first
    unit of 216 trials took a minute, so a Ctrl-C then kept nothing and --json printed
    nothing): stopped a few seconds in, it keeps what it finished, in valid JSON."""
    proc = background(["rollout", "4HPwATDgc/ABMA", "--trials", "1296", "--jobs", "1", "--json"])
    time.sleep(8)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    result = json.loads(stdout)
    done = result["rollout"]["trials"]
    assert result["rollout"]["interrupted"] and 1 <= done < 1296
    assert f"over the {done} trial" in stderr


@pytest.mark.slow
def test_a_slow_tournament_stopped_early_keeps_games(tmp_path):
    """A 1-ply tournament on two processes (its first chunk of 128 games took two
    minutes, so a stop after 10 s kept none): stopped after 12 s, it keeps games, whole
    mirrored pairs, written to --out."""
    out = tmp_path / "out"
    argv = ["tournament", "td?plies=1", "pubeval", "--games", "1000", "--jobs", "2"]
    proc = background([*argv, "--json", "--no-progress", "--out", str(out)])
    time.sleep(12)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    (pair,) = json.loads(stdout)["pairs"]
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert pair["interrupted"] and pair["games"] == len(games) > 0
    pairs = sorted((g["sample"], g["copy"]) for g in games)
    assert pairs == sorted({(s, c) for s, _ in pairs for c in (0, 1)})


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_dice_tournament_reports_the_games_it_finished(how):
    """It used to ignore SIGINT as a background job and die on SIGTERM with nothing."""
    proc = background(["dice", "tournament", "greedy", "random", "--games", "1000000"])
    time.sleep(5)
    proc.send_signal(how)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + how, stderr
    done = int(stderr.split("results of the ")[1].split()[0])
    assert 0 < done < 1000000 and stdout.startswith(f"{done} games, 2 players")
