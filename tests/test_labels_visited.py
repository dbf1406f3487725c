"""Labels at the positions the one-ply search visits (`LabelConfig.visited`,
`vrhcaby.learn.labels`): for the teacher's choice of a labelled decision, the opponent's
replies the student's one-ply search picks (its best `visited_top` of each roll), labelled
by the teacher's search. Checked against a plain one-board-at-a-time search (the reference
move generator of tests/reference.py, the networks one list of boards at a time), the
shards of `visited = 0` against a shard made before the setting existed, and the fit of
shards that hold them (`vrhcaby.learn.distill`: a decision of one labelled row has no rank
term).

Tiny runs: td-80 teaches at 1 ply, td-rich is the student (another network, so that the
replies are the student's picks, not the teacher's)."""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

import engine
from engine.dice import ROLLS
from tests.reference import reference_afterstates
from tests.test_labels import TINY, _equity, _key, searched, zero_plies, zero_ply
from vrhcaby.cli.main import main
from vrhcaby.learn import distill, labels
from vrhcaby.learn.distill import DistillConfig, fit_epoch, held_out, load_labels
from vrhcaby.learn.labels import (
    STUDENT_TOP,
    TEACHER_CHOICE,
    TEACHER_SEARCHED,
    VISITED,
    LabelConfig,
    Shard,
    config_difference,
    make_shard,
    shard_meta,
)
from vrhcaby.nn.net import NetConfig, build_model, load_evaluator

ROOT = Path(__file__).resolve().parents[1]
#: Shard 0 of test_labels' TINY run, made by the code before `visited` existed (commit
#: 60e3430) and saved with an empty meta.
BEFORE = ROOT / "tests" / "data" / "labels" / "tiny-before-visited.npz"
VISIT = replace(TINY, student="td-rich", games_per_shard=2, visited=1.0, visited_top=2)
NET = NetConfig(encoding="tesauro", hidden=(80,))  # td-80's, for the fit


@pytest.fixture(scope="module")
def teacher():
    return load_evaluator(ROOT / "checkpoints" / "td-80.pt")


@pytest.fixture(scope="module")
def student():
    return load_evaluator(ROOT / "checkpoints" / "td-rich.pt")


@pytest.fixture(scope="module")
def plain(teacher, student) -> Shard:
    """VISIT's shard 0 without visited replies."""
    return make_shard(replace(VISIT, visited=0.0), 0, teacher, student)


@pytest.fixture(scope="module")
def visited(teacher, student) -> Shard:
    return make_shard(VISIT, 0, teacher, student)


def visited_part(shard: Shard) -> tuple[np.ndarray, int]:
    """The rows of the visited replies, and the first visited decision."""
    rows = np.flatnonzero((shard.role & VISITED) > 0)
    return rows, int(shard.decision[rows].min())


def plain_visits(student, a: tuple, k: int) -> dict[tuple, set]:
    """The replies the student's one-ply search of afterstate `a` visits, by hand: for each
    roll (d1 <= d2) that has a legal reply and whose best reply does not end the game, the
    set of its best `k` replies by the student's 0-ply equity."""
    board = (a[1], a[0])  # the opponent on roll in row 1
    out = {}
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            legal = tuple(sorted(reference_afterstates(board, (d1, d2))))
            if not legal:
                continue
            values = [_equity(p) for p in zero_plies(student, legal)]
            order = np.argsort(values, kind="stable")[::-1]
            if sum(legal[order[0]][1]) == 0:  # the best reply bears off the last checker
                continue
            out[(d1, d2)] = {legal[i] for i in order[:k]}
    return out


# ---- the replies and their labels ----------------------------------------------------------


def test_the_visited_replies_are_the_students_best_of_each_roll(visited, student):
    """Every live teacher's choice is visited (visited = 1), each once per roll, and each
    roll's labelled replies are the student's best two of that roll, by the plain search."""
    _, first = visited_part(visited)
    choices = visited.after[(visited.role & TEACHER_CHOICE) > 0]
    live = {_key(a) for a in choices if engine.game_value(a[None])[0] == 0}
    seen: dict[tuple, dict[tuple, set]] = {}
    for j in range(first, len(visited.boards)):
        board = _key(visited.boards[j])
        a = (board[1], board[0])
        roll = tuple(sorted(int(x) for x in visited.dice[j]))
        assert roll not in seen.setdefault(a, {})  # a decision per (choice, roll)
        seen[a][roll] = {_key(b) for b in visited.after[visited.decision == j]}
    assert set(seen) == live and len(live) >= 5
    for a in sorted(live)[:3]:
        assert seen[a] == plain_visits(student, a, 2)


def test_visited_student_also_searches_the_students_one_ply_choice(teacher, student, visited):
    """With visited_student the choices searched are each decision's teacher choice and the
    student's best play by its 1-ply value (the plain search) among the decision's
    student-top and teacher-searched plays, and no other of its plays; the shard's other
    rows are those without it."""
    both = make_shard(replace(VISIT, visited_student=True), 0, teacher, student)
    _, first = visited_part(visited)
    assert visited_part(both)[1] == first
    mine = both.decision < first
    np.testing.assert_array_equal(both.after[mine], visited.after[visited.decision < first])
    searched_choices = set()
    for j in range(first, len(both.boards)):
        board = _key(both.boards[j])
        searched_choices.add((board[1], board[0]))
    extra = 0
    for j in range(first):
        rows = np.flatnonzero(both.decision == j)
        choice = rows[(both.role[rows] & TEACHER_CHOICE) > 0]
        candidates = rows[(both.role[rows] & (STUDENT_TOP | TEACHER_SEARCHED)) > 0]
        values = [_equity(searched(student, _key(both.after[r]), 1)) for r in candidates]
        best = candidates[int(np.argmax(values))]
        live = engine.game_value(both.after[rows]) == 0
        for r, alive in zip(rows, live, strict=True):
            assert (_key(both.after[r]) in searched_choices) == (alive and r in (*choice, best))
        extra += int(best not in choice and live[rows == best][0])
    assert extra >= 1  # the student's one-ply disagrees with the teacher somewhere


def test_visited_student_needs_visited():
    with pytest.raises(ValueError, match="visited_student needs visited"):
        replace(VISIT, visited=0.0, visited_student=True)


def test_visited_labels_are_the_teachers_search(visited, teacher):
    """A visited reply's label is the teacher's 1-ply value of it, and its 0-ply column
    the teacher's network, both for the reply's mover (the opponent)."""
    rows, _ = visited_part(visited)
    for r in np.random.default_rng(0).choice(rows, size=6, replace=False):
        reply = _key(visited.after[r])
        np.testing.assert_allclose(visited.probabilities[r], searched(teacher, reply, 1), atol=2e-5)
        np.testing.assert_allclose(visited.zero_ply[r], zero_ply(teacher, reply), atol=2e-5)


def test_roles_and_decisions_of_the_visited_replies(visited, plain):
    """The shard's first rows and decisions are those without visited replies, bit for bit;
    then only VISITED rows, each decision's rows together, its board a choice seen from the
    opponent, its dice a roll, every reply legal there."""
    n, d = len(plain.after), len(plain.boards)
    for name in ("after", "probabilities", "zero_ply", "decision", "role"):
        assert np.array_equal(getattr(visited, name)[:n], getattr(plain, name)), name
    assert np.array_equal(visited.boards[:d], plain.boards)
    assert np.array_equal(visited.dice[:d], plain.dice)
    rows, first = visited_part(visited)
    assert first == d and np.array_equal(rows, np.arange(n, len(visited.after)))
    assert (visited.role[rows] == VISITED).all() and not (plain.role & VISITED).any()
    assert (np.diff(visited.decision[rows]) >= 0).all()
    sizes = np.bincount(visited.decision[rows] - d)
    assert sizes.min() >= 1 and sizes.max() == 2 and (sizes == 1).any()  # one legal reply
    rolls = {tuple(r) for r in ROLLS.tolist()}
    for j in range(d, len(visited.boards)):
        dice = tuple(int(x) for x in visited.dice[j])
        assert dice in rolls
        legal = reference_afterstates(_key(visited.boards[j]), dice)
        assert {_key(b) for b in visited.after[visited.decision == j]} <= legal
    assert visited.positions > plain.positions


def test_rolls_without_a_reply_or_whose_best_reply_ends_the_game_are_skipped(teacher, student):
    """Two teacher's choices: after one the opponent is on the bar against a closed board
    (no roll has a reply), after the other it bears off its last two checkers, from its
    6-point, with 3-3, 4-4, 5-5 and 6-6 (those rolls are skipped, the other 17 visited)."""
    closed, home = np.zeros((2, 2, 25), np.int8)
    closed[1, :6], closed[1, 6] = 2, 3  # the mover's points 1-6 made
    closed[0, 24], closed[0, 12] = 1, 14  # the opponent: one on the bar
    home[0, 5], home[1, 11] = 2, 15  # the opponent: two on its 6-point, 13 off
    after = np.stack([closed, home])
    shard = Shard(
        after=after,
        probabilities=np.full((2, 5), 0.5),
        zero_ply=np.full((2, 5), 0.5),
        decision=np.arange(2),
        role=np.full(2, TEACHER_CHOICE, np.uint8),
        boards=after[:, ::-1],
        dice=np.array([[1, 2], [1, 2]]),
        games=1,
        positions=0,
    )
    made = labels._with_visited(
        shard, np.ones(2, bool), VISIT, labels.Counted(teacher), student, None
    )
    assert np.array_equal(made.after[:2], after) and (made.boards[2:] == home[::-1]).all()
    ending = {(3, 3), (4, 4), (5, 5), (6, 6)}
    assert {tuple(d) for d in made.dice[2:].tolist()} == {tuple(r) for r in ROLLS.tolist()} - ending
    for j in range(2, len(made.boards)):
        replies = made.after[made.decision == j]
        assert 1 <= len(replies) <= 2 and (replies[:, 1].sum(axis=1) > 0).all()
    alone = labels._with_visited(
        shard, np.array([True, False]), VISIT, labels.Counted(teacher), student, None
    )
    assert alone is shard  # nothing to visit: the shard as it was


def test_visited_top_one_is_the_reply_the_one_ply_search_averages(teacher, student, visited):
    """visited_top 1: each roll's reply is the student's best, as its one-ply search
    (`ply_probabilities(student, [a], 1)`) picks; the decisions are those of top 2."""
    one = make_shard(replace(VISIT, visited_top=1), 0, teacher, student)
    rows, first = visited_part(one)
    assert np.bincount(one.decision[rows] - first).max() == 1
    assert np.array_equal(one.boards, visited.boards) and np.array_equal(one.dice, visited.dice)
    board = _key(one.boards[first])
    mine = {}
    for j in np.flatnonzero((one.boards == one.boards[first]).all(axis=(1, 2))):
        roll = tuple(sorted(int(x) for x in one.dice[j]))
        mine[roll] = {_key(b) for b in one.after[one.decision == j]}
    assert mine == plain_visits(student, (board[1], board[0]), 1)


def test_a_share_of_the_decisions_is_visited(teacher, student, visited, plain):
    half = make_shard(replace(VISIT, visited=0.5), 0, teacher, student)
    _, first = visited_part(half)
    assert first == len(plain.boards)
    assert len(plain.boards) < len(half.boards) < len(visited.boards)
    assert {_key(b) for b in half.boards} <= {_key(b) for b in visited.boards}


def test_a_pruned_teacher_keeping_every_reply_labels_visited_replies_as_unpruned(
    teacher, student, visited
):
    from agents.td import CHECKPOINTS, load_pruner

    ranker = load_pruner(CHECKPOINTS / "td-80.pt").ranker
    every = make_shard(replace(VISIT, prune=1000), 0, teacher, student, pruner=ranker)
    for name in ("after", "probabilities", "role", "decision"):
        assert np.array_equal(getattr(every, name), getattr(visited, name)), name


# ---- visited = 0: the shards as before ------------------------------------------------------


def test_visited_zero_makes_the_shard_made_before_the_setting(teacher, tmp_path):
    """TINY's shard 0, saved as the code before `visited` saved it: the same arrays (the
    floats within one float16 step, for another machine's arithmetic); and with visited 0
    set, the same file byte for byte as without it."""
    made = make_shard(TINY, 0, teacher)
    made.save(tmp_path / "now.npz", {})
    make_shard(replace(TINY, visited=0.0, visited_top=3), 0, teacher).save(tmp_path / "0.npz", {})
    assert (tmp_path / "now.npz").read_bytes() == (tmp_path / "0.npz").read_bytes()
    with np.load(BEFORE) as before, np.load(tmp_path / "now.npz") as now:
        assert sorted(before.files) == sorted(now.files)
        for name in before.files:
            if before[name].dtype == np.float16:
                np.testing.assert_allclose(now[name], before[name], atol=1e-3, err_msg=name)
            else:
                assert np.array_equal(now[name], before[name]), name


def test_shards_made_before_visited_existed_resume_and_a_visited_run_is_another():
    meta = json.loads(json.dumps(shard_meta(TINY, 0)))
    del meta["config"]["visited"], meta["config"]["visited_top"]
    assert config_difference(TINY, meta) is None
    assert config_difference(replace(TINY, visited=0.5), meta) == (
        "visited = 0.0 in the shard, 0.5 in this run"
    )


# ---- the fit -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folder(tmp_path_factory, teacher, student) -> Path:
    """Two shards with visited replies (top 2; a roll of one legal reply makes a decision
    of one row)."""
    out = tmp_path_factory.mktemp("visited")
    config = replace(VISIT, out_dir=str(out))
    for index in range(2):
        shard = make_shard(config, index, teacher, student)
        shard.save(config.shard_path(index), shard_meta(config, index))
    return config.folder


def plain_loss(p: torch.Tensor, target: torch.Tensor, decision: np.ndarray, rank: float) -> float:
    """The distillation loss by hand: half the squared error of the five probabilities and
    of the equity, plus `rank` times half the squared difference of each row's equity error
    from its decision's mean error (0 for a decision of one row)."""
    pn, tn = p.double().numpy(), target.double().numpy()
    diff = pn - tn
    error = np.array([_equity(x) - _equity(t) for x, t in zip(pn, tn, strict=True)])
    groups: dict[int, list[int]] = {}
    for i, g in enumerate(decision.tolist()):
        groups.setdefault(g, []).append(i)
    total = 0.0
    for members in groups.values():
        mean = sum(error[i] for i in members) / len(members)
        for i in members:
            relative = error[i] - mean
            total += 0.5 * (diff[i] ** 2).sum() + 0.5 * error[i] ** 2 + rank * 0.5 * relative**2
    return total / len(decision)


def test_a_shard_with_visited_replies_fits_and_singletons_have_no_rank_term(folder):
    config = DistillConfig(
        labels=(str(folder),), holdout_every=0, rank_weight=30.0, batch_size=256, lr=1e-2
    )
    data, held = load_labels([folder], NET, config)
    shards = [Shard.load(p) for p in sorted(folder.glob("shard-*.npz"))]
    assert len(data) == sum(len(s.after) for s in shards) and not len(held)
    torch.manual_seed(0)
    model = build_model(NET)
    decision = data.decision.numpy()
    sizes = np.bincount(decision)
    for pick in (sizes[decision] == 1, sizes[decision] > 1):  # singletons, then the rest
        rows = torch.from_numpy(np.flatnonzero(pick))
        with torch.no_grad():
            got = float(distill.loss(model, data, rows, config))
            p = distill.predictions(model, data, rows)
        want = plain_loss(p, data.targets[rows], decision[rows.numpy()], 30.0)
        assert got == pytest.approx(want, rel=1e-5)
        with torch.no_grad():
            without = float(distill.loss(model, data, rows, replace(config, rank_weight=0.0)))
        if (sizes[decision[pick]] == 1).all():
            assert len(rows) and got == without  # no rank term, to the bit
        else:
            assert got > without
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    before = held_out(model, data, config).loss
    generator = torch.Generator().manual_seed(1)
    for epoch in range(2):
        fit_epoch(model, optimizer, data, config, epoch, generator)
    assert held_out(model, data, config).loss < 0.5 * before


# ---- bad input -----------------------------------------------------------------------------


def label(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["label", "--no-progress", *args])
    return code, out.getvalue(), err.getvalue()


def run_args(folder: Path, config: LabelConfig = VISIT) -> list[str]:
    sets = {**shard_meta(config, 0)["config"], "out_dir": str(folder), "shards": 1}
    args = []
    for key, value in sets.items():
        args += ["--set", f"{key}={json.dumps(value)}"]
    return args


def test_acey_deucey_has_no_visited_replies():
    with pytest.raises(ValueError, match=r"variant acey-deucey: visited must be 0, got 0\.5"):
        LabelConfig(variant="acey-deucey", plies=1, visited=0.5)


def test_the_command_counts_the_visited_replies(tmp_path, visited):
    code, out, _ = label(*run_args(tmp_path / "out"), "--json", str(tmp_path / "s.json"))
    assert code == 0, out
    summary = json.loads((tmp_path / "s.json").read_text())
    made = Shard.load(tmp_path / "out" / "tiny" / "shard-00000.npz")
    assert np.array_equal(made.after, visited.after) and np.array_equal(made.role, visited.role)
    count = int(((visited.role & VISITED) > 0).sum())
    assert summary["visited_labels"] == count and summary["labels"] == len(visited.after)
    assert f"({count:,} of the labels visited replies)" in out
