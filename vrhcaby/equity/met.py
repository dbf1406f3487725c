"""Match equity tables and the arithmetic of match play.

A match equity table (MET) gives the match winning chance (MWC) of a side at
the start of a game, from how many points each side still needs ("away").
The default table is Kazaross-XG2, GNU Backgammon's default MET
(``met/Kazaross-XG2.xml``; see ``vrhcaby/equity/data/kazaross-xg2.json`` for the
source and notice). It covers scores up to 25-away.

Conventions follow GNU Backgammon's ``matchequity.c`` (J. Thyssen):

* The pre-Crawford table's row for 1-away is the Crawford game.
* Once a side is 1-away after the Crawford game, games are post-Crawford and
  the post-Crawford table (trailer's MWC against a 1-away leader) applies.
* :meth:`MatchEquityTable.outcome` (gnubg's ``getME``): when the current game
  is the Crawford game or post-Crawford, a resulting 1-away score is
  post-Crawford; otherwise reaching 1-away makes the next game the Crawford
  game.
* Like gnubg, the post-Crawford entry at 25-away is not read from the file but
  extended with gnubg's post-Crawford recursion (trailer's gammon rate 0.25,
  free drops worth 1.5% at 2-away and 0.4% at 4-away), since a 25-point match
  never reaches that score post-Crawford.

"EMG" (equity in money-game units, gnubg's "normalised equity") maps MWC
linearly so that winning the current cube is +1 and losing it is -1.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "KAZAROSS_XG2",
    "GammonValues",
    "MatchEquityTable",
    "as_probabilities",
    "cash_points",
    "dead_take_point",
    "emg_to_mwc",
    "gammon_ratios",
    "gammon_values",
    "load_met",
    "match_equity",
    "mwc_from_probabilities",
    "mwc_to_emg",
]

_DATA = Path(__file__).with_name("data")

# gnubg's post-Crawford extension (matchequity.c: GAMMONRATE, free-drop values).
_PC_GAMMON_RATE = 0.25
_PC_FREE_DROP_2 = 0.015
_PC_FREE_DROP_4 = 0.004


class GammonValues(NamedTuple):
    """Extra value of gammons and backgammons at a score, in EMG units (gnubg's gammon price).

    ``win_gammon`` is what a won gammon adds over a single win, ``win_backgammon``
    what a backgammon adds over a gammon; likewise for losses. Money values are 1.
    """

    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float


@dataclass(frozen=True, eq=False)
class MatchEquityTable:
    """A match equity table: pre-Crawford ``(n, n)`` and post-Crawford ``(n,)`` MWCs."""

    name: str
    pre_crawford: NDArray[np.float64]
    post_crawford: NDArray[np.float64]

    @property
    def length(self) -> int:
        """The longest match (in points away) the table covers."""
        return int(self.pre_crawford.shape[0])

    def _check(self, away_me: int, away_opp: int, crawford: bool) -> None:
        for name, away in (("away_me", away_me), ("away_opp", away_opp)):
            if not isinstance(away, int | np.integer) or away < 1:
                raise ValueError(f"{name} must be a positive integer, got {away!r}")
            if away > self.length:
                raise ValueError(f"{name}={away} is beyond the {self.name} table ({self.length})")
        if crawford and (away_me == 1) == (away_opp == 1):
            raise ValueError(
                f"the Crawford game needs one side 1-away, got {away_me}-away, {away_opp}-away"
            )

    def equity(self, away_me: int, away_opp: int, *, crawford: bool = False) -> float:
        """MWC of 'me' at the start of a game at this score.

        ``crawford=True`` marks the Crawford game; a score with a side 1-away
        and ``crawford=False`` is post-Crawford.
        """
        self._check(away_me, away_opp, crawford)
        return self._lookup(away_me, away_opp, post=not crawford)

    def _lookup(self, away_me: int, away_opp: int, *, post: bool) -> float:
        """MWC at a score where both still need points; ``post`` selects post-Crawford."""
        if post and away_opp == 1:
            return float(self.post_crawford[away_me - 1])
        if post and away_me == 1:
            return 1.0 - float(self.post_crawford[away_opp - 1])
        return float(self.pre_crawford[away_me - 1, away_opp - 1])

    def outcome(
        self, away_me: int, away_opp: int, points: int, i_win: bool, *, crawford: bool = False
    ) -> float:
        """MWC of 'me' after the current game ends with ``points`` to the winner (gnubg's getME)."""
        self._check(away_me, away_opp, crawford)
        return self._outcome(away_me, away_opp, points, i_win, crawford)

    def _outcome(
        self, away_me: int, away_opp: int, points: int, i_win: bool, crawford: bool
    ) -> float:
        me, opp = (away_me - points, away_opp) if i_win else (away_me, away_opp - points)
        if me <= 0:
            return 1.0
        if opp <= 0:
            return 0.0
        post = crawford or away_me == 1 or away_opp == 1
        return self._lookup(me, opp, post=post)


def _extend_post_crawford(post: NDArray[np.float64], start: int) -> NDArray[np.float64]:
    """gnubg's ``initPostCrawfordMET`` from index ``start`` on (Zadeh's recursion)."""
    out = post.copy()
    for i in range(start, out.shape[0]):
        four = out[i - 4] if i >= 4 else 1.0
        two = out[i - 2] if i >= 2 else 1.0
        out[i] = _PC_GAMMON_RATE * 0.5 * four + (1 - _PC_GAMMON_RATE) * 0.5 * two
        if i == 1:
            out[i] -= _PC_FREE_DROP_2
        if i == 3:
            out[i] -= _PC_FREE_DROP_4
    return out


def load_met(path: str | Path) -> MatchEquityTable:
    """Read a table in this package's JSON layout (see ``data/kazaross-xg2.json``)."""
    data = json.loads(Path(path).read_text())
    pre = np.asarray(data["pre_crawford"], dtype=np.float64)
    post = np.asarray(data["post_crawford"], dtype=np.float64)
    n = int(data["length"])
    if pre.shape != (n, n) or post.shape != (n,):
        raise ValueError(
            f"{path}: expected a {n}x{n} pre-Crawford table and {n} post-Crawford values"
        )
    pre.setflags(write=False)
    post = _extend_post_crawford(post, n - 1)
    post.setflags(write=False)
    return MatchEquityTable(str(data["name"]), pre, post)


KAZAROSS_XG2: MatchEquityTable = load_met(_DATA / "kazaross-xg2.json")


def match_equity(
    away_me: int, away_opp: int, *, crawford: bool = False, met: MatchEquityTable = KAZAROSS_XG2
) -> float:
    """MWC of the side needing ``away_me`` points against one needing ``away_opp``.

    >>> round(match_equity(2, 4), 4)
    0.6687
    >>> match_equity(1, 1)
    0.5
    """
    return met.equity(away_me, away_opp, crawford=crawford)


def as_probabilities(p: ArrayLike) -> NDArray[np.float64]:
    """``p`` as a float array with a trailing axis of 5 (raises ValueError otherwise)."""
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] != 5:
        raise ValueError(f"probabilities need a trailing axis of 5, got shape {arr.shape}")
    return arr


@cache
def _outcomes(
    met: MatchEquityTable, away_me: int, away_opp: int, cube_value: int, crawford: bool
) -> NDArray[np.float64]:
    """MWCs after winning and losing 1, 2 and 3 cubes: ``[[w1, w2, w3], [l1, l2, l3]]``."""
    met._check(away_me, away_opp, crawford)
    return np.array(
        [
            [met._outcome(away_me, away_opp, k * cube_value, win, crawford) for k in (1, 2, 3)]
            for win in (True, False)
        ]
    )


def mwc_from_probabilities(
    p: ArrayLike,
    away_me: int,
    away_opp: int,
    cube_value: int = 1,
    *,
    crawford: bool = False,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> NDArray[np.float64] | float:
    """Cubeless MWC of the side on roll: each game result weighted by its MWC.

    ``p`` holds the five cumulative probabilities (win, win gammon, win backgammon,
    lose gammon, lose backgammon) with a trailing axis of 5.
    """
    arr = as_probabilities(p)
    (w1, w2, w3), (l1, l2, l3) = _outcomes(met, away_me, away_opp, cube_value, crawford)
    win, wg, wbg, lg, lbg = np.moveaxis(arr, -1, 0)
    out = (
        (win - wg) * w1
        + (wg - wbg) * w2
        + wbg * w3
        + (1.0 - win - lg) * l1
        + (lg - lbg) * l2
        + lbg * l3
    )
    return float(out) if out.ndim == 0 else out


def _win_lose(
    met: MatchEquityTable, away_me: int, away_opp: int, cube_value: int, crawford: bool
) -> tuple[float, float]:
    outcomes = _outcomes(met, away_me, away_opp, cube_value, crawford)
    return float(outcomes[0, 0]), float(outcomes[1, 0])


def mwc_to_emg(
    mwc: ArrayLike,
    away_me: int,
    away_opp: int,
    cube_value: int = 1,
    *,
    crawford: bool = False,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> NDArray[np.float64] | float:
    """MWC to EMG: winning ``cube_value`` points maps to +1, losing them to -1 (gnubg's mwc2eq)."""
    win, lose = _win_lose(met, away_me, away_opp, cube_value, crawford)
    out = (2.0 * np.asarray(mwc, dtype=np.float64) - (win + lose)) / (win - lose)
    return float(out) if out.ndim == 0 else out


def emg_to_mwc(
    emg: ArrayLike,
    away_me: int,
    away_opp: int,
    cube_value: int = 1,
    *,
    crawford: bool = False,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> NDArray[np.float64] | float:
    """EMG to MWC, the inverse of :func:`mwc_to_emg` (gnubg's eq2mwc)."""
    win, lose = _win_lose(met, away_me, away_opp, cube_value, crawford)
    out = 0.5 * (np.asarray(emg, dtype=np.float64) * (win - lose) + (win + lose))
    return float(out) if out.ndim == 0 else out


def gammon_values(
    away_me: int,
    away_opp: int,
    cube_value: int = 1,
    *,
    crawford: bool = False,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> GammonValues:
    """Gammon and backgammon values at a score (gnubg's ``getGammonPrice``).

    Each is the extra MWC of that result over the next smaller one, divided by
    half the MWC swing of a single game, so cubeless EMG is
    ``2W - 1 + win_gammon*Wg - lose_gammon*Lg + win_backgammon*Wbg - lose_backgammon*Lbg``.
    """
    (w1, w2, w3), (l1, l2, l3) = _outcomes(met, away_me, away_opp, cube_value, crawford)
    half = (w1 - l1) / 2.0
    if half <= 1e-7:
        return GammonValues(0.0, 0.0, 0.0, 0.0)
    wg, lg = (w2 - w1) / half, (l1 - l2) / half
    wbg, lbg = (w3 - w2) / half, (l2 - l3) / half
    return GammonValues(*(max(0.0, v) for v in (wg, wbg, lg, lbg)))


def dead_take_point(
    away_taker: int,
    away_doubler: int,
    cube_value: int = 1,
    *,
    crawford: bool = False,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> float:
    """Winning chance the taker needs to take a double from ``cube_value`` to twice that.

    Gammonless and with a dead cube after the take: passing loses ``cube_value``
    points, taking plays one game for twice the cube.
    """
    pass_ = met.outcome(away_taker, away_doubler, cube_value, False, crawford=crawford)
    win = met.outcome(away_taker, away_doubler, 2 * cube_value, True, crawford=crawford)
    lose = met.outcome(away_taker, away_doubler, 2 * cube_value, False, crawford=crawford)
    return (pass_ - lose) / (win - lose)


def _cube_prime(away_a: int, away_b: int, cube: int) -> int:
    """Cube value after a take, counting the taker's free (automatic) redouble."""
    return 2 * cube if away_a - 1 < 2 * cube <= away_b - 1 else cube


def gammon_ratios(
    arr: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Gammon-only and backgammon fractions of wins and of losses (gnubg's rG0, rBG0, rG1, rBG1)."""
    win, wg, wbg, lg, lbg = np.moveaxis(arr, -1, 0)
    lose = 1.0 - win
    with np.errstate(divide="ignore", invalid="ignore"):
        g0 = np.where(win > 0.0, (wg - wbg) / win, 0.0)
        bg0 = np.where(win > 0.0, wbg / win, 0.0)
        g1 = np.where(lose > 0.0, (lg - lbg) / lose, 0.0)
        bg1 = np.where(lose > 0.0, lbg / lose, 0.0)
    return g0, bg0, g1, bg1


def cash_points(
    p: ArrayLike,
    away_me: int,
    away_opp: int,
    cube_value: int = 1,
    *,
    crawford: bool = False,
    met: MatchEquityTable = KAZAROSS_XG2,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Live-cube cash points at a score for the side on roll and its opponent (gnubg's GetPoints).

    Each is the winning chance (of that side) from which the other side should
    pass a double; the opponent's live take point, in its own winning chances,
    is ``1 - cash_me``. Only the gammon and backgammon ratios in ``p`` matter.
    The points are found from the highest cube that is still alive down to
    ``cube_value``: where the doubled cube would be dead, from dead-cube
    take-or-pass arithmetic; below that, from the opponent's cash point one
    cube level higher (J. Thyssen's generalisation of Janowski to match play).
    """
    arr = as_probabilities(p)
    g0, bg0, g1, bg1 = gammon_ratios(arr)
    gammons = ((g0, bg0), (g1, bg1))
    aways = (away_me, away_opp)
    i, j = away_me - 1, away_opp - 1

    def me_of(k: int, points: int, k_wins: bool) -> float:
        """MWC of side k after side k wins (or loses) ``points``."""
        mine = met._outcome(away_me, away_opp, points, k_wins == (k == 0), crawford)
        return mine if k == 0 else 1.0 - mine

    def result(k: int, base: int, k_wins: bool) -> NDArray[np.float64]:
        """MWC of side k when a game for ``base`` ends with k winning or losing, with gammons."""
        g, bg = gammons[k] if k_wins else gammons[1 - k]
        return (
            (1.0 - g - bg) * me_of(k, base, k_wins)
            + g * me_of(k, 2 * base, k_wins)
            + bg * me_of(k, 3 * base, k_wins)
        )

    dead, levels = cube_value, 0
    while i >= 2 * dead and j >= 2 * dead:
        levels += 1
        dead *= 2
    above: list[NDArray[np.float64]] = []
    for n in range(levels, -1, -1):
        cube = cube_value << n
        here: list[NDArray[np.float64]] = []
        for k in (0, 1):
            dp = me_of(k, cube, True)
            if i < 2 * cube or j < 2 * cube:
                prime = _cube_prime(aways[k], aways[1 - k], cube)
                dtl = result(k, 2 * prime, False)
                dtw = result(k, 2 * prime, True)
                here.append((dtl - dp) / (dtl - dtw))
            else:
                rdp = me_of(k, 2 * cube, False)
                dtw = result(k, 2 * cube, True)
                here.append(1.0 - above[1 - k] * (dp - dtw) / (rdp - dtw))
        above = here
    return above[0], above[1]
