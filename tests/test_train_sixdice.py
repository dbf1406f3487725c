"""The six-dice game through the project's trainer: the shared λ-returns and learner against
plain references, and `vrhcaby train` runs of the smoke config (checkpoint, agent, resume)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest
import torch

from engine import sixdice as sd
from tests.test_train import Result, one_line_error
from vrhcaby.cli import train
from vrhcaby.learn.config import TDConfig
from vrhcaby.learn.episodes import Episodes
from vrhcaby.learn.learner import Learner
from vrhcaby.learn.returns import lambda_returns
from vrhcaby.learn.trainer import Trainer
from vrhcaby.nn import checkpoint
from vrhcaby.sixdice import learner as st
from vrhcaby.sixdice import players as ag
from vrhcaby.sixdice.specs import load_dice_agent

ROOT = Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "tests" / "configs" / "smoke-sixdice.toml")
NAME = "smoke-sixdice"


def random_round(seed: int, games: int = 3, swept: int = 4) -> tuple[Episodes, dict]:
    """Episodes of random dice games (sheets, points, backups) plus swept sheets, and the
    raw record they were built from."""
    rng = np.random.default_rng(seed)
    turns = 12
    raw = {
        "masks": rng.integers(0, 4096, size=(turns + 1, games)),
        "banks": rng.integers(0, 25, size=(turns + 1, games)),
        "points": rng.integers(0, 40, size=(turns, games)).astype(float),
        "backups": rng.normal(80, 30, size=(turns, games)),
        "swept": (
            rng.integers(1, 4096, size=swept),
            rng.integers(0, 25, size=swept),
            rng.normal(60, 20, size=swept),
        ),
    }
    episodes = st.episodes(raw["masks"], raw["banks"], raw["points"], raw["backups"], raw["swept"])
    return episodes, raw


def forward_view(points: np.ndarray, backups: np.ndarray, end: float, lam: float) -> list:
    """λ-returns of one game by the forward view: weights (1 - λ) λ^k on the expected
    (k+1)-step returns (k realised turns, then the expected backup), the rest on the
    realised total."""
    turns = len(points)
    out = []
    for i in range(turns):
        total = 0.0
        for k in range(turns - i):
            total += (1 - lam) * lam**k * (points[i : i + k].sum() + backups[i + k])
        total += lam ** (turns - i) * (points[i:].sum() + end)
        out.append(total)
    return out


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_shared_lambda_returns_match_the_forward_view_on_dice_games(lam: float) -> None:
    episodes, raw = random_round(0)
    games = raw["points"].shape[1]
    final = np.zeros((episodes.lengths.size, 1))  # a swept sheet has no end
    final[:games, 0] = raw["banks"][-1]
    targets = lambda_returns(
        None,
        None,
        episodes.lengths,
        final,
        lam,
        rewards=episodes.rewards,
        backups=episodes.backups,
        truncated=episodes.truncated,
    )
    for g in range(games):
        want = forward_view(raw["points"][:, g], raw["backups"][:, g], raw["banks"][-1, g], lam)
        np.testing.assert_allclose(targets[:12, g, 0], want, rtol=1e-9)
    # A swept sheet is an episode cut after one state: its target is its own backup.
    np.testing.assert_allclose(targets[0, games:, 0], raw["swept"][2])
    if lam == 1.0:  # Monte Carlo: the realised total from the start
        totals = raw["points"].sum(0) + raw["banks"][-1]
        np.testing.assert_allclose(targets[0, :games, 0], totals)


def test_episodes_mark_what_is_trained() -> None:
    episodes, raw = random_round(1, games=2, swept=3)
    trained = episodes.trained()
    assert trained[:12, :2].all() and not trained[12, :2].any()  # the full sheet: no
    assert trained[0, 2:].all() and not trained[1:, 2:].any()
    assert episodes.plies == 2 * 13
    chosen = episodes.select(np.array([3, 0]))
    assert chosen.states.shape[:2] == (13, 2) and chosen.truncated.tolist() == [True, False]
    np.testing.assert_array_equal(chosen.states[0, 0], [raw["swept"][0][1], raw["swept"][1][1]])


def test_learner_step_on_dice_episodes_matches_a_plain_update() -> None:
    """One SGD step of the shared learner equals a plain one: each trained sheet's value
    moved toward its forward-view λ-return (swept sheets toward their backups)."""
    episodes, raw = random_round(2)
    lam, alpha = 0.4, 0.01
    game = st.SixDice(st.SheetNetConfig(hidden=(6,)))
    torch.manual_seed(3)
    model, reference = game.build_model(), game.build_model()
    reference.load_state_dict(model.state_dict())
    learner = Learner(
        model, torch.optim.SGD(model.parameters(), lr=alpha), game, torch.device("cpu")
    )
    stats = learner.update(episodes, lam)
    sheets, targets = [], []
    for g in range(raw["points"].shape[1]):
        sheets += [(raw["masks"][t, g], raw["banks"][t, g]) for t in range(12)]
        targets += forward_view(raw["points"][:, g], raw["backups"][:, g], raw["banks"][-1, g], lam)
    sheets += list(zip(raw["swept"][0], raw["swept"][1], strict=True))
    targets += list(raw["swept"][2])
    assert stats.positions == len(targets)
    v = reference(torch.tensor(sheets))
    loss = 0.5 * ((torch.tensor(targets, dtype=torch.float32) - v) ** 2).sum() / len(targets)
    loss.backward()
    with torch.no_grad():
        for p in reference.parameters():
            p -= alpha * p.grad
    for (k, a), b in zip(model.state_dict().items(), reference.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6, msg=k)


def test_selfplay_round_records_the_games_and_the_sweep() -> None:
    game = st.SixDice(st.SheetNetConfig(hidden=(8,)))
    torch.manual_seed(0)
    model = game.build_model()
    episodes = game.selfplay(model, torch.device("cpu")).play(3, np.random.default_rng(4))
    played = ~episodes.truncated
    assert played.sum() == 3 and (episodes.lengths[played] == 13).all()
    sheets = episodes.states[:, played]
    assert (sheets[0, :, 0] == sd.ALL_OPEN).all() and (sheets[-1, :, 0] == 0).all()
    opened = np.array([[bin(m).count("1") for m in row] for row in sheets[:, :, 0]])
    assert (opened == np.arange(12, -1, -1)[:, None]).all()  # one category written a turn
    values = st.net_values(model)
    # Each played state's backup is the expectimax of that sheet, as the sweep computes it.
    m, b, t = st.expected_backups(values, sheets[:12, :, 0].ravel())
    lookup = {(int(mm), int(bb)): tt for mm, bb, tt in zip(m, b, t, strict=True)}
    for step in range(12):
        for g in range(3):
            key = (int(sheets[step, g, 0]), int(sheets[step, g, 1]))
            assert episodes.backups[step, g, 0] == pytest.approx(lookup[key])
    # The sweep covers every open-set met or one category away, at every bank it can hold.
    swept = episodes.states[0, ~played]
    met = sheets[:12, :, 0].ravel()
    masks = set(np.unique(np.concatenate([met, st.successors(met)]))) - {0}
    assert set(swept[:, 0].tolist()) == masks
    assert len(swept) == sum(2 * (12 - bin(mm).count("1")) + 1 for mm in masks)


# --- runs of `vrhcaby train` ------------------------------------------------------------


def run_train(tmp_path: Path, *extra: str) -> Result:
    out, err = io.StringIO(), io.StringIO()
    args = [
        "--config",
        SMOKE,
        "--no-progress",
        "--set",
        f"checkpoint_dir={tmp_path / 'ck'}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
        *extra,
    ]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = train.main(args)
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("dice")
    done = run_train(tmp)
    assert done.returncode == 0, done.stderr
    return tmp


def test_smoke_run_writes_a_checkpoint_the_dice_agent_plays(smoke_run: Path) -> None:
    ck = checkpoint.CheckpointDir(smoke_run / "ck", NAME)
    assert [p.name for p in ck.snapshots()] == [f"{NAME}-g000000008.pt", f"{NAME}-g000000012.pt"]
    arrays, meta = checkpoint.load(ck.latest())
    assert meta["game"] == "sixdice" and meta["games"] == 12 and meta["net"]["hidden"] == [16]
    record = meta["evaluation"]
    assert record["games"] == 12 and record["solitaire_games"] == 20
    low, high = record["ci95"]
    assert low < record["mean_total"] < high
    assert record["of_optimum"] == pytest.approx(record["mean_total"] / 182.18, rel=1e-4)
    assert ck.best_path.is_file()
    assert any(Path(meta["run_dir"]).glob("events.out.tfevents.*"))
    agent = load_dice_agent(f"td:{ck.latest()}")
    assert agent.name == f"td:{ck.latest()}"
    game = ag.play_game([agent], np.random.default_rng(0))
    assert game.over and game.sheets[0].full
    # The agent values sheets by the stored weights: a full sheet is worth its bank.
    values = st.net_values(st.load_net(ck.latest()))
    assert values(np.array([0, 0]), np.array([0, 7])).tolist() == [0.0, 7.0]
    weights = {k: v for k, v in arrays.items() if k.startswith("model/")}
    net = st.load_net(ck.latest())
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), weights[f"model/{k}"])
    with pytest.raises(sd.RuleError, match="standard game"):
        load_dice_agent(f"td:{ck.latest()}", harsh=True)
    with pytest.raises(ValueError, match="not a six-dice checkpoint"):
        load_dice_agent(f"td:{ROOT / 'checkpoints' / 'td-best.pt'}")
    other = smoke_run / "other.pt"
    other.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a readable"):
        load_dice_agent(f"td:{other}")


def test_resume_continues_to_the_same_weights(tmp_path: Path, smoke_run: Path) -> None:
    first = run_train(tmp_path)
    assert first.returncode == 0, first.stderr
    ck = checkpoint.CheckpointDir(tmp_path / "ck", NAME)
    ck.latest().unlink()  # as if stopped after 8 games
    resumed = run_train(tmp_path, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "at 8 games" in resumed.stdout
    got = checkpoint.load(ck.latest())[0]
    want = checkpoint.load(checkpoint.CheckpointDir(smoke_run / "ck", NAME).latest())[0]
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def test_bad_game_settings_are_one_line_errors(tmp_path: Path, smoke_run: Path) -> None:
    one_line_error(run_train(tmp_path, "--set", "game=chess"), "unknown game 'chess'")
    one_line_error(run_train(tmp_path, "--set", "variant=nackgammon"), "standard")
    one_line_error(run_train(tmp_path, "--backend", "ray"), "backgammon only")
    backgammon = [
        "--set",
        "game=backgammon",
        "--set",
        f"checkpoint_dir={smoke_run / 'ck'}",
        "--set",
        f"runs_dir={tmp_path / 'r'}",
        "--resume",
    ]
    one_line_error(run_train(tmp_path, *backgammon), "checkpoint learnt 'sixdice'")


def test_a_trainer_round_learns_and_cuda_is_refused() -> None:
    td = TDConfig(batch_games=2, games_per_update=64, optimizer="adam", lr=1e-3, lr_end=1e-3)
    game = st.SixDice(st.SheetNetConfig(hidden=(4,)))
    trainer = Trainer.for_game(game, td, 2, 1, torch.device("cpu"))
    before = {k: v.copy() for k, v in trainer.weights().items()}
    stats = trainer.round()
    assert stats.games == 2 and stats.plies == 26 and stats.gammon_rate is None
    assert 0 < stats.charts["mean_total"] < 400 and stats.update.positions > 24
    assert all(not np.array_equal(v, trainer.weights()[k]) for k, v in before.items())
    with pytest.raises(ValueError, match="CPU"):
        game.selfplay(trainer.model, torch.device("meta"))
