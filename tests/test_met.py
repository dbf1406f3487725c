"""Match equity arithmetic against GNU Backgammon (the installed ``gnubg`` package)."""

from __future__ import annotations

import gnubg
import numpy as np
import pytest

from vrhcaby.equity import met

N = 25
GNUBG_MET = gnubg.met(N)  # [pre-Crawford, post-Crawford player 0, player 1]


def test_pre_crawford_table_matches_gnubg() -> None:
    table = np.array(GNUBG_MET[0])
    ours = np.array([[met.match_equity(i, j) for j in range(2, N + 1)] for i in range(2, N + 1)])
    assert np.allclose(ours, table[1:, 1:], atol=1e-6)
    leader = [met.match_equity(1, j, crawford=True) for j in range(2, N + 1)]
    trailer = [met.match_equity(j, 1, crawford=True) for j in range(2, N + 1)]
    assert np.allclose(leader, table[0, 1:], atol=1e-6)
    assert np.allclose(trailer, table[1:, 0], atol=1e-6)


def test_post_crawford_table_matches_gnubg() -> None:
    trailer = [met.match_equity(i, 1) for i in range(1, N + 1)]
    assert np.allclose(trailer, GNUBG_MET[1], atol=1e-6)
    leader = [met.match_equity(1, i) for i in range(1, N + 1)]
    assert np.allclose(leader, 1.0 - np.array(GNUBG_MET[1]), atol=1e-6)


def test_known_kazaross_values() -> None:
    assert met.match_equity(2, 4) == pytest.approx(0.6687)
    assert met.match_equity(4, 2) == pytest.approx(1 - 0.6687)
    assert met.match_equity(1, 2, crawford=True) == pytest.approx(0.67736)
    # Post-Crawford 2-away is worth less than 1-away for the trailer: the leader's free drop.
    assert met.match_equity(2, 1) < met.match_equity(1, 1) == 0.5


def _cube_info(away_me: int, away_opp: int, cube: int, crawford: bool) -> dict:
    length = max(away_me, away_opp) + 1
    return gnubg.cube_info(
        cube, -1, 0, length, (length - away_me, length - away_opp), int(crawford)
    )


SCORES = [
    (a, b, c, cr)
    for a in (1, 2, 3, 4, 5, 7, 9, 13)
    for b in (1, 2, 3, 4, 5, 7, 11)
    for c in (1, 2, 4)
    for cr in (False, True)
    if not (cr and (a == 1) == (b == 1))
]


@pytest.mark.parametrize(("away_me", "away_opp", "cube", "crawford"), SCORES)
def test_emg_conversions_and_gammon_values_match_gnubg(
    away_me: int, away_opp: int, cube: int, crawford: bool
) -> None:
    ci = _cube_info(away_me, away_opp, cube, crawford)
    score = (away_me, away_opp, cube)
    for mwc in (0.1, 0.37, 0.5, 0.83):
        expected = gnubg.mwc_to_eq(mwc, ci)
        ours = met.mwc_to_emg(mwc, *score, crawford=crawford)
        assert ours == pytest.approx(expected, rel=1e-5, abs=2e-5)
    for emg in (-1.3, -0.2, 0.4, 1.0):
        expected = gnubg.eq_to_mwc(emg, ci)
        assert met.emg_to_mwc(emg, *score, crawford=crawford) == pytest.approx(expected, abs=2e-5)
    (wg, wbg), (lg, lbg) = ci["gammonprice"]
    values = met.gammon_values(*score, crawford=crawford)
    assert values == pytest.approx((wg, wbg, lg, lbg), abs=2e-5)


@pytest.mark.parametrize(("away_me", "away_opp", "cube", "crawford"), SCORES[::3])
def test_cubeless_mwc_matches_gnubg_match_evaluation(
    away_me: int, away_opp: int, cube: int, crawford: bool
) -> None:
    """gnubg's cubeless match equity (EMG from gammon prices) converted to MWC."""
    ci = _cube_info(away_me, away_opp, cube, crawford)
    rng = np.random.default_rng(away_me * 100 + away_opp)
    for _ in range(5):
        w = rng.uniform(0.05, 0.95)
        wg, lg = rng.uniform(0, w), rng.uniform(0, 1 - w)
        wbg, lbg = rng.uniform(0, wg), rng.uniform(0, lg)
        p = [w, wg, wbg, lg, lbg]
        emg = 2 * w - 1 + wg * ci["gammonprice"][0][0] - lg * ci["gammonprice"][1][0]
        emg += wbg * ci["gammonprice"][0][1] - lbg * ci["gammonprice"][1][1]
        expected = gnubg.eq_to_mwc(emg, ci)
        ours = met.mwc_from_probabilities(p, away_me, away_opp, cube, crawford=crawford)
        assert ours == pytest.approx(expected, abs=5e-5)


def test_mwc_vectorises() -> None:
    p = np.array([[0.6, 0.2, 0.01, 0.1, 0.0], [0.3, 0.05, 0.0, 0.2, 0.02]])
    batch = met.mwc_from_probabilities(p, 5, 3)
    singles = [met.mwc_from_probabilities(row, 5, 3) for row in p]
    assert np.allclose(batch, singles)


def test_dead_take_points() -> None:
    # Money-like score far from the end approaches 25%.
    assert met.dead_take_point(25, 25) == pytest.approx(0.25, abs=0.02)
    # Post-Crawford, the leader at 1-away doubled by a 2-away trailer: pass leads to DMP.
    assert met.dead_take_point(1, 2) == pytest.approx(0.5)
    table = gnubg.met(N)[0]
    for taker, doubler in [(4, 2), (2, 4), (5, 3), (7, 7), (3, 9)]:
        assert met.dead_take_point(taker, doubler) == pytest.approx(_tp(taker, doubler, table))


def _tp(away_taker: int, away_doubler: int, table: list[list[float]]) -> float:
    """Plain reference: pass loses 1 point, take plays for 2."""

    def mwc(a: int, b: int) -> float:
        if a <= 0:
            return 1.0
        if b <= 0:
            return 0.0
        return table[a - 1][b - 1]

    pass_ = mwc(away_taker, away_doubler - 1)
    win, lose = mwc(away_taker - 2, away_doubler), mwc(away_taker, away_doubler - 2)
    return (pass_ - lose) / (win - lose)


def test_bad_scores_raise() -> None:
    with pytest.raises(ValueError, match="away_me"):
        met.match_equity(0, 3)
    with pytest.raises(ValueError, match="beyond"):
        met.match_equity(26, 3)
    with pytest.raises(ValueError, match="Crawford"):
        met.match_equity(3, 4, crawford=True)
