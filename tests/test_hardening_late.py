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
import time
from pathlib import Path

import pytest

from vrhcaby.base.files import check_output_dir, check_output_file
from vrhcaby.cli import main as cli

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


def test_a_tournament_of_more_games_than_can_be_kept_is_refused():
    refused_at_once(["tournament", "random", "pubeval", "--games", "100000000000"], "--games")


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
    refused_at_once([*tournament(out), "--seed", "2"], "--force", "earlier")
    assert (out / "games.jsonl").read_text() == first
    (out / "pair7.mat").write_text("an older run's pair")
    code, _, err = run_cli([*tournament(out), "--seed", "2", "--force"])
    assert code == 0, err
    assert (out / "games.jsonl").read_text() != first
    assert not (out / "pair7.mat").exists()  # nothing of the earlier run stays
    seeds = {json.loads(line)["seed"] for line in (out / "games.jsonl").read_text().splitlines()}
    assert seeds == {2}
