"""The n-ply search: one module shared by the agent, `vrhcaby hint`, rollouts and the
trainer's expected backups.

A value function (`ValueFunction`, a network's evaluator) gives the mover's five outcome
probabilities of afterstates; everything here is built on it, batched:

* `best_rows`: per board, the row of its best-scored play (the one argmax every batched
  chooser uses);
* `all_replies`: every play of each of the 21 rolls from pre-roll boards, valued at 0-ply;
* `every_roll`: one step of expectimax for pre-roll boards, the best (0-ply) play of each
  of the 21 rolls and their average over the dice; it serves the rollouts' luck adjustment
  (the value of the roll that came minus the average) and self-play's expected backups,
  and it is the step of `ply_probabilities`;
* `ply_probabilities`: the n-ply probabilities of afterstates, minus the average over the
  opponent's rolls of the (n-1)-ply value of the reply it picks by 0-ply;
* `filtered_search`: GNU Backgammon's move filters, each ply's best candidates going on to
  the next, ranked by any value of the probabilities (cubeless, cubeful, EMG);
* `Pruner`: GNU Backgammon's pruning of the reply choice inside the search (`every_roll`,
  hence `ply_probabilities` from 1 ply): a cheap value function ranks each roll's replies
  and only its best few are valued by the network, which picks among them. Off (None) by
  default everywhere, so that every caller's numbers stay as they were.

Boards are deduplicated before each expectimax step: rollouts, self-play batches and the
candidates of one position repeat positions (the opening above all), and each distinct
board costs 21 move generations and one network pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

import engine
from engine.dice import COUNTS, ROLL_INDEX, ROLLS
from vrhcaby.base.jit import in_numpy, lazy_jit
from vrhcaby.equity.outcomes import equity, invert, outcome


class ValueFunction(Protocol):
    """A network's outcome probabilities (`vrhcaby.nn.net.Evaluator`, or any object with
    this method); `probabilities_from(roots, after, parent)`, where present, is used for
    its incremental first layer, and `variant` (default "standard") says what it plays."""

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        """float (N, 5) outcome probabilities for the mover (row 1) of each afterstate."""
        ...


#: Turns the probabilities (M, 5) of the afterstates `rows` (M,) into the values plays
#: are ranked by, higher better for the mover.
Ranking = Callable[[np.ndarray, np.ndarray], np.ndarray]


def game_value(after: np.ndarray) -> np.ndarray:
    """`engine.game_value`, checking only afterstates where the mover has no checker left."""
    if in_numpy(len(after)):
        return engine.game_value(after)
    value = np.zeros(len(after), dtype=np.int8)
    over = _mover_off(after)
    if over.any():
        value[over] = engine.game_value(after[over])
    return value


@lazy_jit(fastmath=False)
def _mover_off(after):  # pragma: no cover - numba
    """Whether the mover (row 1) of each afterstate has borne off every checker."""
    out = np.ones(len(after), np.bool_)
    for r in range(len(after)):
        for i in range(after.shape[2]):
            if after[r, 1, i]:
                out[r] = False
                break
    return out


def afterstate_probabilities(
    evaluator: ValueFunction,
    roots: np.ndarray | None,
    after: np.ndarray,
    parent: np.ndarray | None,
) -> np.ndarray:
    """Mover's 0-ply probabilities of afterstates (played from `roots[parent]`, if given,
    which an evaluator with `probabilities_from` uses): a finished game's outcome, else the
    evaluator's (in the evaluator's float type)."""
    value = game_value(after)
    live = value == 0
    fast = getattr(evaluator, "probabilities_from", None)
    if roots is None or parent is None:
        fast = None
    if live.all():
        p = fast(roots, after, parent) if fast is not None else evaluator.probabilities(after)
        return np.asarray(p)
    p = outcome(value)
    if live.any():
        if fast is not None:
            assert parent is not None
            q = np.asarray(fast(roots, after[live], parent[live]))
        else:
            q = np.asarray(evaluator.probabilities(after[live]))
        p = p.astype(np.result_type(p, q))
        p[live] = q
    return p


def best_rows(scores: np.ndarray, parent: np.ndarray, n: int) -> np.ndarray:
    """Per parent 0..n-1, the row of its highest score: int64 (n,), the first row on ties,
    -1 for a parent without rows (`parent` in any order). NaN scores lose to every other,
    so that a parent's row is NaN only when all its scores are."""
    return _best_rows(np.asarray(scores, dtype=np.float64), np.asarray(parent, np.int64), n)


@lazy_jit(fastmath=False)
def _best_rows(scores, parent, n):  # pragma: no cover - numba
    rows = np.full(n, -1, np.int64)
    best = np.full(n, -np.inf)
    for r in range(len(parent)):
        k = parent[r]
        e = scores[r]
        if rows[k] < 0 or e > best[k] or (best[k] != best[k] and e == e):
            best[k] = e
            rows[k] = r
    return rows


#: `equity` compiled by numba into one loop, float64 whatever the probabilities' float type
#: (the same bits as numpy's on them cast to float64, without the copy): an `every_roll`
#: ranks about 500 afterstates a board.
_equity_kernel = lazy_jit(equity, fastmath=False)


def chosen_boards(
    boards: np.ndarray, after: np.ndarray, parent: np.ndarray, scores: np.ndarray
) -> np.ndarray:
    """Each board's afterstate of highest score (`best_rows`) among `after` played from
    `boards[parent]`; a board without a play comes back unchanged."""
    rows = best_rows(scores, parent, len(boards))
    chosen = boards.copy()
    has = rows >= 0
    chosen[has] = after[rows[has]]
    return chosen


def mean_over_rolls(p: np.ndarray) -> np.ndarray:
    """The average over the 36 rolls of values (..., 21, K) given per roll of ROLLS."""
    return np.einsum("r,...rk->...k", COUNTS, p) / 36


@dataclass(frozen=True)
class EveryRoll:
    """The best play of each roll for each of B pre-roll boards (the side on roll in row 1),
    held once per distinct board."""

    best: np.ndarray
    """float64 (U, 21, 5): the mover's probabilities after its best play of each roll of
    ROLLS (a finished game's certain outcome; the board itself when no play is legal)."""
    plays: np.ndarray
    """int8 (U, 21, 2, 25): the afterstate of that play."""
    inverse: np.ndarray
    """int (B,): the row of `best` and `plays` of each board."""
    evaluated: int
    """Afterstates the evaluator was asked about (over the distinct boards)."""

    @property
    def mean(self) -> np.ndarray:
        """float64 (B, 5): the average over the 36 rolls, the mover's probabilities before
        it rolls when it plays each roll greedily (exact when all rolls agree)."""
        return mean_over_rolls(self.best)[self.inverse]

    def for_dice(self, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each board's roll (B, 2): the probabilities after its best play and that
        play's afterstate."""
        r = ROLL_INDEX[dice[:, 0], dice[:, 1]]
        return self.best[self.inverse, r], self.plays[self.inverse, r]


class Ranker(Protocol):
    """A cheap scorer of live afterstates (`vrhcaby.nn.prune.PruningNet`); `every_roll`
    keeps the replies that end the game whatever their scores."""

    def scores(self, roots: np.ndarray, afterstates: np.ndarray, parent: np.ndarray) -> np.ndarray:
        """float (M,), higher better for the mover (row 1), of afterstates played from
        `roots[parent]`."""
        ...


@dataclass(frozen=True)
class Pruner:
    """The pruning of the reply choice: `every_roll` ranks each roll's replies by `ranker`
    (a small network fitted to the full one's outputs, `vrhcaby.learn.prune`) and values
    only the best `keep` with the full evaluator, which picks its play among them. Why: a
    2-ply value picks some 440 replies among about 9,000 afterstates; a ranker several times
    cheaper than the network that rarely misses the best reply makes the search several
    times faster at almost no cost in play. `keep` at least the most replies of any roll is
    the unpruned search, number for number."""

    ranker: Ranker
    keep: int = 4

    def __post_init__(self) -> None:
        if self.keep < 1:
            raise ValueError(f"a pruner keeps at least 1 reply per roll, got {self.keep}")


@dataclass(frozen=True)
class Replies:
    """Every play of every roll from each distinct pre-roll board, valued at 0-ply: what
    `every_roll` chooses from (and a caller that wants more than the best, such as the
    labels of the replies a one-ply search visits, `vrhcaby.learn.labels`)."""

    boards: np.ndarray
    """int8 (U, 2, 25): the distinct boards, the side on roll in row 1."""
    inverse: np.ndarray
    """int (B,): the row of `boards` of each board asked about."""
    after: np.ndarray
    """int8 (M, 2, 25): the plays' afterstates; for a roll without a legal play, the board
    itself (the turn passes)."""
    parent: np.ndarray
    """int (M,): the board and roll of each, `board * 21 + ` its roll's row of ROLLS."""
    probabilities: np.ndarray
    """float (M, 5): the mover's 0-ply probabilities (a finished game's certain outcome)."""
    scores: np.ndarray
    """float64 (M,): the value the plays are ranked by, higher better for the mover."""


def all_replies(
    evaluator: ValueFunction,
    boards: np.ndarray,
    prune: Pruner | None = None,
    rank: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> Replies:
    """Every play of every roll from each pre-roll board (B, 2, 25), valued by the evaluator
    and ranked as `every_roll` ranks them (with `prune`, only those its ranker puts first)."""
    keys = np.ascontiguousarray(boards).reshape(len(boards), -1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    u = unique.reshape(-1, 2, 25).astype(np.int8)
    reps = np.repeat(u, len(ROLLS), axis=0)
    after, parent = engine.batch_afterstates(reps, np.tile(ROLLS, (len(u), 1)))
    passes = np.flatnonzero(np.bincount(parent, minlength=len(reps)) == 0)
    if len(passes):  # the board itself stands for the play of a roll that has none
        after = np.concatenate([after, reps[passes]])
        parent = np.concatenate([parent, passes])
    if prune is not None:  # only the ranker's best `keep` of each roll go on
        cheap = np.asarray(prune.ranker.scores(u, after, parent // len(ROLLS)), np.float64)
        cheap[game_value(after) != 0] = np.inf  # a reply that ends the game is kept
        kept = _top_k(cheap, parent, len(reps), prune.keep)
        after, parent = after[kept], parent[kept]
    p = afterstate_probabilities(evaluator, u, after, parent // len(ROLLS))
    scores = _equity_kernel(p) if rank is None else rank(np.asarray(p, np.float64), after)
    return Replies(u, inverse.reshape(-1), after, parent, p, scores)


def every_roll(
    evaluator: ValueFunction,
    boards: np.ndarray,
    prune: Pruner | None = None,
    rank: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> EveryRoll:
    """The evaluator's greedy (0-ply) play of every roll from each pre-roll board (B, 2, 25),
    by cubeless money equity, or by `rank(p, afterstates)` (the value of afterstates for
    their mover from their 0-ply probabilities: the cubeful search ranks by the cubeful
    equity of the game's cube, as GNU Backgammon does); with `prune`, among the replies its
    ranker puts first."""
    r = all_replies(evaluator, boards, prune, rank)
    u = len(r.boards)
    rows = best_rows(r.scores, r.parent, u * len(ROLLS))
    best = r.probabilities[rows].astype(np.float64).reshape(u, len(ROLLS), 5)
    plays = r.after[rows].reshape(u, len(ROLLS), 2, 25)
    return EveryRoll(best, plays, r.inverse, len(r.after))


def ply_probabilities(
    evaluator: ValueFunction,
    afterstates: np.ndarray,
    plies: int,
    roots: np.ndarray | None = None,
    parent: np.ndarray | None = None,
    *,
    prune: Pruner | None = None,
) -> np.ndarray:
    """The n-ply five probabilities, float64 (N, 5), of each afterstate for its mover.

    0-ply is the evaluator's (`afterstate_probabilities`; `roots[parent]` may name the
    boards the afterstates were played from). n-ply is the other side's view of the
    average over the opponent's 21 rolls (`every_roll`) of the (n-1)-ply probabilities of
    the reply it picks by 0-ply, as GNU Backgammon does; with `prune`, among the replies
    its ranker puts first, at every depth. A finished game is its certain result; a roll
    with no legal reply leaves the position as it is, the turn passing back.
    """
    a = np.asarray(afterstates, dtype=np.int8)
    if plies == 0:
        return np.asarray(afterstate_probabilities(evaluator, roots, a, parent), np.float64)
    game_points = engine.game_value(a)
    p = outcome(game_points).astype(np.float64)
    live = game_points == 0
    if not live.any():
        return p
    table = every_roll(evaluator, a[live][:, ::-1], prune)
    best = table.best
    if plies > 1:
        replies = table.plays.reshape(-1, *a.shape[1:])
        best = ply_probabilities(evaluator, replies, plies - 1, prune=prune).reshape(best.shape)
    p[live] = invert(mean_over_rolls(best))[table.inverse]
    return p


def top_k(scores: np.ndarray, parent: np.ndarray, k: int) -> np.ndarray:
    """Mask of the best `k` finite scores of each parent's group (the first on ties; none
    for `k` 0)."""
    scores = np.asarray(scores, dtype=np.float64)
    parent = np.asarray(parent, dtype=np.int64)
    if k < 1:
        return np.zeros(len(scores), dtype=bool)
    n = int(parent.max()) + 1 if len(parent) else 0
    return _top_k(np.where(np.isnan(scores), -np.inf, scores), parent, n, k) & np.isfinite(scores)


@lazy_jit(fastmath=False)
def _top_k(scores, parent, n, k):  # pragma: no cover - numba
    """Mask of the best `k` scores of each parent 0..n-1 (the first on ties), in one pass:
    each parent's best rows so far kept sorted, a row entering only if it beats the last."""
    held = np.zeros(n, np.int64)
    best = np.empty((n, k))
    rows = np.empty((n, k), np.int64)
    for r in range(len(parent)):
        g = parent[r]
        e = scores[r]
        j = held[g]
        if j == k:
            if not e > best[g, k - 1]:
                continue
            j = k - 1
        else:
            held[g] = j + 1
        while j > 0 and e > best[g, j - 1]:
            best[g, j] = best[g, j - 1]
            rows[g, j] = rows[g, j - 1]
            j -= 1
        best[g, j] = e
        rows[g, j] = r
    keep = np.zeros(len(parent), np.bool_)
    for g in range(n):
        for j in range(held[g]):
            keep[rows[g, j]] = True
    return keep


@dataclass(frozen=True)
class Searched:
    """The candidates of a `filtered_search`, each at the deepest ply it reached."""

    probabilities: np.ndarray
    """float64 (N, 5): the mover's probabilities at that ply."""
    values: np.ndarray
    """float64 (N,): their ranking value."""
    plies: np.ndarray
    """int64 (N,): the ply each candidate reached (the filters dropped the others)."""


def cubeless(p: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The `Ranking` by cubeless money equity."""
    return np.asarray(equity(p), dtype=np.float64)


def filtered_search(
    evaluator: ValueFunction,
    afterstates: np.ndarray,
    parent: np.ndarray,
    boards: np.ndarray,
    plies: int,
    filter: tuple[int, ...],
    rank: Ranking = cubeless,
    *,
    prune: Pruner | None = None,
    keep: np.ndarray | None = None,
    ply: Callable[[np.ndarray, int], np.ndarray] | None = None,
) -> Searched:
    """Candidates `afterstates` played from `boards[parent]` searched to `plies` through
    move filters: all valued at 0-ply, then at each ply d the best `filter[d - 1]` of each
    board by the last ply's value (`rank` of their probabilities; the first on ties) valued
    at ply d (`ply_probabilities`, pruned by `prune` if given). One evaluation of one ply
    covers all candidates of all boards.

    `keep` (bool (N,)) names candidates valued at every ply whatever the filters (the play
    a player made, which an analysis judges at full depth as GNU Backgammon does); `ply`,
    if given, values candidates at a ply instead of `ply_probabilities` over `evaluator`
    (another program's own n-ply evaluation, as the analysis's GNU Backgammon judge)."""
    n = len(afterstates)
    if ply is None:
        p = ply_probabilities(evaluator, afterstates, 0, boards, parent)
    else:
        p = np.asarray(ply(afterstates, 0), dtype=np.float64)
    values = np.asarray(rank(p, np.arange(n)), dtype=np.float64)
    reached = np.zeros(n, dtype=np.int64)
    for depth in range(1, plies + 1):
        alive = np.where(reached == depth - 1, values, -np.inf)
        chosen = top_k(alive, parent, filter[depth - 1])
        if keep is not None:
            chosen |= keep
        rows = np.flatnonzero(chosen)
        if ply is None:
            p[rows] = ply_probabilities(evaluator, afterstates[rows], depth, prune=prune)
        else:
            p[rows] = ply(afterstates[rows], depth)
        values[rows] = rank(p[rows], rows)
        reached[rows] = depth
    return Searched(p, values, reached)
