"""Batched TD(λ) self-play: many games in lockstep, one forward pass per ply.

Self-play. A *round* starts `batch_games` games together. Each ply, every unfinished
game rolls, `engine.batch_afterstates` lists all its resulting positions, the positions
of all games are encoded and evaluated in one forward pass, and each game takes the
afterstate with the highest money equity for the mover (0-ply greedy; with probability
ε a uniformly random one instead). Both sides use the same network. A side with no
legal play "moves" to its own position, so every ply stores one afterstate.

Learning: the λ-return formulation over finished games, not online eligibility traces.
After a round, its games are split into updates of `games_per_update` games. For each,
one forward pass (with gradients) evaluates every afterstate of those games; the λ-return
targets are built backwards from the final result using those same (detached) values,

    G_t = F_t((1 - λ) P_{t+1} + λ G_{t+1}),   G_{last} = final result,

where F_t is `net.invert` when the next afterstate belongs to the other side (and the
identity otherwise); and one optimizer step lowers the mean of ½‖G_t - P_t‖². With plain
SGD this equals offline TD(λ) with Tesauro's eligibility traces (weights held fixed over
the games, updates summed) exactly, which `tests/test_td.py` checks against a
one-game-at-a-time trace implementation. Why this form: it needs one ordinary batched
backward pass per update, where per-game online traces need a per-game, per-output copy
of every weight (five times the network per game in flight) and a per-sample gradient
every ply. λ = 0 gives TD(0) targets (the next value), λ = 1 Monte-Carlo targets (the
final result); the same code path serves both.

Variants. Nackgammon and its seeded form differ only in the starting layout. Acey-deucey
boards are (2, 26), with each side's waiting checkers in column 25, and its network has
the variant inputs (`NetConfig.variant_inputs`, which the trainer sets for it), one of
which says that the mover rolls again. A 1-2 is chosen in two stages, each greedily: the
play of the 1 and the 2 (scored as an afterstate whose mover moves again when the bonus is
due), then the double and its play (`engine.acey_deucey.batch_bonus_ad`). After a turn
that earns another roll the next position is the afterstate itself, not flipped, and its
λ-return target is the next value without a change of view.

Other games. The trainer learns any game given as a `Game` (self-play episodes, the
network and its inputs, the value of a finished game, the evaluation): `Backgammon` here,
the six-dice scoring game in `vrhcaby.sixdice.learner`. The same `lambda_returns` serves both:
it also takes per-step rewards (points written each turn of the dice game) and expected
one-step backups computed during play in place of the sampled next value, and a game can
be cut short (`truncated`: its last state is then trained on its one-step backup).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import torch

import engine
from agents.search import every_roll
from engine.acey_deucey import (
    batch_afterstates_ad,
    batch_bonus_ad,
    game_value_ad,
    start_boards_ad,
)
from vrhcaby.nn.encode import extends
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import Evaluator, NetConfig, build_model, equity, invert, joint, outcome
from vrhcaby.play.judge import CLASSES, Judged, judged_games

OPTIMIZERS = ("sgd", "adam")
MAX_LR = 10.0
"""The largest learning rate taken: far above any that learns (0.1 for SGD, 0.002 for
Adam here), and far below those that overflow torch's float32 step at once."""
BACKUPS = ("sampled", "expected")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TDConfig:
    """How self-play is batched and how the network learns from it."""

    batch_games: int = 512
    """Games started together and advanced in lockstep in each self-play round."""
    games_per_update: int = 128
    """Finished games per optimizer step (a round makes batch_games / this many steps)."""
    lam: float = 0.7
    """Trace decay λ at the start of the run (0 = TD(0), 1 = Monte Carlo)."""
    lam_end: float = 0.7
    """λ at the end of the run; in between it moves linearly with games played."""
    lr: float = 0.1
    """Learning rate at the start of the run (at most `MAX_LR`)."""
    lr_end: float = 0.1
    """Learning rate at the end of the run; in between it moves linearly."""
    optimizer: str = "sgd"
    """sgd (Tesauro's plain gradient step) or adam."""
    epsilon: float = 0.0
    """Probability of a uniformly random play instead of the greedy one (exploration)."""
    epochs: int = 1
    """Passes over each round's episodes."""
    shuffle: bool = False
    """Visit a round's episodes in a random order each pass (drawn from torch's generator,
    so the self-play dice stay the same), not in the order they were played."""
    backup: str = "sampled"
    """What a backgammon position backs up from: "sampled", the position the game reached
    next (Tesauro's TD), or "expected", the average over the 21 rolls of the opponent's best
    reply (the position's one-ply value; about 20 times the network evaluations per ply).
    The six-dice game always backs up expected values."""

    def __post_init__(self) -> None:
        if self.batch_games < 1 or self.games_per_update < 1 or self.epochs < 1:
            raise ValueError("batch_games, games_per_update and epochs must be at least 1")
        for name in ("lam", "lam_end", "epsilon"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if not (0 < self.lr <= MAX_LR and 0 < self.lr_end <= MAX_LR):
            raise ValueError(
                f"lr and lr_end must be in (0, {MAX_LR:g}], got {self.lr}, {self.lr_end}"
            )
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown td.optimizer {self.optimizer!r} (known: sgd, adam)")
        if self.backup not in BACKUPS:
            raise ValueError(f"unknown td.backup {self.backup!r} (known: sampled, expected)")


def scheduled(start: float, end: float, progress: float) -> float:
    """Linear schedule: `start` at progress 0, `end` at progress 1 (and beyond)."""
    return start + (end - start) * min(max(progress, 0.0), 1.0)


@dataclass
class Episodes:
    """The states of a round of finished games, padded to the longest game.

    In backgammon a state is an afterstate and a step one move; in the six-dice game a
    state is a score sheet at the start of a turn and a step one turn (`vrhcaby.sixdice.learner`).
    """

    states: np.ndarray
    """(T, G, ...): state t of game g; padding after the end. Backgammon: int8 afterstates
    (T, G, 2, C), mover in row 1, C = 25, or 26 for acey-deucey (column 25 the waiting
    checkers)."""
    movers: np.ndarray
    """int8 (T, G): which side (0 = the opener) made each state. Two states in a row by
    the same side mean the first earned another roll (acey-deucey); a solitaire game has
    one side only."""
    lengths: np.ndarray
    """int64 (G,): states per game, the last being the finished position."""
    values: np.ndarray
    """(G,): the result of each game, in the last mover's view: the points it won
    (backgammon: 1 single, 2 gammon, 3 backgammon), or the points it still holds at the end
    (six-dice: the unspent bank). The game turns it into the value of the last state."""
    evaluated: int
    """States evaluated by the network while playing."""
    rewards: np.ndarray | None = None
    """float (T, G, K): points earned by the step from state t, in its mover's view, in the
    units of the network's K outputs (None: no rewards before the end)."""
    backups: np.ndarray | None = None
    """float (T, G, K): the expected one-step backup of each state, computed during play
    (the expectation over the dice of the reward plus the next state's value); None: the
    learner backs up the sampled next state's value."""
    truncated: np.ndarray | None = None
    """bool (G,): games cut short after their last state, which is then no end: it is
    trained on its one-step backup (needs `backups`). None: every game finished."""

    @property
    def plies(self) -> int:
        """States of the finished games."""
        if self.truncated is None:
            return int(self.lengths.sum())
        return int(self.lengths[~self.truncated].sum())

    def select(self, games: np.ndarray) -> Episodes:
        """The episodes of the given game indices only, trimmed to their longest game."""
        t = int(self.lengths[games].max())
        return Episodes(
            self.states[:t, games],
            self.movers[:t, games],
            self.lengths[games],
            self.values[games],
            0,
            None if self.rewards is None else self.rewards[:t, games],
            None if self.backups is None else self.backups[:t, games],
            None if self.truncated is None else self.truncated[games],
        )

    def trained(self) -> np.ndarray:
        """bool (T, G): the states to learn from: all but each finished game's last, whose
        value is the known result."""
        ends = self.lengths - 1
        if self.truncated is not None:
            ends = ends + self.truncated
        return np.arange(self.movers.shape[0])[:, None] < ends[None, :]

    def extra_turns(self) -> np.ndarray:
        """bool (T, G): the afterstates after which the same side rolls again."""
        extra = np.zeros(self.movers.shape, bool)
        extra[:-1] = self.movers[1:] == self.movers[:-1]
        extra &= np.arange(extra.shape[0])[:, None] < self.lengths[None, :] - 1
        return extra


def segment_argmax(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Index of the first maximum of each consecutive segment of `values`.

    Segments are given by their lengths `counts` (all >= 1) and cover `values` in order.
    """
    starts = np.cumsum(counts) - counts
    best = np.maximum.reduceat(values, starts)
    hits = np.flatnonzero(values == np.repeat(best, counts))
    owner = np.repeat(np.arange(counts.size), counts)[hits]
    first = np.ones(hits.size, bool)
    first[1:] = owner[1:] != owner[:-1]
    return hits[first]


def start_boards(variant: str, n: int) -> np.ndarray:
    """`n` copies of the variant's starting board: (n, 2, 25), or (n, 2, 26) for acey-deucey."""
    if engine.get_variant(variant).enter_from_start:
        return start_boards_ad(n)
    return np.repeat(engine.Position.start(variant).board[None], n, axis=0)


def variant_net(net: NetConfig, variant: str) -> NetConfig:
    """`net` with the variant inputs on for acey-deucey; a ValueError if they are asked for
    another variant (whose boards have no waiting checkers)."""
    needs = engine.get_variant(variant).enter_from_start
    if net.variant_inputs and not needs:
        raise ValueError(f"net.variant_inputs is for acey-deucey, not {variant!r}")
    if needs and not net.variant_inputs:
        log.info("acey-deucey: adding the variant inputs to the %s network", net.describe())
        return replace(net, variant_inputs=True)
    return net


def _stay_when_blocked(
    roots: np.ndarray, after: np.ndarray, parent: np.ndarray, flag: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The candidates plus, for each root with no legal play, the root itself (flag False):
    the side "moves" to its own position and the turn passes."""
    blocked = np.bincount(parent, minlength=len(roots)) == 0
    if not blocked.any():
        return after, parent, flag
    after = np.concatenate([after, roots[blocked]])
    parent = np.concatenate([parent, np.flatnonzero(blocked)])
    order = np.argsort(parent, kind="stable")
    if flag is not None:
        flag = np.concatenate([flag, np.zeros(int(blocked.sum()), bool)])[order]
    return after[order], parent[order], flag


class SelfPlay:
    """Plays rounds of greedy self-play games with one network, many games at a time.

    On the CPU the network is evaluated by the numpy `Evaluator` (its incremental first
    layer is several times cheaper than the dense product); on another device, by the
    torch model there. Weights do not change during a round, so both read them once.
    `net` must suit the variant (`variant_net`).

    `expected`: from the second ply on, each side on roll values its best play of all 21
    rolls (`agents.search.every_roll`) and plays the one of the roll that came; their
    average, seen from the other side, is the expected backup of the previous afterstate
    (`Episodes.backups`). The games played are the same greedy games.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        net: NetConfig,
        variant: str,
        device: torch.device,
        expected: bool = False,
    ) -> None:
        if variant_net(net, variant) != net:
            raise ValueError(f"a {variant} network needs net.variant_inputs")
        if expected and net.variant_inputs:
            raise ValueError("td.backup = 'expected' is not available for acey-deucey")
        self.model = model
        self.net = net
        self.variant = variant
        self.device = device
        self.expected = expected

    @torch.inference_mode()
    def _torch_equities(self, after: np.ndarray, extra: np.ndarray | None) -> np.ndarray:
        x = torch.from_numpy(self.net.encode(after, extra)).to(self.device)
        return equity(obey_rules(after, joint(self.model(x)))).cpu().numpy()  # GPU sync point

    def _pick(
        self,
        roots: np.ndarray,
        after: np.ndarray,
        parent: np.ndarray,
        extra: np.ndarray | None,
        rng: np.random.Generator,
        epsilon: float,
        evaluator: Evaluator | None,
    ) -> np.ndarray:
        """Row of `after` chosen for each root (each has at least one): the best equity for
        the mover, or with probability `epsilon` a uniformly random one."""
        counts = np.bincount(parent, minlength=len(roots))
        if evaluator is None:
            scores = self._torch_equities(after, extra)
        else:
            scores = equity(evaluator.probabilities_from(roots, after, parent, extra))
        choice = segment_argmax(scores, counts)
        if epsilon > 0:
            explore = rng.random(len(roots)) < epsilon
            starts = np.cumsum(counts) - counts
            random_pick = starts + (rng.random(len(roots)) * counts).astype(np.int64)
            choice = np.where(explore, random_pick, choice)
        return choice

    def _explore(
        self,
        on_roll: np.ndarray,
        dice: np.ndarray,
        greedy: np.ndarray,
        rng: np.random.Generator,
        epsilon: float,
    ) -> np.ndarray:
        """The greedy afterstates, each replaced with probability `epsilon` by a uniformly
        random play of its roll."""
        if epsilon <= 0:
            return greedy
        explore = np.flatnonzero(rng.random(len(on_roll)) < epsilon)
        if explore.size:
            roots = on_roll[explore]
            after, parent = engine.batch_afterstates(roots, dice[explore])
            after, parent, _ = _stay_when_blocked(roots, after, parent, None)
            counts = np.bincount(parent, minlength=len(roots))
            starts = np.cumsum(counts) - counts
            pick = starts + (rng.random(len(roots)) * counts).astype(np.int64)
            greedy = greedy.copy()
            greedy[explore] = after[pick]
        return greedy

    def _turn(
        self,
        on_roll: np.ndarray,
        dice: np.ndarray,
        rng: np.random.Generator,
        epsilon: float,
        evaluator: Evaluator | None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Each board's chosen afterstate, whether its mover rolls again, the points it won
        (0 = not over), and how many positions were evaluated."""
        if not self.net.variant_inputs:
            after, parent = engine.batch_afterstates(on_roll, dice)
            after, parent, _ = _stay_when_blocked(on_roll, after, parent, None)
            chosen = after[self._pick(on_roll, after, parent, None, rng, epsilon, evaluator)]
            again = np.zeros(len(on_roll), bool)
            return chosen, again, engine.game_value(chosen), len(after)
        # Acey-deucey: first the 1 and 2 of a 1-2 (or the whole roll), then any bonus double.
        after, parent, due = batch_afterstates_ad(on_roll, dice, bonus=False)
        after, parent, due = _stay_when_blocked(on_roll, after, parent, due)
        choice = self._pick(on_roll, after, parent, due, rng, epsilon, evaluator)
        chosen, again, evaluated = after[choice], np.zeros(len(on_roll), bool), len(after)
        owed = np.flatnonzero(due[choice])
        if owed.size:
            roots = chosen[owed]
            after, parent, extra = batch_bonus_ad(roots)  # a row for every board
            choice = self._pick(roots, after, parent, extra, rng, epsilon, evaluator)
            chosen[owed], again[owed] = after[choice], extra[choice]
            evaluated += len(after)
        return chosen, again, game_value_ad(chosen), evaluated

    def play(self, n_games: int, rng: np.random.Generator, epsilon: float = 0.0) -> Episodes:
        """Play `n_games` games to the end in lockstep and return their afterstates."""
        boards = start_boards(self.variant, n_games)
        capacity = 256
        states = np.zeros((capacity, *boards.shape), np.int8)
        movers = np.zeros((capacity, n_games), np.int8)
        lengths = np.zeros(n_games, np.int64)
        values = np.zeros(n_games, np.int8)
        side = np.zeros(n_games, np.int8)  # who is on roll; 0 = the opener
        dice = rng.integers(1, 7, size=(n_games, 2))  # opening roll: no doubles
        while (tie := dice[:, 0] == dice[:, 1]).any():
            dice[tie] = rng.integers(1, 7, size=(int(tie.sum()), 2))
        active = np.arange(n_games)
        evaluated = 0
        ply = 0
        backups = np.zeros((capacity, n_games, 5), np.float32) if self.expected else None
        evaluator = None
        if self.device.type == "cpu":
            evaluator = Evaluator(self.net, weights_from_model(self.model), self.variant)
        every = evaluator or _TorchEvaluator(self)  # what values all rolls (expected)
        while active.size:
            if ply == capacity:
                states = np.concatenate([states, np.zeros_like(states)])
                movers = np.concatenate([movers, np.zeros_like(movers)])
                if backups is not None:
                    backups = np.concatenate([backups, np.zeros_like(backups)])
                capacity *= 2
            if backups is not None and ply > 0:
                table = every_roll(every, boards[active])
                backups[ply - 1, active] = invert(table.mean)
                chosen = self._explore(boards[active], dice, table.for_dice(dice)[1], rng, epsilon)
                again, won = np.zeros(active.size, bool), engine.game_value(chosen)
                n = table.evaluated
            else:
                chosen, again, won, n = self._turn(boards[active], dice, rng, epsilon, evaluator)
            evaluated += n
            states[ply, active] = chosen
            movers[ply, active] = side[active]
            done = won > 0
            lengths[active[done]] = ply + 1
            values[active[done]] = won[done]
            # The next roll: the mover's again after an extra turn, else the other side's.
            boards[active] = np.where(again[:, None, None], chosen, chosen[:, ::-1])
            side[active[~again]] ^= 1
            active = active[~done]
            dice = engine.roll_dice(rng, active.size)
            ply += 1
        return Episodes(
            states[:ply],
            movers[:ply],
            lengths,
            values,
            evaluated,
            backups=None if backups is None else backups[:ply],
        )


class _TorchEvaluator:
    """The self-play network on its (non-CPU) device, as a `agents.search.Evaluator`."""

    def __init__(self, selfplay: SelfPlay) -> None:
        self.selfplay = selfplay

    @torch.inference_mode()
    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        sp = self.selfplay
        x = torch.from_numpy(sp.net.encode(afterstates, None)).to(sp.device)
        return obey_rules(afterstates, joint(sp.model(x))).cpu().numpy()


def weights_from_model(model: torch.nn.Module) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weight, bias) float32 arrays of each linear layer of `model`, input side first."""
    return [
        (m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
        for m in model
        if isinstance(m, torch.nn.Linear)
    ]


@dataclass(frozen=True)
class EvalConfig:
    """Periodic evaluation of the network being trained."""

    every: int = 0
    """Evaluate every this many training games (0 = never)."""
    games: int = 1000
    """Games per evaluation: backgammon, per opponent (played as mirrored pairs);
    six-dice, solitaire games of the network's greedy player."""
    opponents: tuple[str, ...] = ("pubeval", "heuristic")
    """Backgammon: agent specs to play; the first one decides which checkpoint is the best."""
    seed: int = 2024
    """Dice seed of the evaluation games (the same every time, so results compare)."""
    judge_games: int = 0
    """Backgammon: also play every position with a choice from this many games of gnubg
    0-ply against pubeval (dice `seed`), each play charged the equity gnubg says it gives
    away (`vrhcaby.play.judge`; needs gnubg-nn). The positions are judged once per run, then
    each evaluation takes about a second. 0 = off."""
    best_by: str = "ppg"
    """What picks the best checkpoint: "ppg" against the first opponent, or "move_cost",
    the judged cost per move (lower is better; needs judge_games)."""

    def __post_init__(self) -> None:
        if self.best_by not in ("ppg", "move_cost"):
            raise ValueError(f"unknown eval.best_by {self.best_by!r} (known: ppg, move_cost)")
        if self.every < 0 or self.judge_games < 0:
            raise ValueError("eval.every and eval.judge_games must be 0 (off) or more")
        if self.games < 1 or self.seed < 0:
            raise ValueError(
                f"eval.games must be at least 1 and eval.seed 0 or more, got {self.games}, "
                f"{self.seed}"
            )
        if self.best_by == "move_cost" and not self.judge_games:
            raise ValueError("eval.best_by = 'move_cost' needs eval.judge_games > 0")


@dataclass
class Evaluation:
    """An evaluation read for the run's logs."""

    score: float
    """Higher is better; the run keeps the checkpoint with the highest as its best."""
    scalars: dict[str, float]
    """TensorBoard scalars (logged as eval/<name>)."""
    postfix: dict[str, str]
    """Progress-bar fields."""


class SelfPlayer(Protocol):
    """Plays rounds of self-play games with the current network."""

    def play(self, n_games: int, rng: np.random.Generator, epsilon: float = 0.0) -> Episodes: ...


class Game(Protocol):
    """A game the TD(λ) trainer learns by self-play: `Backgammon`, or the six-dice game
    (`vrhcaby.sixdice.learner.SixDice`). It supplies the episodes, the network and its inputs,
    the value of a finished game, and the evaluation."""

    name: str
    """Its name in configs (the `game` key) and checkpoints."""
    variant: str
    """The rules played."""
    net: Any
    """The network's config: compared with ==, with `to_dict`, `from_dict`, `describe`."""
    flip: Callable[[np.ndarray], np.ndarray] | None
    """The change of view between the sides, on value arrays (..., K); None: solitaire."""

    def build_model(self) -> torch.nn.Module:
        """A fresh network (from torch's generator)."""
        ...

    def selfplay(self, model: torch.nn.Module, device: torch.device) -> SelfPlayer:
        """The self-play of `model`, whose weights may change between rounds."""
        ...

    def inputs(self, episodes: Episodes, valid: np.ndarray) -> torch.Tensor:
        """The network's inputs for the states where `valid` (T, G) is True, in order."""
        ...

    def values(self, output: torch.Tensor) -> torch.Tensor:
        """The values (N, K) the network's raw output stands for."""
        ...

    def obey(self, states: np.ndarray, values: Any) -> Any:
        """`values` (N, K) of `states` (N, ...), numpy or torch, made to obey what the
        game's rules decide (the identity where they decide nothing)."""
        ...

    def final(self, episodes: Episodes) -> np.ndarray:
        """float32 (G, K): the value of each game's last state, from `episodes.values`."""
        ...

    def equity(self, values: np.ndarray) -> np.ndarray:
        """One number per value (..., K) -> (...), for the TD-error statistics."""
        ...

    def charts(self, episodes: Episodes) -> dict[str, float]:
        """TensorBoard charts of a round's games."""
        ...

    def evaluate(
        self, model: torch.nn.Module, config: EvalConfig, run: dict[str, Any]
    ) -> dict[str, Any]:
        """Evaluate `model` (`run` is the run's config, for the record); a JSON record."""
        ...

    def report(self, record: dict[str, Any], config: EvalConfig) -> Evaluation:
        """What an `evaluate` record means for the logs and the best checkpoint."""
        ...


class Backgammon:
    """Backgammon in one of its variants: afterstates valued by a five-output network (the
    outcome probabilities), greedy 0-ply self-play (`SelfPlay`), evaluated by cubeless
    money games against fixed opponents. `net` is made `variant_net(net, variant)`;
    `backup` is `TDConfig.backup`."""

    name = "backgammon"
    flip = staticmethod(invert)

    def __init__(self, net: NetConfig, variant: str, backup: str = "sampled") -> None:
        if backup not in BACKUPS:
            raise ValueError(f"unknown backup {backup!r} (known: sampled, expected)")
        self.net = variant_net(net, variant)
        self.variant = variant
        self.expected = backup == "expected"
        self._judge: dict[tuple[int, int], Judged] = {}
        if self.expected and self.net.variant_inputs:
            raise ValueError("td.backup = 'expected' is not available for acey-deucey")

    def build_model(self) -> torch.nn.Module:
        return build_model(self.net)

    def selfplay(self, model: torch.nn.Module, device: torch.device) -> SelfPlay:
        return SelfPlay(model, self.net, self.variant, device, self.expected)

    def inputs(self, episodes: Episodes, valid: np.ndarray) -> torch.Tensor:
        extra = episodes.extra_turns()[valid] if self.net.variant_inputs else None
        return torch.from_numpy(self.net.encode(episodes.states[valid], extra))

    def values(self, output: torch.Tensor) -> torch.Tensor:
        return joint(output)

    def obey(self, states: np.ndarray, values: Any) -> Any:
        """`vrhcaby.nn.lawful.obey_rules`: impossible outcomes zeroed, finished games their
        result, bear-offs the databases' exact values."""
        return obey_rules(states, values)

    def final(self, episodes: Episodes) -> np.ndarray:
        return outcome(episodes.values)

    def equity(self, values: np.ndarray) -> np.ndarray:
        return equity(values)

    def charts(self, episodes: Episodes) -> dict[str, float]:
        return {
            "gammon_rate": float((episodes.values >= 2).mean()),
            "backgammon_rate": float((episodes.values >= 3).mean()),
        }

    def evaluate(
        self, model: torch.nn.Module, config: EvalConfig, run: dict[str, Any]
    ) -> dict[str, Any]:
        """Cubeless money games of the 0-ply player against each opponent."""
        from agents import load_agent
        from agents.td import TDAgent
        from vrhcaby.play.tournament import PairSettings, play_pair

        evaluator = Evaluator(self.net, weights_from_model(model), self.variant, run)
        # Cubeless evaluation: no cube, and no resignations that would cut games short.
        me = TDAgent(evaluator, plies=0, name="td-training", cube_aware=False)
        results = {}
        for spec in config.opponents:
            r = play_pair(
                me,
                load_agent(spec),
                games=config.games,
                seed=config.seed,
                settings=PairSettings(variant=self.variant, cube=False),
            )
            results[spec] = {"ppg": r.ppg, "ci95": list(r.ci95), "games": r.games}
        if config.judge_games:
            results["move_cost"] = self._judged(config).play(me).to_json()
        return results

    def _judged(self, config: EvalConfig) -> Judged:
        """The judged positions of the evaluation, made on first use."""
        key = (config.judge_games, config.seed)
        if key not in self._judge:
            from agents import load_agent
            gnubg, pubeval = load_agent("gnubg?plies=0"), load_agent("pubeval")
            self._judge[key] = judged_games(gnubg, pubeval, config.judge_games, config.seed)
        return self._judge[key]

    def report(self, record: dict[str, Any], config: EvalConfig) -> Evaluation:
        """Points per game against each opponent, and the judged cost per move; the first
        opponent's points per game, or the cost (`best_by`), decides the best."""
        scalars = {}
        for spec in config.opponents:
            scalars[f"ppg_{spec}"] = record[spec]["ppg"]
            scalars[f"ci95_low_{spec}"] = record[spec]["ci95"][0]
            scalars[f"ci95_high_{spec}"] = record[spec]["ci95"][1]
        first = config.opponents[0]
        ppg = record[first]["ppg"]
        postfix = {f"ppg vs {first}": f"{ppg:+.3f}"}
        cost = record.get("move_cost")
        if cost is not None:
            for key in ("mean", "per_game", *CLASSES):
                if cost[key] is not None:
                    scalars["move_cost" if key == "mean" else f"move_cost_{key}"] = cost[key]
            postfix["move cost"] = f"{cost['mean']:.5f}"
        if config.best_by == "move_cost" and cost is not None:
            return Evaluation(-cost["mean"], scalars, postfix)
        return Evaluation(ppg, scalars, postfix)


def lambda_returns(
    values: np.ndarray | None,
    same_side: np.ndarray | None,
    lengths: np.ndarray,
    final: np.ndarray,
    lam: float,
    *,
    rewards: np.ndarray | None = None,
    backups: np.ndarray | None = None,
    truncated: np.ndarray | None = None,
    flip: Callable[[np.ndarray], np.ndarray] | None = invert,
    decided: np.ndarray | None = None,
) -> np.ndarray:
    """λ-return targets (T, G, K) of padded episodes: T states of G games, K outputs.

    Per step t of a game, with F_t the change to this state's view (`flip` where
    `same_side[t]` is False; None: a solitaire game, the view never changes),

        G_t = r_t + F_t((1 - λ) N_t + λ G_{t+1}),   G_{last} = final,

    where r_t is the reward of the step (`rewards`; none by default) and N_t the value
    bootstrapped from: the network's `values` of state t+1 (the sampled one-step backup is
    then r_t + F_t(V_{t+1})). Given `backups` instead, the expected one-step backups B_t
    of each state (the reward plus the next value, averaged over the dice), N_t is the next
    value they imply, F_t(B_t - r_t), so that G_t = (1 - λ) B_t + λ (r_t + F_t(G_{t+1})):
    λ = 0 gives B_t, λ = 1 the realised return. A `truncated` game's last state is no end:
    its target is its backup B_t. `final` (G, K) is the value of each finished game's last
    state in its mover's view; targets at and after a game's last state are not meant for
    training (see `Episodes.trained`).

    `decided` (T, G, K), where not NaN, is the value the rules fix for that output of state
    t (`Game.obey` of NaN: an impossible outcome's 0, a bear-off's database value): G_t
    takes it, and so the returns of earlier states bootstrap from the exact value rather
    than from a sampled continuation of it.
    """
    if (values is None) == (backups is None):
        raise ValueError("lambda_returns needs either the network values or the backups")
    if same_side is not None and flip is None:
        raise ValueError("a change of side needs the change of view, flip")
    last = lengths - 1
    games = np.arange(lengths.size)

    def view(x: np.ndarray, t: int | slice) -> np.ndarray:
        if same_side is None or flip is None:
            return x
        return np.where(same_side[t][..., None], x, flip(x))

    if backups is None:
        if truncated is not None and truncated.any():
            raise ValueError("a truncated game needs expected backups for its last state")
        steps = values.shape[0]
        v = values.copy()
        v[last, games] = final
        boot = v[1:]
        g = v.copy()
    else:
        steps = backups.shape[0]
        net = backups if rewards is None else backups - rewards
        boot = view(net, slice(None))[: steps - 1]
        end = final
        if truncated is not None:  # a game cut short: its last state's own backup
            end = np.where(truncated[:, None], backups[last, games], final)
        g = np.broadcast_to(end, backups.shape).astype(np.result_type(backups, final))
    for t in range(steps - 2, -1, -1):
        blended = (1 - lam) * boot[t] + lam * g[t + 1]
        target = view(blended, t)
        if rewards is not None:
            target = rewards[t] + target
        if decided is not None:
            target = np.where(np.isnan(decided[t]), target, decided[t])
        g[t] = np.where((t < last)[:, None], target, g[t])
    return g


@dataclass
class UpdateStats:
    """What one round of learning measured (means over trained positions)."""

    loss: float
    td_error: float
    """Mean one-step TD error of the equity (target minus value; ideally near 0)."""
    abs_td_error: float
    """Mean |one-step TD error| of the equity."""
    positions: int


class Learner:
    """Turns finished episodes into optimizer steps on the λ-return targets.

    `game` is the game learnt (its inputs, outputs and results); a `NetConfig` stands for
    backgammon with that network.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        game: Game | NetConfig,
        device: torch.device,
    ) -> None:
        if isinstance(game, NetConfig):
            game = Backgammon(game, "acey-deucey" if game.variant_inputs else "standard")
        self.model = model
        self.optimizer = optimizer
        self.game = game
        self.device = device

    def update(self, episodes: Episodes, lam: float) -> UpdateStats:
        """One optimizer step on the λ-return loss of all trained states of `episodes`.

        Both sides of the loss obey the rules (`Game.obey`; backgammon: `obey_rules`).
        The targets: the values bootstrapped from are those self-play chose its plays by
        (the network's, made to obey the rules of their states), and each λ-return takes
        what the rules decide of its own state (`lambda_returns`' `decided`), so that a
        bear-off is fitted to its exact database value (and earlier states bootstrap from
        that), a finished game to its result, a side that has borne off to no gammon
        loss. The prediction fitted is masked the same way: an output the rules
        decide equals its target and gives no gradient. Why: every use of the network
        (self-play, agents, hint) goes through the same rules, so its raw value there is
        never read; fitting it would spend the network's capacity (and the update's step)
        on what the rules know, and pull shared weights toward zeros and database values
        that a plain position never needs. Such outputs still count in the mean, so the
        step per position is that of plain TD(λ) (`tests/test_td.py`).
        """
        p, padded, decided = self._values(episodes)
        valid = episodes.lengths[None, :] > np.arange(episodes.movers.shape[0])[:, None]
        train = episodes.trained()
        targets = self._returns(episodes, padded, train, decided, lam)
        n = int(train.sum())
        chosen = torch.from_numpy(np.flatnonzero(train[valid])).to(self.device)
        target = torch.as_tensor(targets, dtype=p.dtype).to(self.device)
        diff = target - p[chosen]
        loss = 0.5 * (diff * diff).sum() / max(n, 1)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        one_step = self._returns(episodes, padded, train, decided, 0.0)
        delta = self.game.equity(one_step) - self.game.equity(padded[train])
        return UpdateStats(
            float(loss.detach()), float(delta.mean()), float(np.abs(delta).mean()), n
        )

    @torch.no_grad()
    def targets(self, episodes: Episodes, lam: float) -> np.ndarray:
        """The targets (N, K) `update` fits the trained states (`Episodes.trained`, in
        order) to, with the network as it is now."""
        _, padded, decided = self._values(episodes)
        return self._returns(episodes, padded, episodes.trained(), decided, lam)

    def _values(self, episodes: Episodes) -> tuple[torch.Tensor, np.ndarray, np.ndarray]:
        """The network's values of every state, obeying the rules: (N, K) with gradients,
        in order, and padded (T, G, K) numpy; and what the rules decide of each state's
        values (T, G, K), NaN where they leave a value open and after the end.

        The rules are asked once, as `Game.obey` of NaN, and the answer serves both the
        prediction and the targets (a bear-off's database value is read once)."""
        valid = episodes.lengths[None, :] > np.arange(episodes.movers.shape[0])[:, None]
        x = self.game.inputs(episodes, valid).to(self.device)
        raw = self.game.values(self.model(x))
        free = np.full(tuple(raw.shape), np.nan, np.float32)
        decided = np.full((*valid.shape, raw.shape[-1]), np.nan, np.float32)
        decided[valid] = self.game.obey(episodes.states[valid], free)
        fixed = torch.from_numpy(decided[valid]).to(raw.device)
        p = torch.where(torch.isnan(fixed), raw, fixed.to(raw.dtype))
        padded = np.zeros(decided.shape, np.float32)
        padded[valid] = p.detach().cpu().numpy()  # GPU sync point
        return p, padded, decided

    def _returns(
        self,
        episodes: Episodes,
        padded: np.ndarray,
        train: np.ndarray,
        decided: np.ndarray,
        lam: float,
    ) -> np.ndarray:
        """The λ-returns of the `train` states bootstrapped from the values `padded`
        (T, G, K) (or from the episodes' backups), each state's what its rules decide
        (`lambda_returns`' `decided`)."""
        game = self.game
        same = None
        if game.flip is not None:
            same = np.zeros(train.shape, bool)
            same[:-1] = episodes.movers[1:] == episodes.movers[:-1]
        returns = lambda_returns(
            padded if episodes.backups is None else None,
            same,
            episodes.lengths,
            game.final(episodes),
            lam,
            rewards=episodes.rewards,
            backups=episodes.backups,
            truncated=episodes.truncated,
            flip=game.flip,
            decided=decided,
        )
        return returns[train]


def make_optimizer(model: torch.nn.Module, config: TDConfig) -> torch.optim.Optimizer:
    """The optimizer named in `config`, at its starting learning rate."""
    if config.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=config.lr)
    return torch.optim.SGD(model.parameters(), lr=config.lr)


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr


@dataclass
class RoundStats:
    """What one self-play round produced and learned."""

    games: int
    plies: int
    evaluated: int
    gammon_rate: float | None
    """Fraction of games won with a gammon or backgammon (None: a game without gammons)."""
    backgammon_rate: float | None
    lr: float
    lam: float
    update: UpdateStats
    charts: dict[str, float] = field(default_factory=dict)
    """The game's other charts of the round's games (six-dice: mean_total)."""


class Trainer:
    """The network, its optimizer, the dice generator and the games count of one run.

    `Trainer(net, td, variant, ...)` learns backgammon, `net` made `variant_net(net,
    variant)` (an acey-deucey run gets the variant inputs); `Trainer.for_game` learns any
    `Game`. `net` and `variant` are the game's.
    """

    def __init__(
        self,
        net: NetConfig,
        td: TDConfig,
        variant: str,
        total_games: int,
        seed: int,
        device: torch.device,
    ) -> None:
        self._setup(Backgammon(net, variant, td.backup), td, total_games, seed, device)

    @classmethod
    def for_game(
        cls, game: Game, td: TDConfig, total_games: int, seed: int, device: torch.device
    ) -> Trainer:
        """A trainer of `game`."""
        trainer = cls.__new__(cls)
        trainer._setup(game, td, total_games, seed, device)
        return trainer

    def _setup(
        self, game: Game, td: TDConfig, total_games: int, seed: int, device: torch.device
    ) -> None:
        self.game = game
        self.net = game.net
        self.variant = game.variant
        self.td = td
        self.total_games = total_games
        self.device = device
        torch.manual_seed(seed)
        self.model = game.build_model().to(device)
        self.optimizer = make_optimizer(self.model, td)
        self.rng = np.random.default_rng(seed)
        self.games = 0
        self.selfplay = game.selfplay(self.model, device)
        self.learner = Learner(self.model, self.optimizer, game, device)

    def _chunks(self, episodes: int) -> list[np.ndarray]:
        """The episode indices of each update of a round, every pass."""
        parts = max(1, -(-episodes // self.td.games_per_update))
        chunks = []
        for _ in range(self.td.epochs):
            order = torch.randperm(episodes).numpy() if self.td.shuffle else np.arange(episodes)
            chunks += np.array_split(order, parts)
        return chunks

    def round(self) -> RoundStats:
        """Play one round of self-play games and learn from them."""
        progress = self.games / max(self.total_games, 1)
        lr = scheduled(self.td.lr, self.td.lr_end, progress)
        lam = scheduled(self.td.lam, self.td.lam_end, progress)
        set_lr(self.optimizer, lr)
        n = min(self.td.batch_games, self.total_games - self.games)
        episodes = self.selfplay.play(n, self.rng, self.td.epsilon)
        stats = []
        for chunk in self._chunks(episodes.lengths.size):
            stats.append(self.learner.update(episodes.select(chunk), lam))
        positions = sum(s.positions for s in stats)
        weight = [s.positions / max(positions, 1) for s in stats]
        update = UpdateStats(
            sum(w * s.loss for w, s in zip(weight, stats, strict=True)),
            sum(w * s.td_error for w, s in zip(weight, stats, strict=True)),
            sum(w * s.abs_td_error for w, s in zip(weight, stats, strict=True)),
            positions,
        )
        self.games += n
        charts = self.game.charts(episodes)
        return RoundStats(
            games=n,
            plies=episodes.plies,
            evaluated=episodes.evaluated,
            gammon_rate=charts.pop("gammon_rate", None),
            backgammon_rate=charts.pop("backgammon_rate", None),
            lr=lr,
            lam=lam,
            update=update,
            charts=charts,
        )

    def evaluate(self, config: EvalConfig, run: dict[str, Any]) -> dict[str, Any]:
        """The game's evaluation of the current network (a JSON record)."""
        return self.game.evaluate(self.model, config, run)

    # --- state for checkpoints ---------------------------------------------------------

    def weights(self) -> dict[str, np.ndarray]:
        """Model weights as numpy arrays named ``model/<layer>.<weight|bias>``."""
        return {
            f"model/{k}": v.detach().cpu().numpy().copy()
            for k, v in self.model.state_dict().items()
        }

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Everything needed to continue exactly: arrays and a JSON-able document."""
        arrays = self.weights()
        optim = self.optimizer.state_dict()
        optim_meta: dict[str, Any] = {"param_groups": optim["param_groups"], "state": {}}
        for idx, entry in optim["state"].items():
            optim_meta["state"][str(idx)] = {}
            for key, value in entry.items():
                if torch.is_tensor(value) and value.ndim > 0:
                    arrays[f"optim/{idx}/{key}"] = value.detach().cpu().numpy().copy()
                    optim_meta["state"][str(idx)][key] = "array"
                else:
                    optim_meta["state"][str(idx)][key] = float(value)
        arrays["rng/torch"] = torch.get_rng_state().numpy().copy()
        meta = {
            "game": self.game.name,
            "net": self.net.to_dict(),
            "variant": self.variant,
            "games": self.games,
            "optimizer": optim_meta,
            "rng": self.rng.bit_generator.state,
        }
        return arrays, meta

    def warm_start(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Start from another backgammon run's network weights (not its optimizer, dice or
        games played), grown to this run's network.

        The saved network may have narrower hidden layers (as many, the same activation)
        and an encoding that this network's extends (`vrhcaby.nn.encode.extends`). The inputs
        and hidden units it lacks are added so that the network first plays exactly as the
        saved one did: new inputs and new hidden units start with zero outgoing weight, new
        hidden units with this run's own random incoming weights.
        """
        if meta.get("game", "backgammon") != "backgammon" or self.game.name != "backgammon":
            raise ValueError("a warm start takes a backgammon network into a backgammon run")
        saved = NetConfig.from_dict(meta["net"])
        grows = (
            saved.activation == self.net.activation
            and saved.variant_inputs == self.net.variant_inputs
            and len(saved.hidden) == len(self.net.hidden)
            and all(a <= b for a, b in zip(saved.hidden, self.net.hidden, strict=True))
            and (
                saved.encoding == self.net.encoding
                or (not saved.variant_inputs and extends(self.net.encoding, saved.encoding))
            )
        )
        if not grows:
            raise ValueError(
                f"cannot start a {self.net.describe()} network from a {saved.describe()} one: "
                "the activation and number of hidden layers must match, no layer may shrink, "
                "and the encoding must be the same or one that extends it"
            )
        weights = {}
        for name, fresh in self.model.state_dict().items():
            if f"model/{name}" not in arrays:
                raise ValueError(f"the checkpoint lacks weights model/{name}")
            old = torch.from_numpy(np.array(arrays[f"model/{name}"], np.float32))
            grown = fresh.clone()  # new hidden units keep their fresh incoming weights
            grown[: old.shape[0]] = 0.0  # ... and old units get nothing from new inputs
            grown[tuple(slice(0, n) for n in old.shape)] = old
            weights[name] = grown
        self.model.load_state_dict(weights)

    def load_state(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Restore what `state` saved (weights, optimizer, RNGs, games played)."""
        saved_game = meta.get("game", "backgammon")
        if saved_game != self.game.name:
            raise ValueError(
                f"checkpoint learnt {saved_game!r} but the config asks for {self.game.name!r}"
            )
        saved_variant = meta.get("variant", self.variant)
        if saved_variant != self.variant:
            raise ValueError(
                f"checkpoint learnt {saved_variant!r} but the config asks for {self.variant!r}"
            )
        saved = type(self.net).from_dict(meta["net"])
        if saved != self.net:
            raise ValueError(
                f"checkpoint holds a {saved.describe()} network but the config asks for "
                f"{self.net.describe()}"
            )
        self.model.load_state_dict(
            {
                k[len("model/") :]: torch.from_numpy(v)
                for k, v in arrays.items()
                if k.startswith("model/")
            }
        )
        optim_meta = meta["optimizer"]
        state: dict[int, dict[str, Any]] = {}
        for idx, entry in optim_meta["state"].items():
            state[int(idx)] = {
                key: torch.from_numpy(arrays[f"optim/{idx}/{key}"]).to(self.device)
                if kind == "array"
                else torch.tensor(kind)
                for key, kind in entry.items()
            }
        self.optimizer.load_state_dict({"state": state, "param_groups": optim_meta["param_groups"]})
        torch.set_rng_state(torch.from_numpy(arrays["rng/torch"]))
        self.rng.bit_generator.state = meta["rng"]
        self.games = int(meta["games"])
