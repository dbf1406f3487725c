"""The td agent's cube window (`td?cube_plies=1&cube_window=M`): the cubeful search is made
only where the 0-ply (Janowski) analysis is within M of a threshold of the question asked,
and there its answer is the full search's; elsewhere the 0-ply answer is given without a
search. Resignations and the opponent's take follow the same rule; the 0-ply analysis of
a board is made once however often the board is asked about.

The references: the full search (`agents.cubeful`, checked against GNU Backgammon's own
cubeful 1-ply in tests/test_cubeful.py) with gnubg's network as the evaluator, Janowski's
0-ply decision of the evaluator's probabilities, and the thresholds written out here from
the equities (min(DT, DP) against ND for the double, DT against DP for the take).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from corpus import walk_positions
from gnubg_oracle import GnubgEvaluator

import engine
from agents import cubeful, load_agent
from agents.gnubg import GnubgAgent
from agents.search import Pruner
from agents.td import CUBE_PLIES, CUBE_WINDOW, CubeWindow, TDAgent
from vrhcaby.equity import cube, decisions, met
from vrhcaby.equity.context import GameContext
from vrhcaby.equity.outcomes import equity, invert

PYPI = cube.GNUBG_PYPI_EFFICIENCY
MARGIN = 0.1
WINDOW = CubeWindow.every(MARGIN)
CONTEXTS = (
    GameContext(),
    GameContext(cube_value=2, cube_owner="me"),
    GameContext(match_to=7, score=(2, 4)),
)


class Counting(GnubgEvaluator):
    """gnubg's network, counting the afterstates it is asked about."""

    def __init__(self) -> None:
        self.asked = 0

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        self.asked += len(afterstates)
        return super().probabilities(afterstates)


@pytest.fixture(scope="module")
def boards() -> list[np.ndarray]:
    """Positions of games gnubg's 0-ply plays with seeded dice (contact, races, some
    close to a double), none that the side on roll may end with this roll (more than four
    checkers left: its search has positions to evaluate)."""
    walked = walk_positions(160, seed=11, choose=GnubgAgent(0).choose_play)
    return [b for b in walked[::4] if b[1].sum() > 4]


def janowski(evaluator, board: np.ndarray, context: GameContext) -> cube.CubeDecision:
    p0 = invert(evaluator.probabilities(board[::-1][None])[0])
    return decisions.cube_decision(p0, board, context, params=PYPI)


def test_inside_the_window_the_full_search_outside_the_0_ply(boards) -> None:
    """Doubles and takes: within the margin of their threshold the answer is the full
    search's, beyond it the 0-ply one and no search is made (one board evaluated)."""
    evaluator = Counting()
    windowed = TDAgent(evaluator, cube_plies=1, cube_window=WINDOW, efficiency=PYPI)
    seen = {"searched": 0, "skipped": 0, "differs": 0}
    for board in boards:
        for context in CONTEXTS:
            position = engine.Position(board)
            flat = janowski(evaluator, board, context)
            full, _ = cubeful.cube_decision(evaluator, board, context, 1, params=PYPI)
            gaps = {
                "double": abs(min(flat.dt, flat.dp) - flat.nd),
                "take": abs(flat.dp - flat.dt),
            }
            for question, gap in gaps.items():
                windowed.__dict__.pop("_last_search", None)  # each question on its own
                windowed.__dict__.pop("_last_zero", None)
                evaluator.asked = 0
                if question == "double":
                    got = windowed.double_decision(position, context)
                    expected = (full if gap < MARGIN else flat).double
                else:
                    got = windowed.take_decision(position.flip(), context.flip())
                    expected = (full if gap < MARGIN else flat).take
                assert got == expected, (question, gap, engine.position_id(board))
                if gap < MARGIN:
                    assert evaluator.asked > 1
                    seen["searched"] += 1
                    seen["differs"] += getattr(full, question) != getattr(flat, question)
                else:
                    assert evaluator.asked == 1  # the 0-ply evaluation alone
                    seen["skipped"] += 1
    assert min(seen.values()) >= 1, seen  # both branches met, and a search that mattered


def test_the_whole_decision_inside_the_window_is_the_searchs(boards) -> None:
    """`cube_decision` asked no question is searched where any threshold is within the
    margin, and then equals the full search's decision, equities and all."""
    evaluator = GnubgEvaluator()
    windowed = TDAgent(evaluator, cube_plies=1, cube_window=WINDOW, efficiency=PYPI)
    inside = 0
    for board in boards:
        context = GameContext(jacoby=True)
        flat = janowski(evaluator, board, context)
        near = min(abs(min(flat.dt, flat.dp) - flat.nd), abs(flat.dp - flat.dt)) < MARGIN
        full, _ = cubeful.cube_decision(evaluator, board, context, 1, params=PYPI)
        got = windowed.cube_decision(engine.Position(board), context)
        assert got == (full if near else flat)
        inside += near
    assert inside


def test_window_off_searches_every_decision(boards) -> None:
    evaluator = Counting()
    full = TDAgent(evaluator, cube_plies=1, cube_window=None, efficiency=PYPI)
    context = GameContext()
    for board in boards[:6]:
        expected, _ = cubeful.cube_decision(evaluator, board, context, 1, params=PYPI)
        evaluator.asked = 0
        assert full.cube_decision(engine.Position(board), context) == expected
        assert evaluator.asked > 1


def _lost() -> np.ndarray:
    """The side on roll (row 1) has all 15 checkers on its 13-point and the opponent two on
    its 1-point: a gammon lost unless the network says otherwise."""
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0] = 2
    board[1, 12] = 15
    return board


def _money_gap(p: np.ndarray, value: int) -> float:
    """Money, the cube owned (no Jacoby rule): playing on is worth 2W - 1 + (Wg - Lg) +
    (Wbg - Lbg) a cube, resigning `value` points a cube -value."""
    play = 2 * p[0] - 1 + (p[1] - p[3]) + (p[2] - p[4])
    return abs(-value - play)


def test_resignations_follow_the_window() -> None:
    """A lost position is inside the resignation window: the offer is the one the full
    search's probabilities give, and the opponent accepts or refuses each resignation by
    them where that resignation's threshold is within the margin, else by the 0-ply ones.
    The opening position is far outside: no offer, and no search."""
    evaluator = Counting()
    windowed = TDAgent(evaluator, cube_plies=1, cube_window=WINDOW, efficiency=PYPI)
    context = GameContext(cube_value=2, cube_owner="opponent")
    board = _lost()
    _, p = cubeful.cube_decision(evaluator, board, context, 1, params=PYPI)
    p0 = invert(evaluator.probabilities(board[::-1][None])[0])
    assert min(_money_gap(p0, v) for v in (1, 2, 3)) < MARGIN  # inside the window
    evaluator.asked = 0
    offer = windowed.resign_offer(engine.Position(board), context)
    assert offer == decisions.resignation_offer(p, context)
    assert evaluator.asked > 1
    # The opponent, in row 1 and asked from its own view with the resigner on roll in row 0.
    accepter = engine.Position(board).flip()
    for value in (1, 2, 3):
        ref = p if _money_gap(p0, value) < MARGIN else p0
        expected = decisions.accept_resignation(ref, value, context)
        assert windowed.accept_resignation(accepter, context.flip(), value) == expected
    evaluator.asked = 0
    assert windowed.resign_offer(engine.Position.start(), GameContext()) == 0
    assert evaluator.asked == 1


def test_resignation_gap_is_the_distance_to_resigning() -> None:
    """Money, cube owned: playing on is worth 2W - 1 + (Wg - Lg) + (Wbg - Lbg) a cube,
    resigning v points a cube -v; in a match the same gaps in EMG."""
    p = np.array([0.02, 0.0, 0.0, 0.6, 0.1])
    context = GameContext(cube_value=2, cube_owner="me")
    play = 2 * 0.02 - 1 + (0.0 - 0.6) + (0.0 - 0.1)
    for value in (1, 2, 3):
        assert decisions.resignation_gap(p, context, value) == pytest.approx(abs(-value - play))
    assert decisions.resignation_gap(p, context) == pytest.approx(
        min(abs(-v - play) for v in (1, 2, 3))
    )
    match = GameContext(match_to=5, score=(1, 2), cube_value=2, cube_owner="me")
    away = match.away()
    play_mwc = met.mwc_from_probabilities(p, *away, 2)
    for value in (1, 2, 3):
        resign_mwc = met.KAZAROSS_XG2.outcome(*away, 2 * value, False)
        expected = abs(met.mwc_to_emg(resign_mwc, *away, 2) - met.mwc_to_emg(play_mwc, *away, 2))
        assert decisions.resignation_gap(p, match, value) == pytest.approx(expected)


def test_the_0_ply_analysis_of_a_board_is_made_once() -> None:
    """Whether to resign, then whether to double, on one board: one evaluation (0 plies,
    and at 1 ply outside the window)."""
    for agent_kwargs in ({}, {"cube_plies": 1, "cube_window": WINDOW}):
        evaluator = Counting()
        agent = TDAgent(evaluator, efficiency=PYPI, **agent_kwargs)  # type: ignore[arg-type]
        position, context = engine.Position.start(), GameContext()
        agent.resign_offer(position, context)
        agent.double_decision(position, context)
        agent.take_decision(position.flip(), context.flip())
        assert evaluator.asked == 1


def test_cube_gap_asks_the_right_threshold() -> None:
    d = cube.decision_from_equities(0.5, 0.62, 1.0, 0.4)  # double/take, 0.12 from no double
    assert decisions.cube_gap(d, "double") == pytest.approx(0.12)
    assert decisions.cube_gap(d, "take") == pytest.approx(0.38)
    assert decisions.cube_gap(d) == pytest.approx(0.12)
    beaver = cube.decision_from_equities(-0.3, -0.05, 1.0, -0.2, beavers=True)
    assert decisions.cube_gap(beaver, "beaver", beavers=True) == pytest.approx(0.05)  # DT to 0
    assert decisions.cube_gap(beaver, "double", beavers=True) == pytest.approx(0.05)
    assert decisions.cube_gap(beaver, "double") == pytest.approx(0.25)  # DT - ND alone
    near_beaver = cube.decision_from_equities(-0.3, -0.18, 1.0, -0.2, beavers=True)
    assert decisions.cube_gap(near_beaver, "double", beavers=True) == pytest.approx(0.06)
    unavailable = cube.decision_from_equities(0.2, 0.0, 0.0, 0.2, available=False)
    assert decisions.cube_gap(unavailable) == math.inf
    with pytest.raises(ValueError, match="cube question"):
        decisions.cube_gap(d, "redouble")


def test_each_question_has_its_own_margin(boards) -> None:
    """A window wide for the take and narrow for the double: every take is searched (the
    full search's answer), no double is (the 0-ply answer, one board evaluated)."""
    evaluator = Counting()
    tiny, wide = 1e-9, 10.0
    agent = TDAgent(
        evaluator, cube_plies=1, cube_window=CubeWindow(tiny, wide, tiny), efficiency=PYPI
    )
    context = GameContext(match_to=5, score=(1, 2))
    for board in boards[:5]:
        position = engine.Position(board)
        full, _ = cubeful.cube_decision(evaluator, board, context, 1, params=PYPI)
        flat = janowski(evaluator, board, context)
        agent.__dict__.pop("_last_zero", None)
        evaluator.asked = 0
        assert agent.double_decision(position, context) == flat.double
        assert evaluator.asked == 1
        assert agent.take_decision(position.flip(), context.flip()) == full.take
        assert evaluator.asked > 1


@pytest.mark.parametrize(
    "margins", [(-0.1, 0.1, 0.1), (0.1, -1.0, 0.1), (0.1, 0.1, math.nan), (0.1, math.inf, 0.1)]
)
def test_a_window_margin_must_be_0_or_more(margins) -> None:
    with pytest.raises(ValueError, match="margin must be 0 or more"):
        CubeWindow(*margins)


def test_a_margin_of_0_answers_at_0_plies(boards) -> None:
    """A resignation margin of 0 (the default's): offers and answers to offers are the 0-ply
    ones, with no search, however near the threshold; a double margin of 0 the same."""
    evaluator, plain = Counting(), GnubgEvaluator()
    agent = TDAgent(evaluator, cube_plies=1, cube_window=CubeWindow(0.0, 0.0, 0.0), efficiency=PYPI)
    flat = TDAgent(plain, efficiency=PYPI)
    assert CUBE_WINDOW.resign == 0.0
    context = GameContext(cube_value=2, cube_owner="me")
    # lost, no gammon: the opponent bears off its last checker next turn, the side on roll
    # at least two now, so resigning a single game is worth what playing on is
    lost = engine.Position(np.array([[1] + [0] * 24, [15] + [0] * 24], dtype=np.int8))
    near = decisions.resignation_gap(
        invert(plain.probabilities(lost.board[::-1][None])[0]), context
    )
    assert near < 0.01
    for position in [lost, *(engine.Position(b) for b in boards[:4])]:
        for a in (agent, flat):
            a.__dict__.pop("_last_zero", None)
        evaluator.asked = 0
        assert agent.resign_offer(position, context) == flat.resign_offer(position, context)
        assert agent.double_decision(position, context) == flat.double_decision(position, context)
        for value in (1, 2, 3):
            assert agent.accept_resignation(position, context, value) == flat.accept_resignation(
                position, context, value
            )
        assert evaluator.asked <= 2  # one 0-ply evaluation of each side's board


class WorstFirst:
    """A ranker that puts the evaluator's worst replies first: a search pruned by it to
    one reply a roll picks the worst one, so its answers differ from the full search's."""

    def __init__(self, evaluator) -> None:
        self.evaluator = evaluator

    def scores(self, roots: np.ndarray, afterstates: np.ndarray, parent: np.ndarray) -> np.ndarray:
        return -equity(self.evaluator.probabilities(afterstates))


def test_the_cube_search_is_pruned_by_cube_prune_alone(boards) -> None:
    """The agent's own cube search keeps the replies `cube_prune` keeps (the reference: the
    cubeful search given that pruner), whatever its checker search's `prune` is; without a
    `cube_prune` it values every reply, the checker pruner notwithstanding."""
    evaluator = GnubgEvaluator()
    pruner = Pruner(WorstFirst(evaluator), keep=1)
    cube_pruned = TDAgent(
        evaluator, cube_plies=1, cube_window=None, efficiency=PYPI, cube_prune=pruner
    )
    checker_pruned = TDAgent(
        evaluator, cube_plies=1, cube_window=None, efficiency=PYPI, prune=pruner
    )
    context = GameContext(cube_value=2, cube_owner="me")
    differ = 0
    for board in boards[:6]:
        position = engine.Position(board)
        full, _ = cubeful.cube_decision(evaluator, board, context, 1, params=PYPI)
        worst, _ = cubeful.cube_decision(evaluator, board, context, 1, params=PYPI, prune=pruner)
        got = cube_pruned.cube_decision(position, context)
        assert (got.nd, got.dt) == pytest.approx((worst.nd, worst.dt), abs=1e-12)
        plain = checker_pruned.cube_decision(position, context)
        assert (plain.nd, plain.dt) == pytest.approx((full.nd, full.dt), abs=1e-12)
        differ += abs(worst.nd - full.nd) > 1e-3
    assert differ >= 3  # the pruner does change the search


def test_td_spec_cube_depth_and_pruning_defaults() -> None:
    """`td` decides its cube by the windowed, pruned 1-ply search (`CUBE_PLIES`); its
    checker search is unpruned; `cube_plies=0` loads no cube pruner; an acey-deucey
    network decides at 0 plies; `cube_prune` takes on, off or the replies kept."""
    assert CUBE_PLIES == 1
    agent = load_agent("td")
    assert agent.cube_plies == 1  # type: ignore[attr-defined]
    assert agent.cube_prune == Pruner(agent.cube_prune.ranker)  # type: ignore[attr-defined]
    assert agent.prune is None  # type: ignore[attr-defined]
    assert load_agent("td?cube_plies=0").cube_prune is None  # type: ignore[attr-defined]
    assert load_agent("td?cube_prune=off").cube_prune is None  # type: ignore[attr-defined]
    assert load_agent("td?cube_prune=7").cube_prune.keep == 7  # type: ignore[attr-defined]
    assert load_agent("td?cube_plies=2").cube_prune.keep == Pruner.keep  # type: ignore[attr-defined]
    acey = load_agent("td:td-acey-deucey-gen2")
    assert (acey.cube_plies, acey.cube_prune) == (0, None)  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["0", "-1", "no", "1.5", "٣"])
def test_bad_cube_prune_says_so(value: str) -> None:
    spec = f"td?cube_prune={value}"
    with pytest.raises(ValueError) as caught:
        load_agent(spec)
    text = str(caught.value)
    assert (
        text
        == f"option cube_prune={value!r} of {spec!r} is on, off or the replies kept per roll (1+)"
    )


def test_td_spec_takes_cube_window() -> None:
    assert load_agent("td").cube_window == CUBE_WINDOW  # type: ignore[attr-defined]
    assert load_agent("td?cube_plies=1&cube_window=on").cube_window == CUBE_WINDOW  # type: ignore[attr-defined]
    assert load_agent("td?cube_plies=1&cube_window=off").cube_window is None  # type: ignore[attr-defined]
    every = load_agent("td?cube_plies=1&cube_window=0.05").cube_window  # type: ignore[attr-defined]
    assert every == CubeWindow(double=0.05, take=0.05, resign=0.05)
    three = load_agent("td?cube_plies=1&cube_window=0.3,0.6,0.25").cube_window  # type: ignore[attr-defined]
    assert three == CubeWindow(double=0.3, take=0.6, resign=0.25)
    zero = load_agent("td?cube_window=0.3,0.6,0").cube_window  # type: ignore[attr-defined]
    assert zero == CubeWindow(double=0.3, take=0.6, resign=0.0) == CUBE_WINDOW


@pytest.mark.parametrize(
    "value",
    ["-0.1", "nan", "inf", "wide", "0,1", "½", "1e999", "0.1,0.2,-1", "1,2,3,4", "1,,2"],
)
def test_bad_cube_windows_say_so(value: str) -> None:
    spec = f"td?cube_plies=1&cube_window={value}"
    with pytest.raises(ValueError) as caught:
        load_agent(spec)
    text = str(caught.value)
    expected = (
        f"option cube_window={value!r} of {spec!r} is on, off, a margin of 0 or more or three"
    )
    assert expected in text
    assert "\n" not in text


def test_a_window_given_twice_says_so() -> None:
    with pytest.raises(ValueError, match="cube_window"):
        load_agent("td?cube_window=on&cube_window=off")
