"""Distillation labels (`vrhcaby.learn.labels`) and `vrhcaby label`: the labels against a
plain one-position-at-a-time search (the reference move generator of tests/reference.py,
the network one board at a time), the roles of the labelled plays, the same shards
whatever the jobs, resuming, and bad input.

Tiny runs of the smallest shipped network (td-80, 198-80-5): two or three games a shard,
1-ply mostly, one 2-ply check of a single label."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import pickle
import shutil
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from helpers_jobs import InterruptingShardJob

import engine
from agents.td import CHECKPOINTS, find_checkpoint, load_pruner
from engine.formats import position_ids
from tests.reference import reference_afterstates
from vrhcaby.base.config import load_config
from vrhcaby.cli import label as label_command
from vrhcaby.cli.main import main
from vrhcaby.learn.labels import (
    RANDOM,
    STUDENT_TOP,
    TEACHER_CHOICE,
    TEACHER_SEARCHED,
    LabelConfig,
    Shard,
    config_difference,
    make_shard,
    opponent_agent,
    self_play,
    shard_meta,
)
from vrhcaby.nn.net import load_evaluator
from vrhcaby.play import pool

ROOT = Path(__file__).resolve().parents[1]
PILOT = ROOT / "configs" / "distill" / "pilot-labels.toml"
TINY = LabelConfig(
    name="tiny",
    teacher="td-80",
    plies=1,
    filter=(3,),
    shards=3,
    games_per_shard=3,
    sample=0.3,
    keep_agreeing=1.0,
    student_top=3,
    random_siblings=2,
    seed=5,
)


@pytest.fixture(scope="module")
def teacher():
    return load_evaluator(ROOT / "checkpoints" / "td-80.pt")


@pytest.fixture(scope="module")
def shard(teacher) -> Shard:
    return make_shard(TINY, 0, teacher)


# ---- a plain search, one position at a time -----------------------------------------


def _equity(p: np.ndarray) -> float:
    return float(2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4])


@cache
def _plays(board: tuple, dice: tuple[int, int]) -> tuple:
    """The distinct boards a roll reaches from `board` (side on roll in row 1), by the
    reference generator; the board itself when no play is legal."""
    return tuple(reference_afterstates(board, dice)) or (board,)


def _key(board: np.ndarray) -> tuple:
    return tuple(tuple(int(x) for x in row) for row in board)


def zero_ply(net, after: tuple) -> np.ndarray:
    """The mover's (row 1) probabilities of one afterstate: a finished game's result, else
    the network's."""
    mover, other = after[1], after[0]
    if sum(mover) == 0:  # all borne off; a gammon if the other has none off, a backgammon
        gammon = sum(other) == 15  # if one of them is still in the winner's home or on the bar
        backgammon = gammon and sum(other[18:25]) > 0
        return np.array([1.0, gammon, backgammon, 0.0, 0.0])
    return net.probabilities(np.array([after], dtype=np.int8))[0].astype(np.float64)


def zero_plies(net, afters: tuple) -> list[np.ndarray]:
    """`zero_ply` of each afterstate, the network's in one call."""
    live = [a for a in afters if sum(a[1])]
    p = iter(net.probabilities(np.array(live, dtype=np.int8)) if live else [])
    return [next(p).astype(np.float64) if sum(a[1]) else zero_ply(net, a) for a in afters]


def searched(net, after: tuple, plies: int) -> np.ndarray:
    """The mover's n-ply probabilities of one afterstate: the average over the opponent's
    36 rolls of the (n-1)-ply value of the reply it picks by its 0-ply equity, seen from
    the mover's side."""
    if plies == 0 or sum(after[1]) == 0:
        return zero_ply(net, after)
    board = (after[1], after[0])  # the opponent on roll in row 1
    total = np.zeros(5)
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            replies = _plays(board, (d1, d2))
            values = [_equity(p) for p in zero_plies(net, replies)]
            total += searched(net, replies[int(np.argmax(values))], plies - 1)
    theirs = total / 36
    return np.array([1 - theirs[0], theirs[3], theirs[4], theirs[1], theirs[2]])


def test_the_reference_scores_a_finished_game():
    """zero_ply's finished games: a single win, a gammon, a backgammon (the rules'
    `engine.game_value` agrees)."""
    for checkers, points in (({5: 14}, 1), ({5: 15}, 2), ({5: 14, 24: 1}, 3)):
        board = np.zeros((2, 25), np.int8)  # the mover (row 1) has borne off all its checkers
        for point, count in checkers.items():
            board[0, point] = count
        assert engine.game_value(board[None])[0] == points
        expected = [1, points >= 2, points >= 3, 0, 0]
        assert zero_ply(None, _key(board)).tolist() == expected


# ---- (a) the labels are right ---------------------------------------------------------


def test_every_labelled_play_is_legal_in_its_decision(shard):
    assert len(shard.after) > 20 and len(shard.boards) >= 5
    for j, (board, dice) in enumerate(zip(shard.boards, shard.dice, strict=True)):
        legal = reference_afterstates(_key(board), (int(dice[0]), int(dice[1])))
        assert len(legal) > 1  # a decision has a choice
        mine = [_key(a) for a in shard.after[shard.decision == j]]
        assert mine and set(mine) <= legal and len(set(mine)) == len(mine)


def test_one_ply_labels_equal_a_plain_search(shard, teacher):
    """The labels of every role (the random plays too, which the filter does not reach)
    are the 1-ply values of a plain search, and the 0-ply column the network's."""
    rng = np.random.default_rng(0)
    picks = []
    for bit in (TEACHER_CHOICE, STUDENT_TOP, RANDOM):
        rows = np.flatnonzero((shard.role & bit) > 0)
        picks += list(rng.choice(rows, size=min(2, len(rows)), replace=False))
    only_random = np.flatnonzero(shard.role == RANDOM)
    picks += list(only_random[:2])
    assert len(set(picks)) >= 6
    for r in sorted(set(picks)):
        after = _key(shard.after[r])
        np.testing.assert_allclose(shard.probabilities[r], searched(teacher, after, 1), atol=2e-5)
        np.testing.assert_allclose(shard.zero_ply[r], zero_ply(teacher, after), atol=2e-5)


def test_the_roles_are_the_teachers_and_the_students_choices(shard, teacher):
    """TEACHER_CHOICE: one per decision, the best 1-ply play among the teacher's filter
    (the best `filter[0]` by 0-ply), checked with the plain search; at 1-ply the only
    TEACHER_SEARCHED play. STUDENT_TOP: the student's (here the teacher's) best
    `student_top` plays by 0-ply. RANDOM: `random_siblings` of them."""
    k, top = TINY.filter[0], TINY.student_top
    for j, (board, dice) in enumerate(zip(shard.boards, shard.dice, strict=True)):
        mine = np.flatnonzero(shard.decision == j)
        roles = shard.role[mine]
        assert ((roles & TEACHER_CHOICE) > 0).sum() == 1
        assert np.array_equal((roles & TEACHER_SEARCHED) > 0, (roles & TEACHER_CHOICE) > 0)
        assert ((roles & RANDOM) > 0).sum() == TINY.random_siblings
        legal = sorted(_plays(_key(board), (int(dice[0]), int(dice[1]))))
        equities = np.array([_equity(zero_ply(teacher, b)) for b in legal])
        order = np.argsort(-equities, kind="stable")
        labelled = {_key(shard.after[r]): shard.role[r] for r in mine}
        students = [b for b, role in labelled.items() if role & STUDENT_TOP]
        assert len(students) == min(top, len(legal))
        cut = equities[order[len(students) - 1]]
        for b in students:  # the top ones: no unlabelled play is better than any of them
            assert _equity(zero_ply(teacher, b)) >= cut - 1e-6
        filtered = [legal[i] for i in order[:k]]
        if j < 3:  # the plain 1-ply search of the filter's plays, for a few decisions
            values = [_equity(searched(teacher, b, 1)) for b in filtered]
            (choice,) = [b for b, role in labelled.items() if role & TEACHER_CHOICE]
            assert choice in filtered
            assert _equity(searched(teacher, choice, 1)) >= max(values) - 1e-5


def test_a_student_of_its_own_picks_the_student_top_plays(teacher):
    """With another student: STUDENT_TOP are its best plays by its own 0-ply, while the
    labels and the 0-ply column stay the teacher's."""
    student = load_evaluator(ROOT / "checkpoints" / "td-rich.pt")
    config = LabelConfig(teacher="td-80", student="td-rich", plies=1, filter=(2,), seed=9)
    config = LabelConfig(**{**shard_meta(config, 0)["config"], "games_per_shard": 2})
    made = make_shard(config, 0, teacher, student)
    for j, (board, dice) in enumerate(zip(made.boards[:4], made.dice, strict=False)):
        legal = _plays(_key(board), (int(dice[0]), int(dice[1])))
        equities = sorted((_equity(p) for p in zero_plies(student, legal)), reverse=True)
        mine = np.flatnonzero(made.decision == j)
        tops = [r for r in mine if made.role[r] & STUDENT_TOP]
        assert len(tops) == min(config.student_top, len(legal))
        for r in tops:
            value = _equity(zero_ply(student, _key(made.after[r])))
            assert value >= equities[len(tops) - 1] - 1e-6
        r = mine[0]
        np.testing.assert_allclose(
            made.zero_ply[r], zero_ply(teacher, _key(made.after[r])), atol=2e-5
        )
        np.testing.assert_allclose(
            made.probabilities[r], searched(teacher, _key(made.after[r]), 1), atol=2e-5
        )


def test_two_ply_labels_equal_a_plain_search(teacher):
    """At 2 plies: the teacher's choice is the best of its labelled searched plays by the
    labels, and one label is the plain 2-ply search's value."""
    config = LabelConfig(
        teacher="td-80",
        plies=2,
        filter=(3, 2),
        games_per_shard=2,
        sample=0.1,
        keep_agreeing=0.0,
        student_top=1,
        random_siblings=0,
        seed=3,
    )
    two = make_shard(config, 0, teacher)
    assert len(two.boards) >= 1
    for j in range(len(two.boards)):
        mine = np.flatnonzero(two.decision == j)
        searched_rows = mine[(two.role[mine] & TEACHER_SEARCHED) > 0]
        assert 1 <= len(searched_rows) <= 2
        (choice,) = mine[(two.role[mine] & TEACHER_CHOICE) > 0]
        values = [_equity(two.probabilities[r]) for r in searched_rows]
        assert _equity(two.probabilities[choice]) == max(values)
    r = int(np.flatnonzero((two.role & TEACHER_CHOICE) > 0)[0])
    expected = searched(teacher, _key(two.after[r]), 2)
    np.testing.assert_allclose(two.probabilities[r], expected, atol=2e-5)


def test_a_shard_whose_games_all_dance_at_once(teacher):
    """Shard 3 of this run reaches a turn where both live games have no legal play (the
    batched 0-ply of no afterstates once came back one row per board)."""
    config = LabelConfig(teacher="td-80", plies=1, games_per_shard=2, shards=4)
    assert make_shard(config, 3, teacher).games == 2


def test_a_saved_shard_loads_as_it_was_made(shard, tmp_path):
    path = tmp_path / "shard-00000.npz"
    shard.save(path, shard_meta(TINY, 0))
    back = Shard.load(path)
    assert np.array_equal(back.after, shard.after) and np.array_equal(back.boards, shard.boards)
    assert np.array_equal(back.role, shard.role) and np.array_equal(back.dice, shard.dice)
    np.testing.assert_allclose(back.probabilities, shard.probabilities, atol=5e-4)
    assert Shard.meta(path) == json.loads(json.dumps(shard_meta(TINY, 0)))
    assert config_difference(TINY, Shard.meta(path)) is None
    with np.load(path) as z:  # Position IDs and float16, as data/labels/README.md says
        assert z["after"].dtype == "S14" and z["probabilities"].dtype == np.float16
        assert list(z["after"][:3]) == [p.encode() for p in position_ids(shard.after[:3])]


def test_the_pilot_config_loads_and_its_shards_are_its_own():
    config = load_config(LabelConfig, PILOT)
    assert config.plies == 2 and config.teacher == "td-best"
    assert find_checkpoint(config.teacher) == ROOT / "checkpoints" / "td-best.pt"
    for path in sorted((ROOT / config.out_dir / config.name).glob("shard-*.npz"))[:1]:
        assert config_difference(config, Shard.meta(path)) is None


def test_config_difference_names_the_setting():
    meta = json.loads(json.dumps(shard_meta(TINY, 0)))
    longer = LabelConfig(**{**shard_meta(TINY, 0)["config"], "shards": 9, "out_dir": "x"})
    assert config_difference(longer, meta) is None
    other = LabelConfig(**{**shard_meta(TINY, 0)["config"], "explore": 0.1})
    assert config_difference(other, meta) == "explore = 0.05 in the shard, 0.1 in this run"
    assert "version" in config_difference(TINY, {**meta, "version": 2})


# ---- (b) the same shards, whatever makes them -------------------------------------------


def test_a_shard_depends_on_its_seed_and_index_only(teacher, shard):
    again = make_shard(TINY, 0, teacher)
    assert np.array_equal(again.after, shard.after)
    assert np.array_equal(again.probabilities, shard.probabilities)
    longer = LabelConfig(**{**shard_meta(TINY, 0)["config"], "filter": (3,), "shards": 50})
    assert np.array_equal(make_shard(longer, 0, teacher).role, shard.role)
    assert not np.array_equal(make_shard(TINY, 1, teacher).dice, shard.dice)


def label(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["label", "--no-progress", *args])
    return code, out.getvalue(), err.getvalue()


def tiny(folder: Path, *extra: str, shards: int = 3) -> list[str]:
    """The arguments of the tiny run into `folder`."""
    sets = {**shard_meta(TINY, 0)["config"], "out_dir": str(folder), "shards": shards}
    sets["filter"] = list(sets["filter"])
    args = []
    for key, value in sets.items():
        args += ["--set", f"{key}={json.dumps(value)}"]
    return [*args, *extra]


def arrays(path: Path) -> dict:
    with np.load(path) as z:
        out = {k: z[k] for k in z.files if k != "meta"}
    meta = json.loads(str(np.load(path)["meta"]))
    for key in ("out_dir", "shards"):  # where the run is, how long it was when this was made
        del meta["config"][key]
    return {**out, "meta": meta}


def same_shards(a: Path, b: Path) -> None:
    names = sorted(p.name for p in (a / "tiny").iterdir())
    assert names == sorted(p.name for p in (b / "tiny").iterdir())
    for name in names:
        x, y = arrays(a / "tiny" / name), arrays(b / "tiny" / name)
        assert x.keys() == y.keys()
        for key in x:
            assert np.array_equal(x[key], y[key]) if key != "meta" else x[key] == y[key], key


def test_the_shards_are_the_same_whatever_the_jobs(tmp_path, shard):
    code, out, _ = label(*tiny(tmp_path / "one", "--jobs", "1"))
    assert code == 0, out
    code, out, err = label(*tiny(tmp_path / "two", "--jobs", "2", "--json", str(tmp_path / "s")))
    assert code == 0, err
    same_shards(tmp_path / "one", tmp_path / "two")
    assert np.array_equal(Shard.load(tmp_path / "one/tiny/shard-00000.npz").after, shard.after)
    summary = json.loads((tmp_path / "s").read_text())
    assert summary["shards_made"] == 3 and summary["shards_skipped"] == 0
    made = [Shard.load(p) for p in (tmp_path / "two" / "tiny").iterdir()]
    assert summary["labels"] == sum(len(s.after) for s in made) == summary["labels_held"]
    assert summary["decisions"] == sum(len(s.boards) for s in made)
    assert summary["teacher_positions"] == sum(s.positions for s in made) > 0
    assert summary["line"] in out and "labels/s" in out and len(out.splitlines()) == 1


def test_the_ray_job_pickles_and_makes_the_same_shards(teacher, shard):
    """What `--backend ray` hands each task (the job through the object store, a range of
    indices) makes the shards the local processes make."""
    job = pickle.loads(pickle.dumps(label_command.ShardJob(TINY, teacher, None)))
    ((index, made, _),) = job.run(range(0, 1))
    assert index == 0 and np.array_equal(made.after, shard.after)
    assert np.array_equal(made.probabilities, shard.probabilities)


# ---- (c) resuming ---------------------------------------------------------------------


def test_a_rerun_skips_the_shards_made_and_makes_the_others(tmp_path):
    assert label(*tiny(tmp_path / "a", shards=2))[0] == 0
    folder = tmp_path / "a" / "tiny"
    stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    summary = tmp_path / "s.json"
    code, out, _ = label(*tiny(tmp_path / "a", "--json", str(summary), shards=3))
    assert code == 0
    assert json.loads(summary.read_text())["shards_skipped"] == 2
    assert json.loads(summary.read_text())["shards_made"] == 1
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir() if p.name in stamps} == stamps
    assert label(*tiny(tmp_path / "b", shards=3))[0] == 0
    same_shards(tmp_path / "a", tmp_path / "b")
    code, out, _ = label(*tiny(tmp_path / "a", "--shards", "3"))
    assert code == 0 and "made 0 shards" in out and "skipped 3" in out


def test_a_corrupt_shard_is_made_again(tmp_path):
    assert label(*tiny(tmp_path / "a"))[0] == 0
    folder = tmp_path / "a" / "tiny"
    good = arrays(folder / "shard-00001.npz")
    (folder / "shard-00001.npz").write_bytes(b"not a zip file")
    data = (folder / "shard-00002.npz").read_bytes()
    (folder / "shard-00002.npz").write_bytes(data[: len(data) // 2])
    code, out, err = label(*tiny(tmp_path / "a"))
    assert code == 0, err
    lines = [line for line in err.splitlines() if "corrupt" in line]
    assert len(lines) == 2 and all(line.endswith(": making it again") for line in lines)
    assert lines[0].startswith(f"{folder / 'shard-00001.npz'} is corrupt (")
    assert lines[1].startswith(f"{folder / 'shard-00002.npz'} is corrupt (")
    assert "made 2 shards (2 of them again), skipped 1" in out
    again = arrays(folder / "shard-00001.npz")
    assert all(np.array_equal(again[k], good[k]) for k in good if k != "meta")


def test_a_folder_of_another_config_is_refused(tmp_path):
    assert label(*tiny(tmp_path, shards=1))[0] == 0
    before = sorted(tmp_path.rglob("*"))
    code, out, err = label(*tiny(tmp_path, "--set", "explore=0.1", shards=2))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1
    assert "shard-00000.npz was made by another config (explore = 0.05 in the shard" in err
    assert sorted(tmp_path.rglob("*")) == before


def test_a_folder_labelled_by_another_network_of_the_same_name_is_refused(tmp_path):
    net = tmp_path / "teacher.pt"
    shutil.copyfile(CHECKPOINTS / "td-80.pt", net)
    run = tiny(tmp_path, "--set", f"teacher={json.dumps(str(net))}", shards=1)
    assert label(*run)[0] == 0
    assert Shard.meta(tmp_path / "tiny" / "shard-00000.npz")["networks"]["teacher"] == (
        hashlib.sha256(net.read_bytes()).hexdigest()
    )
    shutil.copyfile(CHECKPOINTS / "td-best.pt", net)  # same name, another network
    code, out, err = label(*run, "--shards", "2")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "another teacher network of the same name" in err


@pytest.mark.parametrize(("jobs", "method"), [(1, None), (2, "fork"), (2, "forkserver")])
def test_ctrl_c_keeps_the_shards_finished_and_a_rerun_continues(
    tmp_path, monkeypatch, jobs, method
):
    """SIGINT while shard 1 is made (here, or in a worker process, forked or from the fork
    server): exit 130, the shards finished are kept, and the same command makes the others."""
    if method == "fork" and pool.start_method() != "fork":
        pytest.skip("this process has loaded gRPC: forking it could hang")
    if method:
        monkeypatch.setattr(pool, "start_method", lambda: method)
    interrupting = functools.partial(InterruptingShardJob, parent=os.getpid(), at=1)
    monkeypatch.setattr(label_command, "ShardJob", interrupting)
    code, out, err = label(*tiny(tmp_path / "a", "--jobs", str(jobs)))
    assert code == 130 and "interrupted: run the same command again" in err
    kept = [p.name for p in (tmp_path / "a" / "tiny").iterdir()]
    assert "shard-00001.npz" not in kept and f"made {len(kept)} shard" in out
    if jobs == 1:
        assert kept == ["shard-00000.npz"]
    monkeypatch.undo()
    code, out, _ = label(*tiny(tmp_path / "a"))
    assert code == 0 and f"made {3 - len(kept)} shard" in out and f"skipped {len(kept)}" in out
    assert label(*tiny(tmp_path / "b"))[0] == 0
    same_shards(tmp_path / "a", tmp_path / "b")


# ---- (d) bad input ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--set", "bogus=1"], "unknown config key 'bogus'"),
        (["--set", "teacher=td-nothing"], "teacher 'td-nothing': td-nothing: checkpoint not found"),
        (["--set", "student=nowhere.pt"], "student 'nowhere.pt': nowhere.pt: checkpoint not found"),
        (["--set", "teacher=td-acey-deucey"], "plays acey-deucey"),
        (["--set", "plies=3"], "plies must be 1 or 2"),
        (["--shards", "0"], "shards must be at least 1"),
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--workers", "2"], "--address and --workers are for --backend ray"),
        (["--set", "visited=1.5"], "visited must be between 0 and 1, got 1.5"),
        (["--set", "visited=-0.1"], "visited must be between 0 and 1, got -0.1"),
        (["--set", "visited_top=0"], "visited_top must be at least 1, got 0"),
        (["--set", 'visited="all"'], "visited"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_and_nothing_is_written(tmp_path, extra, message):
    code, out, err = label(*tiny(tmp_path / "out"), *extra)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_no_checkpoint_is_named(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"junk")
    code, _, err = label(*tiny(tmp_path / "out"), "--set", f"teacher={json.dumps(str(bad))}")
    assert code == 2 and len(err.splitlines()) == 1 and str(bad) in err
    assert not (tmp_path / "out").exists()


def test_a_pruned_teacher_keeping_every_reply_labels_as_the_unpruned_one(teacher, shard):
    ranker = load_pruner(CHECKPOINTS / "td-80.pt").ranker
    every = make_shard(replace(TINY, prune=1000), 0, teacher, pruner=ranker)
    for name in ("after", "probabilities", "role"):
        assert np.array_equal(getattr(every, name), getattr(shard, name)), name
    some = make_shard(replace(TINY, prune=2), 0, teacher, pruner=ranker)
    assert len(some.after) and ((some.probabilities >= 0) & (some.probabilities <= 1)).all()
    with pytest.raises(ValueError, match="pruning network"):
        make_shard(replace(TINY, prune=2), 0, teacher)


def test_shards_made_before_a_setting_existed_count_as_made_with_its_default():
    meta = json.loads(json.dumps(shard_meta(TINY, 0)))  # as a shard's file holds it
    del meta["config"]["prune"]
    assert config_difference(TINY, meta) is None
    assert "prune = 0 in the shard, 3 in this run" in config_difference(
        replace(TINY, prune=3), meta
    )


# ---- labels of games against an opponent ---------------------------------------------


class RecordingPubeval:
    """pubeval as the opponent, remembering each board it was asked to play (side on
    roll in row 1) and the board its play leaves to the other side."""

    def __init__(self) -> None:
        from agents.pubeval import PubevalAgent

        self.inner = PubevalAgent()
        self.asked: list[bytes] = []
        self.left: list[bytes] = []

    def choose_boards(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        out = self.inner.choose_boards(boards, dice)
        self.asked += [b.tobytes() for b in boards]
        self.left += [np.ascontiguousarray(a[::-1]).tobytes() for a in out]
        return out


def test_an_opponent_plays_the_other_side_and_only_the_students_turns_are_labelled(teacher):
    """With an opponent, the games alternate between the student's plays and the
    opponent's: every decision kept is one the student faced, a board the opponent's
    play left (the games' first turns aside), never a board the opponent was asked."""
    config = replace(TINY, sample=1.0, explore=0.0, keep_agreeing=1.0)
    opponent = RecordingPubeval()
    decisions = self_play(teacher, 6, config, np.random.default_rng(3), opponent)
    start = engine.Position.start().board.tobytes()
    kept = [b.tobytes() for b in decisions.boards if b.tobytes() != start]
    assert len(opponent.asked) > 50 and len(kept) > 50  # both sides played whole games
    assert not set(kept) & set(opponent.asked)
    assert set(kept) <= set(opponent.left)
    # Without one, the student's own plays make the positions: most are not pubeval's.
    alone = self_play(teacher, 6, config, np.random.default_rng(3))
    assert len({b.tobytes() for b in alone.boards} - set(opponent.left)) > len(alone.boards) // 2


def test_a_bad_opponent_is_refused_in_one_line():
    with pytest.raises(ValueError, match="opponent 'gnubgx'") as e:
        opponent_agent("gnubgx")
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="acey-deucey: no opponent"):
        LabelConfig(variant="acey-deucey", plies=1, filter=(2,), opponent="pubeval")


# ---- an ensemble as the teacher --------------------------------------------------------


class MeanOfSets:
    """A plain ensemble: the mean of two network sets' probabilities in contact and crashed
    positions, the first set's answer (its race network, the rules, the databases)
    elsewhere."""

    def __init__(self, first, second) -> None:
        self.first, self.second = first, second

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        from engine.classify import CONTACT, CRASHED, classify_boards

        mine = self.first.probabilities(afterstates).astype(np.float64)
        both = np.isin(classify_boards(afterstates), [CONTACT, CRASHED])
        theirs = self.second.probabilities(afterstates[both]).astype(np.float64)
        mine[both] = (mine[both] + theirs) / 2
        return mine


def test_an_ensemble_teacher_labels_by_the_mean_of_its_sets(tmp_path):
    """`ensemble`: the teacher's 1-ply values and 0-ply column are those of a plain search
    by the mean of the two sets' probabilities, and the shard records each member's
    digest; another member's shards are refused in one line."""
    run = tiny(tmp_path, "--set", 'teacher="td-contact-set"', shards=1)
    run += ["--set", 'ensemble=["td-contact-gen2"]']
    code, out, err = label(*run)
    assert code == 0, err
    path = tmp_path / "tiny" / "shard-00000.npz"
    made = Shard.load(path)
    sets = [load_evaluator(find_checkpoint(n)) for n in ("td-contact-set", "td-contact-gen2")]
    mean = MeanOfSets(*sets)
    alone = sets[0]
    rows = np.flatnonzero((made.role & TEACHER_CHOICE) > 0)[:6]
    assert len(rows) >= 4
    far = 0.0
    for r in rows:  # within float16's rounding (the shard's file holds float16)
        after = _key(made.after[r])
        np.testing.assert_allclose(made.probabilities[r], searched(mean, after, 1), atol=3e-4)
        np.testing.assert_allclose(made.zero_ply[r], zero_ply(mean, after), atol=3e-4)
        far = max(far, float(np.abs(made.probabilities[r] - searched(alone, after, 1)).max()))
    assert far > 1e-3  # the teacher alone would have labelled them otherwise
    recorded = Shard.meta(path)["networks"]
    assert (
        recorded["ensemble-1"]
        == hashlib.sha256(find_checkpoint("td-contact-gen2").read_bytes()).hexdigest()
    )
    code, out, err = label(*run[:-1], 'ensemble=["td-set"]', "--shards", "2")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "ensemble = ['td-contact-gen2'] in the shard" in err


@pytest.mark.parametrize(
    ("member", "message"),
    [
        ("td-nothing", "ensemble 'td-nothing': td-nothing: checkpoint not found"),
        ("td-80", "td-80.pt: not a network set with a contact network"),
    ],
)
def test_a_bad_ensemble_member_is_refused_in_one_line(tmp_path, member, message):
    run = tiny(tmp_path / "out", "--set", 'teacher="td-contact-set"')
    code, out, err = label(*run, "--set", f"ensemble={json.dumps([member])}")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="acey-deucey: no ensemble"):
        LabelConfig(variant="acey-deucey", plies=1, filter=(2,), ensemble=("td-80",))
