"""The trainer on every variant: start layouts, acey-deucey's waiting checkers and extra
turns, and λ-returns across turns that stay with the same side, against plain references."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest
import torch

import engine
from engine.acey_deucey import (
    batch_afterstates_ad,
    batch_bonus_ad,
    game_value_ad,
    start_boards_ad,
)
from tests.test_encode import rich_reference, tesauro_reference
from vrhcaby.base.config import load_config
from vrhcaby.cli import train
from vrhcaby.equity.outcomes import equity, invert, outcome
from vrhcaby.learn.backgammon import Backgammon
from vrhcaby.learn.config import TDConfig
from vrhcaby.learn.episodes import Episodes
from vrhcaby.learn.learner import Learner
from vrhcaby.learn.returns import lambda_returns
from vrhcaby.learn.selfplay import SelfPlay, start_boards, variant_net, weights_from_model
from vrhcaby.learn.trainer import Trainer
from vrhcaby.nn import checkpoint
from vrhcaby.nn.encode import encode_rich, encode_variant, variant_units, waiting_on_bar
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, joint, load_evaluator

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "tests" / "configs" / "smoke.toml")
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)])


def layout_board(layout: dict[int, int]) -> np.ndarray:
    """A (2, 25) board with both sides on `layout` ({point: checkers}, own view)."""
    board = np.zeros((2, 25), np.int8)
    for point, n in layout.items():
        board[:, point - 1] = n
    return board


# The layouts as RULES.md and GNU Backgammon give them, written out independently.
LAYOUTS = {
    "standard": layout_board({24: 2, 13: 5, 8: 3, 6: 5}),
    "nackgammon": layout_board({24: 2, 23: 2, 13: 4, 8: 3, 6: 4}),
    "nackgammon-seed": layout_board({24: 4, 23: 1, 13: 2, 8: 3, 6: 5}),
}


def random_ad_positions(n_games: int, plies: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Acey-deucey boards (mover in row 1) met in random games, and their extra-turn flags."""
    rng = np.random.default_rng(seed)
    boards = start_boards_ad(n_games)
    seen, flags = [], []
    for _ in range(plies):
        after, parent, extra = batch_afterstates_ad(boards, engine.roll_dice(rng, len(boards)))
        counts = np.bincount(parent, minlength=len(boards))
        keep = counts > 0
        first = np.cumsum(counts) - counts
        pick = first[keep] + (rng.random(int(keep.sum())) * counts[keep]).astype(int)
        seen.append(after[pick])
        flags.append(extra[pick])
        live = game_value_ad(after[pick]) == 0
        nxt = after[pick][live]
        boards = np.where(extra[pick][live, None, None], nxt, nxt[:, ::-1])
        if not len(boards):
            break
    return np.concatenate(seen), np.concatenate(flags)


# --- start layouts and nackgammon ----------------------------------------------------


@pytest.mark.parametrize("variant", sorted(LAYOUTS))
def test_start_boards_are_the_variant_layouts(variant: str) -> None:
    np.testing.assert_array_equal(start_boards(variant, 3), np.stack([LAYOUTS[variant]] * 3))


def test_acey_deucey_starts_with_every_checker_waiting() -> None:
    boards = start_boards("acey-deucey", 2)
    assert boards.shape == (2, 2, 26)
    assert (boards[:, :, :25] == 0).all() and (boards[:, :, 25] == 15).all()


def test_nackgammon_training_run_starts_from_its_layout() -> None:
    cfg = load_config(train.TrainConfig, SMOKE, ["variant=nackgammon", "games=192"])
    trainer = Trainer(cfg.net, cfg.td, cfg.variant, cfg.games, cfg.seed, torch.device("cpu"))
    start = LAYOUTS["nackgammon"]
    rolls = ROLLS[ROLLS[:, 0] != ROLLS[:, 1]]
    openings = engine.batch_afterstates(np.stack([start] * len(rolls)), rolls)[0]
    firsts = []
    play = trainer.selfplay.play

    def recording(n: int, rng: np.random.Generator, epsilon: float = 0.0) -> Episodes:
        episodes = play(n, rng, epsilon)
        firsts.append(episodes.states[0])
        return episodes

    trainer.selfplay.play = recording  # type: ignore[method-assign]
    while trainer.games < cfg.games:
        stats = trainer.round()
        assert 0 <= stats.gammon_rate <= 1 and np.isfinite(stats.update.loss)
    assert trainer.games == 192 and sum(len(f) for f in firsts) == 192
    for first in np.concatenate(firsts):
        # The opener's afterstate is one of nackgammon's openings; nothing was hit.
        assert (first[0] == start[0]).all()
        assert (openings == first).all(axis=(1, 2)).any()
    _, meta = trainer.state()
    assert meta["variant"] == "nackgammon"
    other = Trainer(cfg.net, cfg.td, "standard", cfg.games, cfg.seed, torch.device("cpu"))
    with pytest.raises(ValueError, match="nackgammon"):
        other.load_state(*trainer.state())


# --- the acey-deucey encoding and evaluator -----------------------------------------


def variant_reference(board: np.ndarray, extra: bool, encoding: str = "tesauro") -> list[float]:
    """The encoding's units with waiting checkers counted on the bar, then the three variant
    units, one board at a time."""
    plain = board[:, :25].astype(int).copy()
    plain[:, 24] += board[:, 25]
    units = tesauro_reference(plain)
    if encoding == "rich":
        units += rich_reference(plain)
    return [*units, board[0, 25] / 15, board[1, 25] / 15, float(extra)]


def inputs_reference(boards: np.ndarray, flags: np.ndarray, encoding: str) -> torch.Tensor:
    rows = [variant_reference(b, bool(f), encoding) for b, f in zip(boards, flags, strict=True)]
    return torch.tensor(rows, dtype=torch.float32)


def test_variant_encoding_matches_reference() -> None:
    boards, flags = random_ad_positions(6, 80, seed=1)
    assert boards[:, :, 25].any() and flags.any()  # waiting checkers and extra turns met
    sample = np.concatenate([start_boards_ad(1), boards[::9]])
    extra = np.concatenate([[True], flags[::9]])
    got = encode_variant("tesauro", sample, extra)
    assert got.shape == (len(sample), 201)
    for board, e, row in zip(sample, extra, got, strict=True):
        np.testing.assert_allclose(row, variant_reference(board, bool(e)), atol=1e-6)
    units = variant_units(sample, extra)
    np.testing.assert_allclose(units[:, :2] * 15, sample[:, :, 25], atol=1e-5)
    np.testing.assert_array_equal(variant_units(sample)[:, 2], 0)
    rich = encode_variant("rich", sample, extra)
    np.testing.assert_array_equal(rich[:, :214], encode_rich(waiting_on_bar(sample)))
    with pytest.raises(ValueError, match="26"):
        encode_variant("tesauro", sample[:, :, :25])


@pytest.mark.parametrize(("encoding", "activation"), [("tesauro", "sigmoid"), ("rich", "tanh")])
def test_acey_deucey_evaluator_matches_torch(encoding: str, activation: str) -> None:
    torch.manual_seed(2)
    net = NetConfig(encoding=encoding, hidden=(7, 4), activation=activation, variant_inputs=True)
    model = build_model(net)
    evaluator = Evaluator(net, weights_from_model(model), "acey-deucey")
    roots = random_ad_positions(4, 60, seed=3)[0][::5][:, ::-1].copy()
    after, parent, extra = batch_afterstates_ad(
        roots, engine.roll_dice(np.random.default_rng(4), len(roots))
    )
    flagged = np.flatnonzero(extra)
    keep = np.union1d(
        np.arange(0, len(after), len(after) // 100 + 1), flagged[:: len(flagged) // 20 + 1]
    )
    after, parent, extra = after[keep], parent[keep], extra[keep]
    assert extra.any() and after[:, :, 25].any()
    with torch.no_grad():
        expected = joint(model(inputs_reference(after, extra, encoding))).numpy()
    np.testing.assert_allclose(evaluator.probabilities(after, extra), expected, atol=2e-5)
    fast = evaluator.probabilities_from(roots, after, parent, extra)
    np.testing.assert_allclose(fast, expected, atol=2e-5)
    with pytest.raises(ValueError, match="26"):
        evaluator.probabilities(after[:, :, :25])


def test_standard_networks_are_unchanged() -> None:
    net = NetConfig()
    assert net.to_dict() == {"encoding": "tesauro", "hidden": [80], "activation": "sigmoid"}
    assert NetConfig.from_dict(net.to_dict()) == net and net.inputs == 198
    ad = variant_net(net, "acey-deucey")
    assert ad.variant_inputs and ad.inputs == 201 and NetConfig.from_dict(ad.to_dict()) == ad
    with pytest.raises(ValueError, match="variant_inputs"):
        variant_net(ad, "nackgammon")
    evaluator = Evaluator(net, weights_from_model(build_model(net)))
    with pytest.raises(ValueError, match="extra_turn"):
        evaluator.probabilities(np.stack([LAYOUTS["standard"]]), np.array([True]))


# --- acey-deucey self-play -------------------------------------------------------------


def test_acey_deucey_selfplay_follows_the_rules() -> None:
    """Every afterstate is an outcome (position and extra roll) of some roll of the board
    before it: the previous afterstate itself after an extra turn, else flipped."""
    torch.manual_seed(5)
    net = NetConfig(hidden=(6,), variant_inputs=True)
    selfplay = SelfPlay(build_model(net), net, "acey-deucey", torch.device("cpu"))
    episodes = selfplay.play(2, np.random.default_rng(6))
    extra = episodes.extra_turns()
    assert extra.any()
    for g, n in enumerate(episodes.lengths):
        states, movers = episodes.states[:n, g], episodes.movers[:n, g]
        assert (game_value_ad(states[:-1]) == 0).all()
        assert game_value_ad(states[-1:])[0] == episodes.values[g] in (1, 2, 3)
        again = movers[1:] == movers[:-1]
        np.testing.assert_array_equal(extra[: n - 1, g], again)
        before = np.concatenate(
            [start_boards_ad(1), np.where(again[:, None, None], states[:-1], states[:-1, ::-1])]
        )
        flags = np.append(again, False)
        # Every roll but the 1-2 bonus: rows flagged False are whole turns.
        rolls = ROLLS[ROLLS[:, 0] <= ROLLS[:, 1]]
        boards = np.repeat(before, len(rolls), axis=0)
        after, parent, due = batch_afterstates_ad(boards, np.tile(rolls, (n, 1)), bonus=False)
        owner = parent // len(rolls)
        bonus_turns = 0
        for t in range(n):
            rows = (owner == t) & ~due
            if (after[rows] == states[t]).all(axis=(1, 2)).any() and not flags[t]:
                continue
            if (states[t] == before[t]).all() and not flags[t]:
                continue  # no legal play
            # Otherwise a 1-2 with its bonus double, as a whole turn.
            whole, _, extra_turn = batch_afterstates_ad(before[t][None], np.array([[1, 2]]))
            match = (whole == states[t]).all(axis=(1, 2)) & (extra_turn == flags[t])
            assert match.any(), (g, t)
            bonus_turns += 1
        assert bonus_turns >= again.sum() > 0


def test_torch_and_numpy_scoring_agree_on_both_stages() -> None:
    """Off the CPU self-play scores with the torch model: the same equities, flags included."""
    torch.manual_seed(13)
    net = NetConfig(hidden=(6,), variant_inputs=True)
    model = build_model(net)
    selfplay = SelfPlay(model, net, "acey-deucey", torch.device("cpu"))
    evaluator = Evaluator(net, weights_from_model(model), "acey-deucey")
    roots = random_ad_positions(3, 200, seed=14)[0][-60::6][:, ::-1].copy()
    dice = engine.roll_dice(np.random.default_rng(15), len(roots))
    dice[::2] = (1, 2)
    after, parent, due = batch_afterstates_ad(roots, dice, bonus=False)
    bonus, bonus_parent, extra = batch_bonus_ad(after[due][::7])
    assert due.any() and not due.all() and extra.any()
    for base, rows, owner, flags in (
        (roots, after, parent, due),
        (after[due][::7], bonus, bonus_parent, extra),
    ):
        expected = equity(evaluator.probabilities_from(base, rows, owner, flags))
        np.testing.assert_allclose(selfplay._torch_equities(rows, flags), expected, atol=1e-5)


# --- λ-returns with turns that stay with the same side -------------------------------


def lambda_reference(values, movers, length, final, lam):
    """The λ-return as the weighted sum of n-step returns, each seen from the side that
    made the afterstate (by side identity, not step by step)."""
    out = np.zeros((length - 1, 5))

    def view(p, owner, viewer):
        return p if owner == viewer else invert(p)

    for t in range(length - 1):
        steps = length - 1 - t
        total = np.zeros(5)
        for n in range(1, steps):
            total += (1 - lam) * lam ** (n - 1) * view(values[t + n], movers[t + n], movers[t])
        total += lam ** (steps - 1) * view(final, movers[length - 1], movers[t])
        out[t] = total
    return out


@pytest.mark.parametrize("lam", [0.0, 0.35, 0.8, 1.0])
def test_lambda_returns_with_bonus_turns_match_reference(lam: float) -> None:
    rng = np.random.default_rng(7)
    lengths = np.array([9, 2, 6, 12])
    steps, games = int(lengths.max()), len(lengths)
    values = joint(rng.random((steps, games, 5))).astype(np.float64)
    movers = np.zeros((steps, games), np.int8)
    for g in range(games):  # alternate, but stay with the same side about a third of the time
        for t in range(1, steps):
            movers[t, g] = movers[t - 1, g] if rng.random() < 0.35 else 1 - movers[t - 1, g]
    assert (movers[1:] == movers[:-1]).any()
    results = np.array([2, 1, 3, 1])
    episodes = Episodes(np.zeros((steps, games, 2, 26), np.int8), movers, lengths, results, 0)
    same = np.zeros((steps, games), bool)
    same[:-1] = movers[1:] == movers[:-1]
    got = lambda_returns(values, same, lengths, outcome(results), lam)
    for g, n in enumerate(lengths):
        expected = lambda_reference(values[:, g], movers[:, g], n, outcome(results[g]), lam)
        np.testing.assert_allclose(got[: n - 1, g], expected, atol=1e-9)
        np.testing.assert_array_equal(episodes.extra_turns()[: n - 1, g], same[: n - 1, g])
        assert not episodes.extra_turns()[n - 1 :, g].any()


def test_learner_sees_extra_turns_and_matches_a_plain_update() -> None:
    """One SGD step of the learner on acey-deucey episodes equals a plain one: reference
    inputs (the extra-turn unit set where the same side moves next), reference λ-returns."""
    rng = np.random.default_rng(10)
    pool = random_ad_positions(4, 40, seed=11)[0]
    lengths = np.array([7, 3, 10])
    steps, games = int(lengths.max()), len(lengths)
    states = pool[rng.choice(len(pool), (steps, games), replace=False)]
    movers = np.zeros((steps, games), np.int8)
    for t in range(1, steps):
        movers[t] = np.where(rng.random(games) < 0.4, movers[t - 1], 1 - movers[t - 1])
    results = np.array([1, 3, 2], np.int8)
    episodes = Episodes(states, movers, lengths, results, 0)
    lam, alpha = 0.6, 0.3
    torch.manual_seed(12)
    net = NetConfig(hidden=(5,), variant_inputs=True)
    model, reference = build_model(net), build_model(net)
    reference.load_state_dict(model.state_dict())
    sgd = torch.optim.SGD(model.parameters(), lr=alpha)
    learner = Learner(model, sgd, Backgammon(net, "acey-deucey"), torch.device("cpu"))
    learner.update(episodes, lam)
    total = torch.zeros(())
    n = 0
    for g, length in enumerate(lengths):
        flags = [bool(movers[t + 1, g] == movers[t, g]) for t in range(length - 1)] + [False]
        assert len(flags) == length
        p = joint(reference(inputs_reference(states[:length, g], np.array(flags), "tesauro")))
        targets = lambda_reference(
            p.detach().numpy().astype(np.float64), movers[:, g], length, outcome(results[g]), lam
        )
        diff = torch.from_numpy(targets).float() - p[: length - 1]
        total = total + 0.5 * (diff * diff).sum()
        n += length - 1
    (total / n).backward()
    with torch.no_grad():
        for p in reference.parameters():
            p -= alpha * p.grad
    for (k, a), b in zip(model.state_dict().items(), reference.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6, msg=k)


# --- training runs ---------------------------------------------------------------------


def test_acey_deucey_trainer_learns_from_finished_games() -> None:
    td = TDConfig(batch_games=8, games_per_update=4)
    trainer = Trainer(NetConfig(hidden=(5,)), td, "acey-deucey", 8, 3, torch.device("cpu"))
    assert trainer.net.variant_inputs
    before = trainer.weights()
    stats = trainer.round()
    assert stats.games == 8 and stats.update.positions == stats.plies - 8
    changed = [k for k, v in trainer.weights().items() if not np.array_equal(v, before[k])]
    assert changed
    episodes = trainer.selfplay.play(4, np.random.default_rng(8))
    assert set(episodes.values.tolist()) <= {1, 2, 3} and (episodes.lengths > 15).all()


def test_train_py_runs_acey_deucey_and_saves_a_loadable_checkpoint(tmp_path: Path) -> None:
    args = [
        "--config",
        SMOKE,
        "--no-progress",
        "--set",
        "variant=acey-deucey",
        "--set",
        "games=32",
        "--set",
        f"checkpoint_dir={tmp_path / 'ck'}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
    ]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert train.main(args) == 0, err.getvalue()
    path = checkpoint.CheckpointDir(tmp_path / "ck", "smoke").latest()
    evaluator = load_evaluator(path)
    assert evaluator.variant == "acey-deucey" and evaluator.net.variant_inputs
    arrays, meta = checkpoint.load(path)
    assert meta["variant"] == "acey-deucey" and meta["games"] == 32
    model = build_model(evaluator.net)
    model.load_state_dict(
        {k[6:]: torch.from_numpy(v) for k, v in arrays.items() if k.startswith("model/")}
    )
    boards, flags = random_ad_positions(3, 40, seed=9)
    with torch.no_grad():
        expected = joint(model(inputs_reference(boards, flags, "tesauro"))).numpy()
    got = evaluator.probabilities(boards, flags)
    np.testing.assert_allclose(got, expected, atol=2e-5)
    assert np.isfinite(equity(got)).all()
