"""Batched greedy self-play of backgammon: many games in lockstep, one forward pass per ply.

A *round* starts `batch_games` games together. Each ply, every unfinished game rolls,
`engine.batch_afterstates` lists all its resulting positions, the positions of all games
are encoded and evaluated in one forward pass, and each game takes the afterstate with the
highest money equity for the mover (0-ply greedy; with probability ε a uniformly random
one instead). Both sides use the same network. A side with no legal play "moves" to its
own position, so every ply stores one afterstate.

Variants. Nackgammon and its seeded form differ only in the starting layout. Acey-deucey
boards are (2, 26), with each side's waiting checkers in column 25, and its network has
the variant inputs (`NetConfig.variant_inputs`, which the trainer sets for it), one of
which says that the mover rolls again. A 1-2 is chosen in two stages, each greedily: the
play of the 1 and the 2 (scored as an afterstate whose mover moves again when the bonus is
due), then the double and its play (`engine.acey_deucey.batch_bonus_ad`). After a turn
that earns another roll the next position is the afterstate itself, not flipped, and its
λ-return target is the next value without a change of view.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
import torch

import engine
from agents.search import best_rows, every_roll
from engine.acey_deucey import (
    batch_afterstates_ad,
    batch_bonus_ad,
    game_value_ad,
    start_boards_ad,
)
from engine.movegen import batch_afterstates
from vrhcaby.equity.outcomes import equity, invert
from vrhcaby.learn.episodes import Episodes
from vrhcaby.nn.lawful import obey_rules
from vrhcaby.nn.net import Evaluator, NetConfig, joint

log = logging.getLogger(__name__)


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


Flag = TypeVar("Flag", np.ndarray, None)


def _stay_when_blocked(
    roots: np.ndarray, after: np.ndarray, parent: np.ndarray, flag: Flag
) -> tuple[np.ndarray, np.ndarray, Flag]:
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


@dataclass
class Turn:
    """One ply of the games on roll: what each board's side played."""

    chosen: np.ndarray
    """Each board's chosen afterstate (the board itself when no play is legal)."""
    again: np.ndarray
    """bool: whether its mover rolls again (an acey-deucey bonus turn)."""
    won: np.ndarray
    """The points the mover won (0 = not over)."""
    evaluated: int
    """Positions the network evaluated."""


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

    `network`: what values the plays instead, made afresh at the start of each round
    from the weights as they are (a `vrhcaby.nn.netset.NetworkSet`: a set's self-play).
    `starts`: boards (S, 2, 25) on roll that the games start from instead of the opening,
    each game's drawn from the round's generator (`vrhcaby.learn.starts`).
    """

    def __init__(
        self,
        model: torch.nn.Module,
        net: NetConfig,
        variant: str,
        device: torch.device,
        expected: bool = False,
        network: Callable[[], Any] | None = None,
        starts: np.ndarray | None = None,
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
        self.network = network
        if starts is not None and (net.variant_inputs or not len(starts)):
            raise ValueError("starts are boards of a 25-point variant, at least one")
        self.starts = starts

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
        choice = best_rows(scores, parent, len(roots))
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
            after, parent = batch_afterstates(roots, dice[explore])
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
    ) -> Turn:
        """The turn of each board on roll, by the network's greedy choice."""
        if not self.net.variant_inputs:
            after, parent = batch_afterstates(on_roll, dice)
            after, parent, _ = _stay_when_blocked(on_roll, after, parent, None)
            chosen = after[self._pick(on_roll, after, parent, None, rng, epsilon, evaluator)]
            again = np.zeros(len(on_roll), bool)
            return Turn(
                chosen=chosen, again=again, won=engine.game_value(chosen), evaluated=len(after)
            )
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
        return Turn(chosen=chosen, again=again, won=game_value_ad(chosen), evaluated=evaluated)

    def play(self, n_games: int, rng: np.random.Generator, epsilon: float = 0.0) -> Episodes:
        """Play `n_games` games to the end in lockstep and return their afterstates."""
        boards, dice = self._openings(n_games, rng)
        capacity = 256
        states = np.zeros((capacity, *boards.shape), np.int8)
        movers = np.zeros((capacity, n_games), np.int8)
        lengths = np.zeros(n_games, np.int64)
        values = np.zeros(n_games, np.int8)
        side = np.zeros(n_games, np.int8)  # who is on roll; 0 = the opener
        active = np.arange(n_games)
        evaluated = 0
        ply = 0
        backups = np.zeros((capacity, n_games, 5), np.float32) if self.expected else None
        evaluator = None
        if self.network is not None:
            evaluator = self.network()
        elif self.device.type == "cpu":
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
                turn = Turn(
                    chosen=chosen,
                    again=np.zeros(active.size, bool),
                    won=engine.game_value(chosen),
                    evaluated=table.evaluated,
                )
            else:
                turn = self._turn(boards[active], dice, rng, epsilon, evaluator)
            chosen, again, won = turn.chosen, turn.again, turn.won
            evaluated += turn.evaluated
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
            states=states[:ply],
            movers=movers[:ply],
            lengths=lengths,
            values=values,
            evaluated=evaluated,
            backups=None if backups is None else backups[:ply],
        )

    def _openings(self, n_games: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The games' first boards on roll and their first rolls: the opening (no
        doubles), or positions drawn from `starts` with any roll."""
        if self.starts is not None:
            boards = self.starts[rng.integers(len(self.starts), size=n_games)]
            return boards.copy(), engine.roll_dice(rng, n_games)
        dice = rng.integers(1, 7, size=(n_games, 2))  # opening roll: no doubles
        while (tie := dice[:, 0] == dice[:, 1]).any():
            dice[tie] = rng.integers(1, 7, size=(int(tie.sum()), 2))
        return start_boards(self.variant, n_games), dice


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
        for m in model.children()
        if isinstance(m, torch.nn.Linear)
    ]
