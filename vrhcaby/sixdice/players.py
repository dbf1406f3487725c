"""Players of the six-dice game: random, greedy, the optimal solitaire player, and specs.

Every player answers two questions about a `TurnView`: `announce` (harsh variant: the
category to play for after the first throw) and `decide` (score a category now, or set
some dice aside and re-throw the rest).

The optimal player maximises the expected final score (points plus unspent bonus) of
one sheet by dynamic programming over score-sheet states (open categories, bonus
points). Within a turn only the re-throws left matter: the free ones plus the banked
bonus form one budget, each re-throw spends one, and what is left at the stop is the
new bank. The bank never exceeds two points per filled category, so the exact state
space is 4096 open-sets times at most 25 bank values and needs no cap; the table takes
a few seconds to compute and is cached under the user's cache directory.

The within-turn dynamic program is shared by every player that values sheet states
(the optimal table, the learned network): given the value of each sheet state after the
turn, `turn_dp` gives the value of every outcome with every re-throw budget, vectorised
over the 462 sorted outcomes through the keep -> outcome transition matrix.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.sixdice import (
    ALL_OPEN,
    FREE_RETHROWS,
    KEEP_PROB,
    KEEPS,
    N_CATEGORIES,
    OUTCOME_AS_KEEP,
    OUTCOME_PROB,
    SCORES,
    SUBKEEPS,
    Game,
    RuleError,
    TurnView,
    best_over_subkeeps,
    mask_categories,
    outcome_index,
)
from vrhcaby.base.files import cache_dir, read_arrays, save_atomic

MAX_BANK = 2 * N_CATEGORIES
"""The most bonus points a sheet can hold (two per filled category)."""

SheetValues = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""Expected future points (final bank included) of sheet states: (open masks, banks)."""


@dataclass(frozen=True)
class Score:
    """Write the dice in this category now."""

    category: int


@dataclass(frozen=True)
class Rethrow:
    """Set these dice aside and throw the others."""

    keep: tuple[int, ...]


Action = Score | Rethrow


class DiceAgent(Protocol):
    """A player of the six-dice game."""

    name: str

    def announce(self, view: TurnView) -> int: ...

    def decide(self, view: TurnView) -> Action: ...


def keep_dice(keep: int) -> tuple[int, ...]:
    """The dice of a keep index, ascending."""
    return tuple(int(f) + 1 for f in np.repeat(np.arange(6), KEEPS[keep]))


def _open_list(view: TurnView) -> list[int]:
    cats = list(mask_categories(view.open))
    if not cats:
        raise RuleError("the sheet is full")
    return cats


# --- the within-turn dynamic program -------------------------------------------------


def turn_dp(stop: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Values of each outcome with n = 0..L-1 re-throws left, given the value of stopping
    there: `stop[n]` is (462, S_n). Also the value of each keep, `keep[n]` (924, S_{n+1}),
    when re-throwing with n + 1 left.

    Columns are prefixes: level n covers the first S_n columns (S_n non-increasing), so a
    batch can hold turns with different re-throw budgets without computing unused levels.
    """
    value = [np.asarray(stop[0], dtype=np.float64)]
    keep = []
    for n in range(1, len(stop)):
        kv = KEEP_PROB @ value[n - 1][:, : stop[n].shape[1]]
        keep.append(kv)
        value.append(np.maximum(stop[n], best_over_subkeeps(kv)[OUTCOME_AS_KEEP]))
    return value, keep


@dataclass
class TurnTables:
    """Everything about one turn for a batch of sheets (see `turn_tables`)."""

    after: np.ndarray
    """(S, 12, L): value of the sheet after writing category c with n re-throws left as
    bank; -inf for closed categories."""
    stop: list[np.ndarray]
    """stop[n] (462, S_n): value of stopping in the best open category with n left."""
    value: list[np.ndarray]
    """value[n] (462, S_n): value of each outcome with n re-throws left, played best."""
    keep: list[np.ndarray]
    """keep[n] (924, S_{n+1}): value of each keep when re-throwing with n + 1 left."""


def turn_tables(masks: np.ndarray, budgets: np.ndarray, values: SheetValues) -> TurnTables:
    """The turn's dynamic program for sheets with these open-sets and re-throw budgets
    (free re-throws plus bank; non-increasing), for a valuation of the sheets after it.
    """
    masks = np.asarray(masks, dtype=np.int64)
    budgets = np.asarray(budgets, dtype=np.int64)
    levels = int(budgets[0]) + 1
    after = np.full((len(masks), N_CATEGORIES, levels), -np.inf)
    bits = (masks[:, None] >> np.arange(N_CATEGORIES)) & 1
    rows, cats = np.nonzero(bits)
    subs = masks[rows] & ~(1 << cats)
    banks = np.arange(levels)
    flat = values(np.repeat(subs, levels), np.tile(banks, len(subs)))
    after[rows, cats] = np.asarray(flat, dtype=np.float64).reshape(-1, levels)
    stop = []
    for n in range(levels):
        sn = int((budgets >= n).sum())
        best = np.full((len(SCORES), sn), -np.inf)
        for c in range(N_CATEGORIES):
            np.maximum(best, SCORES[:, c, None] + after[None, :sn, c, n], out=best)
        stop.append(best)
    value, keep = turn_dp(stop)
    return TurnTables(after, stop, value, keep)


_POPCOUNT = np.array([bin(m).count("1") for m in range(ALL_OPEN + 1)])


def solve(harsh: bool = False, max_open: int = N_CATEGORIES) -> np.ndarray:
    """Expected future points of every sheet state under optimal solitaire play.

    Returns (4096, MAX_BANK + 1) indexed by open-set mask and bank (the harsh variant has
    no bank: column 0 only, (4096, 1)). Entries for unreachable states (a bank above two
    per filled category, or more than `max_open` open categories) are NaN.
    """
    if harsh:
        return _solve_harsh(max_open)
    table = np.full((ALL_OPEN + 1, MAX_BANK + 1), np.nan)
    table[0] = np.arange(MAX_BANK + 1)

    def lookup(masks: np.ndarray, banks: np.ndarray) -> np.ndarray:
        return table[masks, banks]

    for k in range(1, max_open + 1):
        masks = np.flatnonzero(k == _POPCOUNT)
        filled = N_CATEGORIES - k
        levels = 2 * filled + FREE_RETHROWS + 1
        tt = turn_tables(masks, np.full(len(masks), levels - 1), lookup)
        table[masks, : 2 * filled + 1] = (OUTCOME_PROB @ np.array(tt.value[FREE_RETHROWS:])).T
    return table


def category_turn_values(bank_weight: float) -> np.ndarray:
    """Per category c, the value (3, 462, 12) of each outcome with 0..2 re-throws left
    when the turn must end in c, counting each unused re-throw as `bank_weight` points.
    """
    stop = [SCORES + bank_weight * n for n in range(FREE_RETHROWS + 1)]
    return np.array(turn_dp(stop)[0])


def _solve_harsh(max_open: int) -> np.ndarray:
    best = category_turn_values(0.0)[FREE_RETHROWS]
    table = np.full((ALL_OPEN + 1, 1), np.nan)
    table[0] = 0.0
    for k in range(1, max_open + 1):
        masks = np.flatnonzero(k == _POPCOUNT)
        bits = (masks[:, None] >> np.arange(N_CATEGORIES)) & 1
        after = np.where(bits, table[masks[:, None] & ~(1 << np.arange(N_CATEGORIES)), 0], -np.inf)
        table[masks, 0] = OUTCOME_PROB @ (best[:, None, :] + after[None]).max(-1)
    return table


# --- players -------------------------------------------------------------------------


class ValueAgent:
    """Plays each turn exactly (expectimax over the dice) for a valuation of sheet states.

    With the optimal table as `values` this is the optimal solitaire player; with a
    learned network it is the learned agent. `harsh_values` values sheets in the harsh
    variant (no bank); without it the agent refuses harsh games.
    """

    def __init__(
        self, name: str, values: SheetValues | None, harsh_values: SheetValues | None = None
    ) -> None:
        self.name = name
        self.values = values
        self.harsh_values = harsh_values
        self._memo: tuple[int, int, np.ndarray, np.ndarray] | None = None

    def _turn(self, open_set: int, levels: int) -> tuple[np.ndarray, np.ndarray]:
        """Outcome values (levels, 462) and sheet values after each category (12, levels)."""
        memo = self._memo
        if memo is None or memo[0] != open_set or memo[1] < levels:
            if self.values is None:
                raise RuleError(f"{self.name} plays only the harsh variant")
            tt = turn_tables(np.array([open_set]), np.array([levels - 1]), self.values)
            memo = (open_set, levels, np.array(tt.value)[:, :, 0], tt.after[0])
            self._memo = memo
        return memo[2], memo[3]

    def options(self, view: TurnView) -> list[tuple[Action, float]]:
        """Every sensible action with the expected points still to come (final bank
        included) after taking it and playing on as this agent; best first.
        """
        cats = _open_list(view)
        d = outcome_index(view.dice)
        if view.harsh:
            return self._harsh_options(view, cats, d)
        n = view.rethrows_left
        u, after = self._turn(view.open, n + 1)
        opts: list[tuple[Action, float]] = [
            (Score(c), float(SCORES[d, c] + after[c, n])) for c in cats
        ]
        if n > 0:
            kv = KEEP_PROB @ u[n - 1]
            opts += [(Rethrow(keep_dice(k)), float(kv[k])) for k in _keeps_from(d)]
        return sorted(opts, key=lambda o: -o[1])

    def _harsh_options(self, view: TurnView, cats: list[int], d: int) -> list[tuple[Action, float]]:
        if self.harsh_values is None:
            raise RuleError(f"{self.name} does not play the harsh variant")
        c = view.announced
        if c is None:
            raise RuleError("announce a category first")
        rest = float(self.harsh_values(np.array([view.open & ~(1 << c)]), np.zeros(1))[0])
        opts: list[tuple[Action, float]] = [(Score(c), float(SCORES[d, c]) + rest)]
        if view.free_rethrows > 0:
            kv = KEEP_PROB @ _harsh_table()[view.free_rethrows - 1][:, c]
            opts += [(Rethrow(keep_dice(k)), float(kv[k]) + rest) for k in _keeps_from(d)]
        return sorted(opts, key=lambda o: -o[1])

    def announce_options(self, view: TurnView) -> list[tuple[int, float]]:
        """Harsh variant: each open category with the expected points to come; best first."""
        if self.harsh_values is None:
            raise RuleError(f"{self.name} does not play the harsh variant")
        cats = _open_list(view)
        d = outcome_index(view.dice)
        rest = self.harsh_values(
            np.array([view.open & ~(1 << c) for c in cats]), np.zeros(len(cats), dtype=np.int64)
        )
        turn = _harsh_table()[FREE_RETHROWS][d]
        opts = [(c, float(turn[c] + r)) for c, r in zip(cats, rest, strict=True)]
        return sorted(opts, key=lambda o: -o[1])

    def announce(self, view: TurnView) -> int:
        return self.announce_options(view)[0][0]

    def decide(self, view: TurnView) -> Action:
        return self.options(view)[0][0]


def _keeps_from(outcome: int) -> list[int]:
    """Keeps that can be set aside from an outcome, leaving at least one die to throw."""
    return [int(k) for k in np.unique(SUBKEEPS[outcome]) if KEEPS[k].sum() < 6]


_CATEGORY_TABLES: dict[float, np.ndarray] = {}


def _category_table(bank_weight: float) -> np.ndarray:
    if bank_weight not in _CATEGORY_TABLES:
        _CATEGORY_TABLES[bank_weight] = category_turn_values(bank_weight)
    return _CATEGORY_TABLES[bank_weight]


def _harsh_table() -> np.ndarray:
    return _category_table(0.0)


class GreedyAgent:
    """Chases the open category with the best expected score this turn and stops when
    that is worth more than re-throwing (an unused free re-throw counting one point).

    It looks at this turn only and never spends bonus throws.
    """

    name = "greedy"

    def _target(self, view: TurnView) -> tuple[int, int, np.ndarray]:
        table = _category_table(0.0 if view.harsh else 1.0)
        d = outcome_index(view.dice)
        cats = _open_list(view)
        r = view.free_rethrows
        c = view.announced
        if c is None:
            c = cats[int(np.argmax(table[r][d, cats]))]
        return c, d, table

    def announce(self, view: TurnView) -> int:
        return self._target(view)[0]

    def decide(self, view: TurnView) -> Action:
        c, d, table = self._target(view)
        r = view.free_rethrows
        if r == 0:
            return Score(c)
        kv = KEEP_PROB @ table[r - 1][:, c]
        keeps = _keeps_from(d)
        k = keeps[int(np.argmax(kv[keeps]))]
        bank = 0 if view.harsh else r
        if SCORES[d, c] + bank >= kv[k]:
            return Score(c)
        return Rethrow(keep_dice(k))


class RandomAgent:
    """Keeps each die with probability 1/2 and re-throws while free re-throws last,
    stopping early with probability 1/3 each time; scores a random open category.
    """

    name = "random"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def announce(self, view: TurnView) -> int:
        return int(self.rng.choice(_open_list(view)))

    def decide(self, view: TurnView) -> Action:
        if view.free_rethrows > 0 and self.rng.random() >= 1 / 3:
            kept = self.rng.random(len(view.dice)) < 0.5
            if not kept.all():
                return Rethrow(tuple(d for d, k in zip(view.dice, kept, strict=True) if k))
        if view.announced is not None:
            return Score(view.announced)
        return Score(int(self.rng.choice(_open_list(view))))


# --- the optimal table, agent specs, games -------------------------------------------

TABLE_VERSION = 2
"""2: the cached table carries its CRC-32 (a file damaged in place is computed again)."""


def optimal_table_path(harsh: bool = False) -> Path:
    """Where the optimal table of a variant is cached."""
    return cache_dir() / f"sixdice-optimal-{'harsh' if harsh else 'standard'}-v{TABLE_VERSION}.npz"


def optimal_table(harsh: bool = False) -> np.ndarray:
    """The optimal solitaire table (see `solve`), from the cache or computed and cached
    (again, when the cached file is not a sound table: a crash, a full disk, or bytes
    changed in place, which its CRC-32 finds: a millisecond for its 0.8 MB)."""
    path = optimal_table_path(harsh)
    if path.exists():
        try:
            cached = read_arrays(path)
        except (OSError, ValueError):
            cached = {}
        table, crc = cached.get("table"), cached.get("checksum")
        shape = (1 << N_CATEGORIES, MAX_BANK + 1)
        if (
            isinstance(table, np.ndarray)
            and table.shape == shape
            and crc is not None
            and crc.shape == (1,)
            and int(crc[0]) == zlib.crc32(np.ascontiguousarray(table).data)
        ):
            return table
    table = solve(harsh)
    checksum = np.array([zlib.crc32(np.ascontiguousarray(table).data)], np.uint32)
    save_atomic(path, {"table": table, "checksum": checksum})
    return table


def optimal_expected_score(harsh: bool = False) -> float:
    """The game's optimum: expected final total of a fresh sheet under optimal play."""
    return float(optimal_table(harsh)[ALL_OPEN, 0])


def table_values(table: np.ndarray) -> SheetValues:
    """Sheet values looked up in a table from `solve`."""

    def values(masks: np.ndarray, banks: np.ndarray) -> np.ndarray:
        return table[np.asarray(masks, dtype=np.int64), np.asarray(banks, dtype=np.int64)]

    return values


def optimal_agent(harsh: bool = False) -> ValueAgent:
    """The optimal solitaire player (maximises its own expected final total)."""
    if harsh:
        return ValueAgent("optimal", None, table_values(optimal_table(True)))
    return ValueAgent("optimal", table_values(optimal_table(False)))


def apply(game: Game, action: Action) -> None:
    """Carry out an agent's action in the game."""
    if isinstance(action, Score):
        game.score(action.category)
    else:
        game.rethrow(action.keep)


def play_game(agents: Sequence[DiceAgent], rng: np.random.Generator, harsh: bool = False) -> Game:
    """One game with these agents seated in this order; the finished game."""
    game = Game(len(agents), rng, harsh=harsh)
    while not game.over:
        agent = agents[game.player]
        if harsh and game.announced is None:
            game.announce(agent.announce(game.view()))
        apply(game, agent.decide(game.view()))
    return game


# --- batched solitaire self-play -----------------------------------------------------

_KEEP_CDF = np.cumsum(KEEP_PROB, axis=1)
_OUTCOME_CDF = np.cumsum(OUTCOME_PROB)


@dataclass
class SelfPlay:
    """Record of batched solitaire games, turn by turn (T turns, G games).

    `masks`, `banks`: (T + 1, G) sheet states at each turn start (the last is the end);
    `points`: (T, G) points written each turn; `backups`: (T, G) the expected points to
    come at each turn start by the valuation played (the one-step expected backup).
    """

    masks: np.ndarray
    banks: np.ndarray
    points: np.ndarray
    backups: np.ndarray

    @property
    def totals(self) -> np.ndarray:
        """Final totals (points plus unspent bonus), (G,)."""
        return self.points.sum(0) + self.banks[-1]


def self_play(
    values: SheetValues,
    n_games: int,
    rng: np.random.Generator,
    start_open: int = ALL_OPEN,
    start_bank: int = 0,
    explore: float = 0.0,
) -> SelfPlay:
    """Play `n_games` solitaire standard games at once, each turn exactly for `values`.

    With probability `explore` a stop writes a random open category instead of the best
    (so a learner also sees sheets its own choices avoid).
    """
    g_all = np.arange(n_games)
    masks = np.full(n_games, start_open, dtype=np.int64)
    banks = np.full(n_games, start_bank, dtype=np.int64)
    turns = int(_POPCOUNT[start_open])
    rec_m, rec_b, points, backups = [masks.copy()], [banks.copy()], [], []
    for _ in range(turns):
        budget = banks + FREE_RETHROWS
        order = np.argsort(-budget, kind="stable")
        col = np.empty(n_games, dtype=np.int64)
        col[order] = np.arange(n_games)
        tt = turn_tables(masks[order], budget[order], values)
        backups.append(np.array([OUTCOME_PROB @ tt.value[budget[g]][:, col[g]] for g in g_all]))
        dice = np.searchsorted(_OUTCOME_CDF, rng.random(n_games), side="right").clip(max=461)
        left = budget.copy()
        pts = np.zeros(n_games, dtype=np.int64)
        active = g_all
        while len(active):
            still = []
            for n in np.unique(left[active]):
                g = active[left[active] == n]
                c, d = col[g], dice[g]
                stop_here = tt.stop[n][d, c]
                if n > 0:
                    sub = SUBKEEPS[d]
                    kv = tt.keep[n - 1][sub, c[:, None]]
                    best = np.argmax(kv, axis=1)
                    go = kv[np.arange(len(g)), best] > stop_here + 1e-9
                    gr = g[go]
                    cdf = _KEEP_CDF[sub[go, best[go]]]
                    dice[gr] = (cdf < rng.random(len(gr))[:, None]).sum(1).clip(max=461)
                    left[gr] -= 1
                    still.append(gr)
                    g, c, d = g[~go], c[~go], d[~go]
                cat = np.argmax(SCORES[d] + tt.after[c, :, n], axis=1)
                wild = rng.random(len(g)) < explore
                if wild.any():
                    noise = rng.random((int(wild.sum()), N_CATEGORIES))
                    cat[wild] = np.argmax(np.where(tt.after[c[wild], :, n] > -np.inf, noise, -1), 1)
                pts[g] = SCORES[d, cat]
                masks[g] &= ~(1 << cat)
                banks[g] = n
            active = np.concatenate(still) if still else np.zeros(0, dtype=np.int64)
        points.append(pts)
        rec_m.append(masks.copy())
        rec_b.append(banks.copy())
    return SelfPlay(np.array(rec_m), np.array(rec_b), np.array(points), np.array(backups))
