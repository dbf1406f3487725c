"""The bear-off databases: against a plain recursive reference written from the rules, and
against GNU Backgammon's own databases (`gnubg_nn`)."""

from __future__ import annotations

import functools
import shutil

import numpy as np
import pytest

from engine import bearoff
from engine.classify import BEAROFF1, BEAROFF2, classify_boards
from vrhcaby.equity.outcomes import invert
from vrhcaby.nn import bearoff_db

ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]


def weight(roll: tuple[int, int]) -> float:
    return (1 if roll[0] == roll[1] else 2) / 36


# --- a plain reference: plays, expected rolls, two-sided values by recursion ------------


@functools.cache
def one_die(pos: tuple[int, ...], die: int) -> set[tuple[int, ...]]:
    """Positions one die can reach: move a checker down, bear off from the die's point, or
    from the highest point when the die is larger (RULES.md §1)."""
    top = max(i + 1 for i in range(6) if pos[i])
    out = set()
    for point in range(1, 7):
        if not pos[point - 1]:
            continue
        new = list(pos)
        new[point - 1] -= 1
        if point - die >= 1:
            new[point - die - 1] += 1
        elif not (point == die or (die > point and point == top)):
            continue
        out.add(tuple(new))
    return out


@functools.cache
def plays(pos: tuple[int, ...], roll: tuple[int, int]) -> frozenset[tuple[int, ...]]:
    """Every position a roll can reach (in a bear-off every die can be played)."""
    orders = [roll[:1] * 4] if roll[0] == roll[1] else [roll, roll[::-1]]
    out = set()
    for order in orders:
        frontier = {pos}
        for die in order:
            frontier = set().union(*(one_die(p, die) if sum(p) else {p} for p in frontier))
        out |= frontier
    return frozenset(out)


@functools.cache
def mean_rolls(pos: tuple[int, ...]) -> float:
    if not sum(pos):
        return 0.0
    return 1 + sum(weight(r) * min(mean_rolls(s) for s in plays(pos, r)) for r in ROLLS)


@functools.cache
def mean_first(pos: tuple[int, ...]) -> float:
    if sum(pos) < 15:
        return 0.0
    return 1 + sum(weight(r) * min(mean_first(s) for s in plays(pos, r)) for r in ROLLS)


@functools.cache
def p_win(me: tuple[int, ...], them: tuple[int, ...]) -> float:
    """Cubeless P(the side on roll wins)."""
    return sum(
        weight(r) * max(1.0 if not sum(s) else 1 - p_win(them, s) for s in plays(me, r))
        for r in ROLLS
    )


@functools.cache
def cubeful(me: tuple[int, ...], them: tuple[int, ...], cube: str) -> float:
    """Money equity of the side on roll for cube 1, cube "centre", "me" or "opponent":
    it doubles when that gains, and the opponent passes when taking loses more."""
    seen_by_them = {"centre": "centre", "me": "opponent", "opponent": "me"}[cube]

    def after(s: tuple[int, ...]) -> float:
        return 1.0 if not sum(s) else -cubeful(them, s, seen_by_them)

    no_double = sum(weight(r) * max(after(s) for s in plays(me, r)) for r in ROLLS)
    if cube == "opponent":
        return no_double
    take = 2 * cubeful(me, them, "opponent")
    return max(no_double, min(take, 1.0))


@pytest.fixture(scope="module")
def db() -> bearoff_db.BearoffDB:
    return bearoff_db.database()


def sample(rng: np.random.Generator, n: int, most: int) -> list[tuple[int, ...]]:
    rows = bearoff.POSITIONS[1:][bearoff.POSITIONS[1:].sum(axis=1) <= most]
    return [tuple(int(c) for c in rows[k]) for k in rng.choice(len(rows), n, replace=False)]


def test_indices_number_every_position_once() -> None:
    assert bearoff.N_POSITIONS == 54264 and bearoff.N_SMALL == 924
    np.testing.assert_array_equal(bearoff.index(bearoff.POSITIONS), np.arange(54264))
    assert (bearoff.POSITIONS[:924].sum(axis=1) <= 6).all()
    with pytest.raises(ValueError, match="15 checkers at most"):
        bearoff.index([5, 5, 5, 1, 0, 0])


def test_one_sided_against_the_recursive_reference(db) -> None:
    rng = np.random.default_rng(1)
    positions = [*sample(rng, 60, 8), (8, 7, 0, 0, 0, 0), (3, 3, 3, 3, 3, 0), (0, 0, 0, 0, 0, 1)]
    idx = bearoff.index(np.array(positions))
    got_rolls = db.rolls[idx] @ np.arange(32)
    got_first = db.first[idx] @ np.arange(32)
    np.testing.assert_allclose(got_rolls, [mean_rolls(p) for p in positions], atol=2e-5)
    np.testing.assert_allclose(got_first, [mean_first(p) for p in positions], atol=2e-5)
    np.testing.assert_allclose(db.rolls.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(db.first.sum(axis=1), 1.0, atol=1e-5)
    # one checker on the 6-point: off at once unless the roll moves it fewer than 6 pips
    np.testing.assert_allclose(
        db.rolls[bearoff.index([0, 0, 0, 0, 0, 1]), :3], [0, 27 / 36, 9 / 36]
    )


def test_two_sided_against_the_recursive_reference(db) -> None:
    rng = np.random.default_rng(2)
    small = sample(rng, 40, 3)
    pairs = [(a, b) for a in small[:20] for b in small[20:]]
    i = bearoff.index(np.array([a for a, _ in pairs]))
    j = bearoff.index(np.array([b for _, b in pairs]))
    np.testing.assert_allclose(db.win[i, j], [p_win(a, b) for a, b in pairs], atol=1e-6)
    for name, cube in (("centred", "centre"), ("owned", "me"), ("theirs", "opponent")):
        want = [cubeful(a, b, cube) for a, b in pairs]
        np.testing.assert_allclose(getattr(db, name)[i, j], want, atol=1e-6)
    boards = np.zeros((len(pairs), 2, 25), np.int8)
    boards[:, 1, :6], boards[:, 0, :6] = bearoff.POSITIONS[i], bearoff.POSITIONS[j]
    np.testing.assert_allclose(db.cubeful(boards, "me"), db.owned[i, j])
    with pytest.raises(ValueError, match="cube must be"):
        db.cubeful(boards, "nobody")


def test_one_sided_agrees_with_gnubg() -> None:
    gnubg_nn = pytest.importorskip("gnubg_nn")
    db = bearoff_db.database()
    theirs = np.zeros((bearoff.N_POSITIONS, 32))
    theirs[0, 0] = 1.0
    for k in range(1, bearoff.N_POSITIONS):
        p = gnubg_nn.bearoff_probabilities(tuple(int(c) for c in bearoff.POSITIONS[k]))
        theirs[k, 1 : 1 + len(p)] = p  # gnubg's entry n is n + 1 rolls
    diff = np.abs(theirs - db.rolls)
    # gnubg stores 16-bit fixed point; ties between equally fast plays are broken apart
    assert diff.mean() < 5e-6 and diff.max() < 5e-3
    means = np.abs(theirs @ np.arange(32) - db.rolls @ np.arange(32))
    assert means.max() < 1e-3


def test_race_probabilities_agree_with_gnubg(db) -> None:
    gnubg_nn = pytest.importorskip("gnubg_nn")
    rng = np.random.default_rng(3)
    pairs = np.concatenate(
        [
            rng.integers(1, bearoff.N_SMALL, (1000, 2)),
            rng.integers(1, bearoff.N_POSITIONS, (1000, 2)),
        ]
    )
    boards = np.zeros((len(pairs), 2, 25), np.int8)  # the side on roll in row 1
    boards[:, 1, :6], boards[:, 0, :6] = (
        bearoff.POSITIONS[pairs[:, 0]],
        bearoff.POSITIONS[pairs[:, 1]],
    )
    theirs = np.array([gnubg_nn.probabilities(b.tolist(), 0) for b in boards])
    ours = invert(db.probabilities(boards[:, ::-1]))  # afterstates: the mover in row 1
    classes = classify_boards(boards)
    small = classes == BEAROFF2
    assert small.sum() >= 1000 and (classes[~small] == BEAROFF1).all()
    assert np.abs(theirs[small] - ours[small]).max() < 1e-4  # exact against exact
    assert (ours[small, 1:] == 0).all()  # at least 9 off a side: no gammons
    big = np.abs(theirs[~small] - ours[~small])
    assert big.max() < 2e-3 and big.mean() < 1e-4
    with pytest.raises(ValueError, match="every checker home"):
        db.probabilities(_outside())


def _outside() -> np.ndarray:
    b = np.zeros((1, 2, 25), np.int8)
    b[0, 1, 7] = 1
    b[0, 0, 0] = 1
    return b


@pytest.mark.slow  # two rebuilds
def test_a_damaged_cache_is_rebuilt(tmp_path, db, caplog) -> None:
    path = tmp_path / "bearoff.npz"
    shutil.copy(bearoff_db.path(), path)
    with np.load(path) as data:
        arrays = dict(data)
    arrays["win"][5, 7] += 0.25  # a flipped value under the old checksum
    np.savez(path, **arrays)
    again = bearoff_db.load(path)
    assert "corrupt" in caplog.text and str(path) in caplog.text
    np.testing.assert_array_equal(again.win, db.win)
    assert bearoff_db._read(path) is not None  # the rebuilt file is whole again
    path.write_bytes(b"not a database")
    caplog.clear()
    np.testing.assert_array_equal(bearoff_db.load(path).rolls, db.rolls)
    assert "unreadable" in caplog.text
