"""The one-sided race evaluator (`vrhcaby.nn.onesided`) and its training
(`vrhcaby.learn.onesided`), against plain recursions over tests/reference.py's move
generator: a side alone, and a whole race of two small sides."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from reference import reference_afterstates

from engine import bearoff
from engine.dice import ROLLS, WEIGHTS
from vrhcaby.learn.onesided import backup
from vrhcaby.nn import bearoff_db, onesided
from vrhcaby.nn.onesided import K, OneSidedRace

ROOT = Path(__file__).resolve().parents[1]
EMPTY = (0,) * 25
SHIPPED = ROOT / "checkpoints" / "onesided-race.pt"


@functools.cache
def _plays(row: tuple[int, ...], roll: tuple[int, int]) -> list[tuple[int, ...]]:
    """One side's plays alone on the board (the reference generator, no opponent)."""
    return sorted(b[1] for b in reference_afterstates((EMPTY, row), roll))


def _shift(d: np.ndarray) -> np.ndarray:
    out = np.zeros(K)
    out[1:] = d[:-1]
    out[-1] += d[-1]
    return out


def _done(row: tuple[int, ...], head: int) -> bool:
    if head == 0:
        return sum(row) == 0
    if head == 1:
        return sum(row) < 15
    return sum(row[18:]) == 0


@functools.cache
def _recursion(row: tuple[int, ...], head: int, database: bool) -> np.ndarray:
    out = np.zeros(K)
    if database and sum(row[6:]) == 0 and head < 2:
        db = bearoff_db.database()
        out[:32] = (db.rolls if head == 0 else db.first)[int(bearoff.index(np.array(row[:6])))]
        return out
    if _done(row, head):
        out[0] = 1.0
        return out
    for (a, b), w in zip(ROLLS, WEIGHTS, strict=True):
        plays = _plays(row, (int(a), int(b)))
        best = min(plays, key=lambda r: _recursion(r, head, database) @ np.arange(K))
        out += w * _shift(_recursion(best, head, database))
    return out


def exact(row: tuple[int, ...], head: int) -> np.ndarray:
    """The distribution (K,) of rolls until `row` is done (head 0: all off, 1: a checker
    off, 2: none in the opponent's home board), each roll's play the one of least mean."""
    return _recursion(row, head, False)


def exact_db(row: tuple[int, ...], head: int) -> np.ndarray:
    """As `exact`, with the bear-off database (itself checked against a plain recursion
    in tests/test_bearoff.py) for the sides at home: fast enough for 15 checkers."""
    return _recursion(row, head, True)


class ExactValuer:
    """`OneSidedRace`'s two methods from the plain recursion."""

    def means(self, rows: np.ndarray) -> np.ndarray:
        return np.array([[exact(tuple(r), h) @ np.arange(K) for h in range(3)] for r in rows])

    def distributions(self, rows: np.ndarray) -> np.ndarray:
        return np.array([[exact(tuple(r), h) for h in range(3)] for r in rows])


def _row(points: dict[int, int]) -> tuple[int, ...]:
    """A side's row from {point (1..24): checkers}."""
    row = [0] * 25
    for point, n in points.items():
        row[point - 1] = n
    return tuple(row)


SMALL_ROWS = [
    _row({9: 1}),
    _row({20: 1, 2: 1}),
    _row({13: 2, 7: 1}),
    _row({22: 1, 6: 1, 1: 1}),
    _row({11: 1, 8: 1, 4: 1}),
]


def test_the_backup_of_the_exact_values_is_exact() -> None:
    rows = np.array(SMALL_ROWS, np.int8)
    targets, reached = backup(ExactValuer(), rows)  # type: ignore[arg-type]
    for row, target in zip(SMALL_ROWS, targets, strict=True):
        for head in (0, 2):
            np.testing.assert_allclose(target[head], exact(row, head), atol=1e-12)
        np.testing.assert_array_equal(target[1], exact(row, 1))  # a checker is off: 0 rolls
    assert reached.shape == (len(rows) * len(ROLLS), 25)


def test_the_backup_of_home_rows_through_the_database_is_the_database() -> None:
    db = bearoff_db.database()
    rng = np.random.default_rng(3)
    index = rng.integers(1, bearoff.N_POSITIONS, 150)
    rows = np.zeros((len(index), 25), np.int8)
    rows[:, :6] = bearoff.POSITIONS[index]
    net = onesided.OneSidedNet(
        np.zeros((8, onesided.INPUTS), np.float32),
        np.zeros(8, np.float32),
        np.zeros((onesided.OUTPUTS, 8), np.float32),
        np.zeros(onesided.OUTPUTS, np.float32),
    )
    targets, _ = backup(OneSidedRace(net), rows)
    np.testing.assert_allclose(targets[:, 0, :32], db.rolls[index], atol=1e-6)
    full = rows.sum(axis=1) == 15
    np.testing.assert_allclose(targets[full, 1, :32], db.first[index[full]], atol=1e-6)


@functools.cache
def race_value(on_roll: tuple[int, ...], mover: tuple[int, ...]) -> np.ndarray:
    """The five probabilities of `mover` (who just moved) in a race, both sides playing
    each roll by least mean rolls to bear off all (`exact`), by plain recursion."""
    if sum(mover) == 0:
        gammon = sum(on_roll) == 15
        backgammon = gammon and sum(on_roll[18:]) > 0
        return np.array([1.0, gammon, backgammon, 0.0, 0.0])
    out = np.zeros(5)
    for (a, b), w in zip(ROLLS, WEIGHTS, strict=True):
        plays = _plays(on_roll, (int(a), int(b)))
        best = min(plays, key=lambda r: exact(r, 0) @ np.arange(K))
        theirs = race_value(mover, best)  # the side on roll's view, after its play
        out += w * np.array([1 - theirs[0], theirs[3], theirs[4], theirs[1], theirs[2]])
    return out


RACES = [
    # (side on roll, side that just moved): gammons and backgammons at stake
    (_row({2: 1, 1: 1}), _row({20: 1, 1: 14})),
    (_row({3: 2}), _row({14: 1, 2: 14})),
    (_row({21: 1, 1: 14}), _row({4: 1, 2: 1})),
]


@pytest.mark.parametrize("on_roll, mover", RACES)
def test_the_combination_is_the_race_of_independent_sides(on_roll, mover) -> None:
    """Where each side's three policies agree (a straggler behind checkers on low points),
    the combined one-sided distributions are the two-sided race exactly."""
    d = {side: [exact(side, h) for h in range(3)] for side in (on_roll, mover)}
    p = bearoff.one_sided_outcome(
        d[on_roll][0], d[on_roll][1], d[mover][0], d[mover][1], d[on_roll][2], d[mover][2]
    )
    np.testing.assert_allclose(p, race_value(on_roll, mover), atol=1e-9)
    assert p[1:].sum() > 0.01  # the cases do test gammons (and the first and last, backgammons)


def test_the_shipped_network_against_the_exact_distributions() -> None:
    """Sides with checkers outside home that the recursion (through the database) values in
    a second: mean rolls within a quarter of a roll, each cumulative distribution within
    0.1. These shapes (a few checkers, or 14 on one point) are rare in the races it was
    trained on, so this is a bound on gross error (an untrained network misses by rolls);
    how well it plays races is bench/judge.py's race column."""
    race = onesided.load(SHIPPED)
    rows = [
        _row({9: 1}),
        _row({13: 2, 7: 1}),
        _row({11: 1, 8: 1, 4: 1}),
        _row({20: 1, 1: 14}),
        _row({14: 1, 2: 14}),
        _row({16: 1, 1: 14}),
        _row({22: 1, 2: 14}),
    ]
    got = race.distributions(np.array(rows, np.int8))
    for row, dist in zip(rows, got, strict=True):
        for head in range(3):
            want = exact_db(row, head)
            assert abs(dist[head] @ np.arange(K) - want @ np.arange(K)) < 0.25, (row, head)
            assert np.abs(np.cumsum(dist[head]) - np.cumsum(want)).max() < 0.1, (row, head)


# --- in a network set -------------------------------------------------------------------

TD80 = ROOT / "checkpoints" / "td-80.pt"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A one-sided race network of random weights (8 hidden units)."""
    rng = np.random.default_rng(5)
    shapes = [(8, onesided.INPUTS), (8,), (onesided.OUTPUTS, 8), (onesided.OUTPUTS,)]
    layers = [rng.normal(0, 0.3, s).astype(np.float32) for s in shapes]
    path = tmp_path_factory.mktemp("onesided") / "tiny.pt"
    return onesided.save(onesided.OneSidedNet(*layers), path, {"name": "tiny"})


def _race_boards() -> np.ndarray:
    """Race afterstates (mover in row 1): a straggler or two, the rest home."""
    boards = np.zeros((3, 2, 25), np.int8)
    boards[:, 0, :6] = [3, 3, 3, 2, 2, 1]
    boards[:, 1, :6] = [2, 3, 3, 3, 2, 1]
    boards[0, 0, 9], boards[2, 0, 7], boards[2, 1, 13] = 1, 1, 1
    boards[1, 0, :6] = [3, 3, 3, 0, 0, 0]  # borne off 6; the mover's straggler on their 4
    boards[1, 1, 20] = 1
    return boards


def test_a_set_answers_its_races_with_the_one_sided_evaluator(tmp_path, tiny, capsys) -> None:
    import vrhcaby.cli.main as cli
    from engine.classify import RACE, classify_boards
    from vrhcaby.nn.net import load_evaluator
    from vrhcaby.nn.netset import NetworkSet

    out = tmp_path / "set.pt"
    assert cli.main(["netset", "--contact", str(TD80), "--race", str(tiny), "--out", str(out)]) == 0
    assert "race one-sided 101-8-123" in capsys.readouterr().out
    made = load_evaluator(out)
    assert isinstance(made, NetworkSet)
    boards = _race_boards()
    assert (classify_boards(boards) == RACE).all()
    want = onesided.load(tiny).probabilities(boards)
    np.testing.assert_array_equal(made.probabilities(boards), want)
    roots = boards[:1]
    np.testing.assert_array_equal(made.probabilities_from(roots, boards, np.zeros(3, int)), want)
    p = want.astype(np.float64)
    assert (p[:, 2] <= p[:, 1] + 1e-7).all() and (p[:, 4] <= p[:, 3] + 1e-7).all()
    assert p[1, 4] > 0 and p[0, 2] == 0  # the mover's checker on 21 can be backgammoned


def test_one_sided_networks_in_the_wrong_place_are_one_line_errors(tmp_path, tiny, capsys):
    import vrhcaby.cli.main as cli
    from vrhcaby.nn.checkpoint import CheckpointError
    from vrhcaby.nn.net import load_evaluator

    out = tmp_path / "set.pt"
    assert cli.main(["netset", "--contact", str(tiny), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "contact" in err and "race class" in err and not out.exists()
    with pytest.raises(CheckpointError, match="answers races only"):
        load_evaluator(tiny)
    arrays, meta = checkpoint_load(tiny)
    arrays["model/2.weight"] = arrays["model/2.weight"][:-1]
    bad = save_raw(tmp_path / "bad.pt", arrays, meta)
    assert cli.main(["netset", "--contact", str(TD80), "--race", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "race" in err and not out.exists()


def checkpoint_load(path: Path):
    from vrhcaby.nn import checkpoint

    return checkpoint.load(path)


def save_raw(path: Path, arrays, meta) -> Path:
    from vrhcaby.nn import checkpoint

    return checkpoint.save(path, arrays, meta)


def test_the_race_kernel_is_the_numpy_combination() -> None:
    rng = np.random.default_rng(11)
    d = rng.dirichlet(np.full(K, 0.3), size=(30, 3)).astype(np.float32)
    d[:5, 1] = d[:5, 2] = 0.0
    d[:5, 1:, 0] = 1.0  # sides with a checker off and none back
    a, b = rng.integers(30, size=200), rng.integers(30, size=200)
    out = np.empty((200, 5), np.float32)
    onesided._race_kernel(d, a, b, out)
    tables = bearoff.side_tables(d[:, 0], d[:, 1], d[:, 2])
    np.testing.assert_allclose(out, bearoff.race_outcome(tables[a], tables[b]), atol=2e-6)


def test_set_runs_refuse_the_one_sided_race_by_name(tmp_path, tiny) -> None:
    """TD trains a set's networks from both sides' values; a distillation fit carries the
    one-sided race instead (tests/test_distill.py)."""
    from vrhcaby.learn.sets import NetSetConfig, assemble, resolve
    from vrhcaby.nn import netset
    from vrhcaby.nn.net import NetConfig

    path = netset.save(
        assemble({"contact": str(TD80), "crashed": "contact", "race": str(tiny)}),
        tmp_path / "set.pt",
    )
    config = NetSetConfig(contact=str(TD80), crashed="contact", race=str(path), train=("contact",))
    with pytest.raises(ValueError, match="one-sided race evaluator"):
        resolve(config, "", NetConfig())


# --- training -----------------------------------------------------------------------------


def _small_cfg(**kw):
    from vrhcaby.learn.onesided import OneSidedConfig

    return OneSidedConfig(**{"hidden": 16, "batch": 64, "back": 0.0, "grow": 0.5, **kw})


@pytest.mark.slow
def test_training_reaches_the_exact_values_of_small_sides() -> None:
    """Fitted value iteration from the database outwards: after ten rounds the network's
    mean rolls of small sides (a few checkers, anywhere) are near the plain recursion's."""
    import torch

    from vrhcaby.learn.onesided import train

    torch.set_num_threads(1)
    rng = np.random.default_rng(2)
    rows = []
    for _ in range(60):
        points = rng.integers(1, 16, size=rng.integers(1, 4))
        row = [0] * 25
        for p in points:
            row[p - 1] += 1
        rows.append(tuple(row))
    cfg = _small_cfg(rounds=10, epochs=200, lr=1e-2, lr_final=1e-3)
    net, history = train(cfg, np.array(rows, np.int8))
    assert len(history) == 10 and history[-1]["mean_change"] < 0.01 < history[1]["mean_change"]
    race = OneSidedRace(net)
    outside = [r for r in rows if sum(r[6:]) > 0]
    got = race.distributions(np.array(outside, np.int8))[:, 0] @ np.arange(K)
    want = np.array([exact(r, 0) @ np.arange(K) for r in outside])
    assert np.abs(got - want).mean() < 0.1, np.abs(got - want).mean()


def test_an_interrupted_run_resumes_to_the_same_network(tmp_path, monkeypatch) -> None:
    import torch

    import vrhcaby.learn.onesided as training

    torch.set_num_threads(1)
    rows = np.array(SMALL_ROWS, np.int8)
    cfg = _small_cfg(rounds=3, epochs=3)
    whole, _ = training.train(cfg, rows)
    partial = tmp_path / "run.partial.npz"
    fit = training.fit
    calls = []

    def stopping_fit(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return fit(*args, **kwargs)

    monkeypatch.setattr(training, "fit", stopping_fit)
    with pytest.raises(KeyboardInterrupt):
        training.train(cfg, rows, partial)
    monkeypatch.setattr(training, "fit", fit)
    resumed, history = training.train(cfg, rows, partial)
    assert [h["round"] for h in history] == [0, 1, 2]
    for a, b in zip(whole.layers(), resumed.layers(), strict=True):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_a_backup_spread_over_processes_is_the_same() -> None:
    from vrhcaby.learn.onesided import spread_backup

    rng = np.random.default_rng(4)
    shapes = [(8, onesided.INPUTS), (8,), (onesided.OUTPUTS, 8), (onesided.OUTPUTS,)]
    net = onesided.OneSidedNet(*[rng.normal(0, 0.3, s).astype(np.float32) for s in shapes])
    rows = np.array(SMALL_ROWS * 3, np.int8)
    one, reached_one = spread_backup(net, rows, 1)
    two, reached_two = spread_backup(net, rows, 2)
    np.testing.assert_allclose(one, two, atol=1e-6)  # batches of other sizes round apart
    np.testing.assert_array_equal(reached_one, reached_two)


def test_small_batches_in_numpy_are_the_kernels(tiny, monkeypatch) -> None:
    """The plain numpy path of a small batch (a one-off hint: no numba loaded) gives the
    kernels' numbers."""
    race = onesided.load(tiny)
    rows = np.array([*SMALL_ROWS, _row({20: 1, 1: 14}), _row({14: 1, 2: 14})], np.int8)
    boards = _race_boards()
    got = {}
    for plain in (True, False):
        monkeypatch.setattr(onesided, "in_numpy", lambda n, plain=plain: plain)
        got[plain] = (
            race.network.means(rows),
            race.network.distributions(rows),
            race.probabilities(boards),
        )
    for a, b in zip(got[True], got[False], strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)
