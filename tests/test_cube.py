"""Cube decisions against GNU Backgammon's own cubeful evaluations, and known facts.

The oracle: ``gnubg.findbestmoves`` with a cubeful 0-ply evaluation scores each
play by the cubeful equity of the resulting position for the opponent on roll
(gnubg's Janowski code, ``Cl2CfMoney``/``Cl2CfMatch`` plus the opponent's
doubling option). Feeding our code the same position's cubeless probabilities
(``gnubg.evaluate``, same network) must give the same equity. The installed
gnubg build uses its own cube efficiencies (``GNUBG_PYPI_EFFICIENCY``).
"""

from __future__ import annotations

import gnubg
import gnubg_nn
import numpy as np
import pytest

from vrhcaby.equity import cube, met
from vrhcaby.equity.outcomes import equity, invert

EC_CUBEFUL = gnubg.eval_context(1, 0, 1, 0, 0.0)
EC_CUBELESS = gnubg.eval_context(0, 0, 1, 0, 0.0)
START = "4HPwATDgc/ABMA"
CONTACT, CRASHED, RACE = 10, 9, 8  # gnubg.classify; lower classes use gnubg's exact bear-off tables
OWNER_AFTER_MOVE = {-1: "centre", 0: "opponent", 1: "me"}  # mover's cube owner -> next side's view
PYPI = cube.GNUBG_PYPI_EFFICIENCY


def _apply(board: list[list[int]], move: tuple[int, ...]) -> list[list[int]]:
    """Play a gnubg move tuple (1-based from/to, 25 bar, 0 off) and hand the dice over."""
    b = [list(board[0]), list(board[1])]
    for src, dst in zip(move[::2], move[1::2], strict=True):
        b[1][src - 1] -= 1
        if dst > 0:
            b[1][dst - 1] += 1
            if b[0][24 - dst] == 1:
                b[0][24 - dst] = 0
                b[0][24] += 1
    return [b[1], b[0]]


def _pips(row: list[int]) -> int:
    return sum((i + 1) * n for i, n in enumerate(row))


def _x(board: list[list[int]]) -> float:
    if gnubg.classify(board) == RACE:
        return cube.cube_efficiency("race", _pips(board[1]), params=PYPI)
    return cube.cube_efficiency("contact", params=PYPI)


def _money_cube_info(owner: int, jacoby: bool) -> dict:
    ci = gnubg.cube_info(1 if owner == -1 else 2, owner, 0, 0, (0, 0), 0)
    ci["jacoby"] = int(jacoby)
    price = 0.0 if (jacoby and owner == -1) else 1.0
    ci["gammonprice"] = ((price, price), (price, price))
    return ci


def _positions(seed: int, steps: int, cube_info_for) -> list[tuple]:
    """(setting, board after the play, gnubg cubeful score) from random games at 0-ply."""
    rng = np.random.default_rng(seed)
    board = gnubg_nn.board_from_position_id(START)
    out = []
    for step in range(steps):
        setting, ci = cube_info_for(step)
        gnubg.command("clear cache")  # gnubg's cache keys ignore some cube settings (Jacoby)
        dice = tuple(int(d) for d in rng.integers(1, 7, 2))
        plays = gnubg.findbestmoves(board, ci, EC_CUBEFUL, dice)
        if not plays:
            board = [board[1], board[0]]
            continue
        for play in plays:
            if len(play["move"]) % 2:
                continue  # the binding drops a bear-off's destination and what follows it
            after = _apply(board, play["move"])
            if gnubg.classify(after) in (CONTACT, CRASHED, RACE):
                probs = gnubg.evaluate(after, ci, EC_CUBELESS)[:5]
                out.append((setting, after, probs, play["score"]))
        complete = [play for play in plays if len(play["move"]) % 2 == 0]
        if not complete:
            board = gnubg_nn.board_from_position_id(START)
            continue
        board = _apply(board, complete[rng.integers(len(complete))]["move"])
        if gnubg.classify(board) < RACE:
            board = gnubg_nn.board_from_position_id(START)
    return out


def _money_settings(step: int) -> tuple[tuple[int, bool], dict]:
    owner, jacoby = (-1, 0, 1)[step % 3], bool(step // 3 % 2)
    return (owner, jacoby), _money_cube_info(owner, jacoby)


@pytest.fixture(scope="module")
def money_positions() -> list[tuple]:
    return _positions(11, 240, _money_settings)


def _money_ours(
    setting: tuple[int, bool], probs, x: float
) -> tuple[float, cube.CubeDecision | None]:
    owner, jacoby = setting
    side = OWNER_AFTER_MOVE[owner]
    if side == "opponent":
        return float(cube.cubeful_equity(probs, "opponent", x)), None
    decision = cube.money_cube_decision(probs, x=x, cube_owner=side, jacoby=jacoby)
    return decision.optimal, decision


def test_money_cubeful_equity_matches_gnubg_in_contact(money_positions: list[tuple]) -> None:
    """Equal up to gnubg's float32 (incrementally evaluated) probabilities."""
    contact = [t for t in money_positions if gnubg.classify(t[1]) in (CONTACT, CRASHED)]
    assert len(contact) > 1000
    errors = [abs(-_money_ours(s, p, _x(b))[0] - score) for s, b, p, score in contact]
    assert np.quantile(errors, 0.99) < 1e-5
    assert max(errors) < 3e-4


def test_money_cube_action_matches_gnubg(money_positions: list[tuple]) -> None:
    """gnubg's optimal equity tells whether it doubles where doubling and not differ clearly."""
    seen, compared = set(), 0
    for setting, board, probs, score in money_positions:
        if gnubg.classify(board) == RACE:
            continue
        _, decision = _money_ours(setting, probs, _x(board))
        if decision is None:
            continue
        seen.add(decision.action)
        doubled = min(decision.dt, decision.dp)
        if abs(doubled - decision.nd) < 1e-3:
            continue
        gnubg_doubles = abs(-score - doubled) < abs(-score - decision.nd)
        assert gnubg_doubles == decision.double, (board, probs, decision)
        compared += 1
    assert compared > 500
    assert seen == set(cube.ACTIONS)


def _random_race(rng: np.random.Generator) -> list[list[int]]:
    """Both sides' checkers on their own points 1-12 (no contact), some borne off."""
    board = [[0] * 25, [0] * 25]
    for row in board:
        for point in rng.integers(0, 12, int(rng.integers(8, 16))):
            row[point] += 1
    return board


def test_money_race_efficiency_matches_gnubg() -> None:
    """Races use the pip-count efficiency of the side on roll (random race positions)."""
    rng = np.random.default_rng(13)
    errors = []
    for step in range(150):
        owner = (-1, 0, 1)[step % 3]
        ci = _money_cube_info(owner, False)
        board = _random_race(rng)
        dice = tuple(int(d) for d in rng.integers(1, 7, 2))
        for play in gnubg.findbestmoves(board, ci, EC_CUBEFUL, dice):
            after = _apply(board, play["move"]) if len(play["move"]) % 2 == 0 else None
            if after is None or gnubg.classify(after) != RACE:
                continue
            probs = gnubg.evaluate(after, ci, EC_CUBELESS)[:5]
            ours = _money_ours((owner, False), probs, _x(after))[0]
            errors.append(abs(-ours - play["score"]))
    assert len(errors) > 2000
    assert np.quantile(errors, 0.99) < 1e-5
    assert max(errors) < 3e-4


MATCH_SETTINGS = [
    # match length, score of the side that moves, score of the other, cube, Crawford
    (7, 3, 5, 1, False),
    (7, 0, 0, 1, False),
    (5, 4, 1, 1, False),  # post-Crawford, mover leads
    (5, 1, 4, 1, False),  # post-Crawford, mover trails
    (9, 2, 6, 2, False),
    (5, 4, 2, 1, True),  # Crawford game
    (5, 2, 4, 1, False),
    (3, 1, 1, 1, False),  # 2-away, 2-away
    (11, 5, 8, 4, False),
    (7, 6, 3, 1, False),
]


def _match_settings(step: int) -> tuple[tuple, dict]:
    length, mine, theirs, cube_value, crawford = MATCH_SETTINGS[step % len(MATCH_SETTINGS)]
    owner = (-1, 0, 1)[step // len(MATCH_SETTINGS) % 3] if cube_value > 1 else -1
    setting = (length, mine, theirs, cube_value, crawford, owner)
    return setting, gnubg.cube_info(cube_value, owner, 0, length, (mine, theirs), int(crawford))


@pytest.fixture(scope="module")
def match_positions() -> list[tuple]:
    return _positions(12, 300, _match_settings)


def test_match_cubeful_mwc_matches_gnubg_in_contact(match_positions: list[tuple]) -> None:
    """Compared in MWC: EMG magnifies float noise where a game decides little."""
    errors, actions = [], set()
    for (length, mine, theirs, cube_value, crawford, owner), board, probs, score in match_positions:
        if gnubg.classify(board) == RACE:
            continue
        away_mover, away_next = length - mine, length - theirs
        decision = cube.match_cube_decision(
            probs,
            away_me=away_next,
            away_opp=away_mover,
            cube_value=cube_value,
            cube_owner=OWNER_AFTER_MOVE[owner],
            crawford=crawford,
            x=_x(board),
        )
        gnubg_mwc = met.emg_to_mwc(score, away_mover, away_next, cube_value, crawford=crawford)
        errors.append(abs(1.0 - decision.optimal_mwc - gnubg_mwc))
        actions.add(decision.action)
    assert len(errors) > 1500
    assert np.quantile(errors, 0.99) < 1e-5
    assert max(errors) < 3e-4
    assert actions == set(cube.ACTIONS)


# --- known facts ------------------------------------------------------------------------------


def _gammonless(win: float) -> list[float]:
    return [win, 0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize(("x", "take_point"), [(0.0, 0.25), (1.0, 0.20), (0.5, 0.5 / 2.25)])
def test_money_take_points(x: float, take_point: float) -> None:
    """Dead cube: 25%; fully live cube: 20% (Janowski's (L - 1/2) / (W + L + x/2))."""
    taker_ok = cube.money_cube_decision(_gammonless(1 - take_point - 1e-4), x=x)
    taker_out = cube.money_cube_decision(_gammonless(1 - take_point + 1e-4), x=x)
    assert taker_ok.take and not taker_out.take


def test_cubeful_equity_has_janowski_limits() -> None:
    p = [0.62, 0.2, 0.02, 0.1, 0.01]
    assert cube.cubeful_equity(p, "centre", 0.0) == pytest.approx(equity(np.array(p)))
    assert cube.cubeful_equity(p, "dead", 0.7) == pytest.approx(equity(np.array(p)))
    owned = cube.cubeful_equity(p, "me", 0.7)
    centred = cube.cubeful_equity(p, "centre", 0.7)
    theirs = cube.cubeful_equity(p, "opponent", 0.7)
    assert owned > centred > theirs


def test_jacoby_voids_gammons_with_a_centred_cube() -> None:
    single, gammon = [0.7, 0.0, 0.0, 0.0, 0.0], [0.7, 0.3, 0.0, 0.0, 0.0]
    assert cube.cubeful_equity(single, "centre", 0.0, jacoby=True) == pytest.approx(
        cube.cubeful_equity(gammon, "centre", 0.0, jacoby=True)
    )
    assert cube.cubeful_equity(gammon, "centre", 0.0) > cube.cubeful_equity(single, "centre", 0.0)
    # Owned cubes count gammons even under the Jacoby rule.
    assert cube.cubeful_equity(gammon, "me", 0.5, jacoby=True) > cube.cubeful_equity(
        single, "me", 0.5, jacoby=True
    )


def test_beaver() -> None:
    """The taker beavers when its equity after the double is not negative (DT <= 0)."""
    underdog = [0.42, 0.3, 0.0, 0.0, 0.0]
    plain = cube.money_cube_decision(underdog, x=0.68)
    beavered = cube.money_cube_decision(underdog, x=0.68, beavers=True)
    assert -2.0 <= plain.dt <= 0.0 and not plain.beaver
    assert beavered.beaver and beavered.detail == "No double, beaver" and not beavered.double
    favourite = cube.money_cube_decision([0.48, 0.4, 0.0, 0.0, 0.0], x=0.68, beavers=True)
    assert favourite.dt > 0.0 and not favourite.beaver and favourite.action == "double, take"


def test_unavailable_and_maximum_cube() -> None:
    p = [0.8, 0.3, 0.01, 0.02, 0.0]
    assert not cube.money_cube_decision(p, x=0.68, cube_value=2, cube_owner="opponent").available
    capped = cube.money_cube_decision(p, x=0.68, cube_value=64, cube_owner="me")
    assert not capped.available and capped.action == "no double" and np.isnan(capped.dt)
    assert cube.money_cube_decision(p, x=0.68, cube_value=32, cube_owner="me").available


def test_decision_errors_are_gaps_between_choices() -> None:
    d = cube.money_cube_decision([0.72, 0.15, 0.0, 0.03, 0.0], x=0.68)
    assert d.taker_error == pytest.approx(abs(d.dt - d.dp))
    assert d.doubler_error == pytest.approx(abs(min(d.dt, d.dp) - d.nd))
    assert d.optimal == pytest.approx(min(d.dt, d.dp) if d.double else d.nd)


def test_match_dead_cubes() -> None:
    p = [0.7, 0.2, 0.0, 0.05, 0.0]
    leader = cube.match_cube_decision(p, away_me=1, away_opp=4)  # post-Crawford leader
    assert not leader.available and not leader.double
    already_wins = cube.match_cube_decision(p, away_me=2, away_opp=5, cube_value=2, cube_owner="me")
    assert not already_wins.available
    crawford = cube.match_cube_decision(p, away_me=3, away_opp=1, crawford=True)
    assert not crawford.available
    assert crawford.optimal_mwc == pytest.approx(crawford.cubeless_mwc)


def test_post_crawford_trailer_doubles_at_once() -> None:
    even = [0.5, 0.12, 0.005, 0.12, 0.005]
    for away in (3, 4, 6):
        decision = cube.match_cube_decision(even, away_me=away, away_opp=1)
        assert decision.double and decision.take, away
    # At 2-away the doubled cube decides the match: taking is worth P(win); passing leaves
    # 1-away/1-away (50%). The leader's free drop: an underdog leader passes at no cost.
    for win in (0.45, 0.55):
        decision = cube.match_cube_decision([win, 0.1, 0.0, 0.1, 0.0], away_me=2, away_opp=1)
        assert decision.double
        assert decision.dt_mwc == pytest.approx(win) and decision.dp_mwc == pytest.approx(0.5)
        assert decision.take == (win < 0.5)


def test_match_reports_cubeless_and_cubeful() -> None:
    p = [0.66, 0.2, 0.01, 0.08, 0.0]
    d = cube.match_cube_decision(p, away_me=5, away_opp=7, x=0.68)
    assert d.cubeless_mwc == pytest.approx(met.mwc_from_probabilities(p, 5, 7))
    assert d.cubeless == pytest.approx(met.mwc_to_emg(d.cubeless_mwc, 5, 7))
    assert d.nd == pytest.approx(met.mwc_to_emg(d.nd_mwc, 5, 7))
    assert d.dp_mwc == pytest.approx(met.match_equity(4, 7))


# --- resignation ------------------------------------------------------------------------------


def test_resignation_money() -> None:
    sure_gammon = [0.0, 0.0, 0.0, 1.0, 0.0]
    assert cube.resignation_offer(sure_gammon, jacoby=False) == 2
    assert cube.accept_resignation(sure_gammon, 2, jacoby=False)
    assert not cube.accept_resignation(sure_gammon, 1, jacoby=False)
    assert cube.resignation_offer(sure_gammon, jacoby=True) == 1  # gammons void
    some_gammons = [0.0, 0.0, 0.0, 0.4, 0.0]
    assert cube.resignation_offer(some_gammons, jacoby=False) == 1
    assert not cube.accept_resignation(some_gammons, 1, jacoby=False)
    assert cube.resignation_offer([0.05, 0.0, 0.0, 0.5, 0.1], jacoby=False) == 1
    assert cube.resignation_offer([0.3, 0.05, 0.0, 0.1, 0.0], jacoby=False) == 0


def test_resignation_match() -> None:
    lost = [0.0, 0.0, 0.0, 0.5, 0.0]
    # Double match point: any loss ends the match, so a single is all one offers.
    assert cube.resignation_offer(lost, away_me=1, away_opp=1) == 1
    assert cube.accept_resignation(lost, 1, away_me=1, away_opp=1)
    # 5-away/5-away: a half-gammon loss is worse than a single, better than a gammon.
    assert cube.resignation_offer(lost, away_me=5, away_opp=5) == 1
    assert not cube.accept_resignation(lost, 1, away_me=5, away_opp=5)
    assert cube.accept_resignation(lost, 2, away_me=5, away_opp=5)


# --- basics -----------------------------------------------------------------------------------


def test_efficiency() -> None:
    assert cube.cube_efficiency("contact") == 0.68
    assert cube.cube_efficiency("crashed") == 0.68
    assert cube.cube_efficiency("bearoff") == 0.6
    assert cube.cube_efficiency("race", 20) == 0.6
    assert cube.cube_efficiency("race", 100) == pytest.approx(0.675)
    assert cube.cube_efficiency("race", 200) == 0.7
    with pytest.raises(ValueError, match="pip count"):
        cube.cube_efficiency("race")
    with pytest.raises(ValueError, match="position_class"):
        cube.cube_efficiency("hypergammon")


def test_cubeless_equity_and_invert() -> None:
    p = np.array([[0.6, 0.2, 0.01, 0.1, 0.002], [0.3, 0.0, 0.0, 0.4, 0.1]])
    expected = [0.6 - 0.4 + 0.1 + 0.008, 0.3 - 0.7 - 0.4 - 0.1]
    assert np.allclose(equity(p), expected)
    assert np.allclose(equity(invert(p)), -np.array(expected))
    assert np.allclose(invert(invert(p)), p)


def test_cubeful_equity_vectorises() -> None:
    rng = np.random.default_rng(0)
    w = rng.uniform(0, 1, 50)
    wg, lg = rng.uniform(0, 1, 50) * w, rng.uniform(0, 1, 50) * (1 - w)
    p = np.stack([w, wg, wg / 5, lg, lg / 5], axis=-1)
    for owner in ("centre", "me", "opponent"):
        batch = cube.cubeful_equity(p, owner, 0.68)
        assert np.allclose(batch, [cube.cubeful_equity(row, owner, 0.68) for row in p])
        mwc = cube.match_cubeful_mwc(p, away_me=6, away_opp=4, cube_owner=owner)
        single = [cube.match_cubeful_mwc(r, away_me=6, away_opp=4, cube_owner=owner) for r in p]
        assert np.allclose(mwc, single)


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="trailing axis"):
        cube.cubeful_equity([0.5, 0.1], "dead", 0.0)
    with pytest.raises(ValueError, match="cube_owner"):
        cube.cubeful_equity([0.5, 0, 0, 0, 0], "middle")
    with pytest.raises(ValueError, match="power of two"):
        cube.money_cube_decision([0.5, 0, 0, 0, 0], x=0.68, cube_value=3)
    with pytest.raises(ValueError, match="one set"):
        cube.money_cube_decision(np.zeros((2, 5)), x=0.68)
    with pytest.raises(ValueError, match="1, 2 or 3"):
        cube.accept_resignation([0.0, 0, 0, 0, 0], 4)
