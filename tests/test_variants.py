"""Nackgammon and acey-deucey end to end: agents, tournaments (money, cube, matches) and
position strings. Every acey-deucey turn an agent makes is checked against the engine's
whole legal turns; recorded games are replayed rule by rule."""

from __future__ import annotations

import re

import numpy as np
import pytest

import engine
from agents import load_agent
from agents.base import GameContext
from agents.td import TDAgent
from agents.turns_ad import apply_steps, parse_steps
from engine.acey_deucey import (
    batch_afterstates_ad,
    game_value_ad,
    position_from_board_ad,
    start_boards_ad,
    to_board_ad,
)
from engine.waiting import read_position, split_waiting, waiting_id
from vrhcaby.nn.net import Evaluator, NetConfig, equity
from vrhcaby.play.tournament import PairSettings, play_pair

AD = "acey-deucey"


def random_ad_agent(seed: int = 0, name: str = "td-random") -> TDAgent:
    """A td agent on an acey-deucey network with random weights (plays badly, legally)."""
    net = NetConfig(encoding="rich", hidden=(6,), variant_inputs=True)
    rng = np.random.default_rng(seed)
    weights = [
        (rng.normal(0, 0.3, (6, net.inputs)).astype(np.float32), np.zeros(6, np.float32)),
        (rng.normal(0, 1.0, (5, 6)).astype(np.float32), np.zeros(5, np.float32)),
    ]
    return TDAgent(Evaluator(net, weights, AD), name=name)


def legal_turns(boards: np.ndarray, dice: np.ndarray) -> list[set[tuple[bytes, bool]]]:
    """Per board, the engine's whole legal turns as (board bytes, rolls again)."""
    after, parent, extra = batch_afterstates_ad(boards, dice)
    out: list[set[tuple[bytes, bool]]] = [set() for _ in range(len(boards))]
    for b, p, e in zip(after, parent, extra, strict=True):
        out[p].add((b.tobytes(), bool(e)))
    return out


@pytest.mark.parametrize(
    ("a", "b"), [("random", "heuristic"), ("heuristic", "td"), ("td", "random?seed=3")]
)
def test_acey_deucey_agents_only_make_legal_turns(a: str, b: str) -> None:
    """Many games in lockstep to the end: each turn is one of the engine's legal turns (or
    the board unchanged when none is legal), extra rolls and all."""
    agents = [random_ad_agent(1) if s == "td" else load_agent(s) for s in (a, b)]
    rng = np.random.default_rng(11)
    n = 24
    boards = start_boards_ad(n)
    side = np.arange(n) % 2  # who is on roll; agents alternate seats over the games
    dice = engine.roll_dice(rng, n)
    active = np.arange(n)
    checked = extra_rolls = one_twos = 0
    for _ in range(3000):
        legal = legal_turns(boards[active], dice)
        new = boards[active].copy()
        again = np.zeros(len(active), bool)
        for s in (0, 1):
            mask = side[active] == s
            if mask.any():
                new[mask], again[mask] = agents[s].choose_turns_ad(boards[active][mask], dice[mask])
        for j in range(len(active)):
            if legal[j]:
                assert (new[j].tobytes(), bool(again[j])) in legal[j]
            else:
                assert np.array_equal(new[j], boards[active][j]) and not again[j]
        checked += len(active)
        extra_rolls += int(again.sum())
        one_twos += int((np.sort(dice, axis=1) == [1, 2]).all(axis=1).sum())
        done = game_value_ad(new) > 0
        boards[active] = np.where(again[:, None, None], new, new[:, ::-1])
        side[active[~again]] ^= 1
        active = active[~done]
        if not len(active):
            break
        dice = engine.roll_dice(rng, len(active))
    assert not len(active), "games did not end"
    assert checked > 1000 and one_twos > 20 and extra_rolls > 0


def test_pubeval_and_gnubg_refuse_acey_deucey_in_one_line() -> None:
    for spec in ("pubeval", "gnubg"):
        try:
            agent = load_agent(spec)
        except ValueError:  # gnubg-nn missing: refused when loaded instead
            continue
        with pytest.raises(ValueError, match=f"agent '{spec}' cannot play variant 'acey-deucey'"):
            play_pair(
                agent, load_agent("random"), games=2, seed=0, settings=PairSettings(variant=AD)
            )


def test_networks_play_their_own_family_of_variants() -> None:
    assert random_ad_agent().supports(AD) and not random_ad_agent().supports("standard")
    td = load_agent("td")
    assert td.supports("nackgammon") and td.supports("nackgammon-seed") and not td.supports(AD)
    assert load_agent("td:td-nackgammon").evaluator.variant == "nackgammon"
    with pytest.raises(ValueError, match="0 plies only"):
        load_agent("td:td-acey-deucey?plies=1")


def replay_ad(record: dict) -> None:
    """Replay a recorded acey-deucey game rule by rule: each turn starts from the position
    the previous one left (the same side after an extra roll), its play, applied as typed
    notation, reaches one of the engine's legal whole turns of its dice, and the game ends
    with the recorded value."""
    pos = engine.Position.start(AD)
    player = None
    moves = [t for t in record["turns"] if "dice" in t]
    for k, turn in enumerate(moves):
        if player is not None:
            assert turn["player"] == player
        assert turn["position_id"] == waiting_id(pos)
        board = to_board_ad(pos)
        (legal,) = legal_turns(board[None], np.array([turn["dice"]]))
        if not turn["play"]:
            assert not legal
            after, again = board, False
        else:
            text = turn["play"].replace(",", " ")
            steps = parse_steps(re.sub(r"\b\d-\d:|no move", " ", text))
            after, again = apply_steps(board, steps), turn["extra_turn"]
            assert (after.tobytes(), again) in legal
        value = int(game_value_ad(after[None])[0])
        if value:
            assert k == len(moves) - 1 and record["value"] == value
            assert record["winner"] == turn["player"]
            return
        pos = position_from_board_ad(after if again else after[::-1])
        player = turn["player"] if again else 1 - turn["player"]
    assert record["turns"][-1].get("action") in ("drop", "resign")


@pytest.mark.parametrize("cube", [False, True])
def test_acey_deucey_tournament_replays_and_repeats(cube: bool) -> None:
    td = random_ad_agent(2)
    kwargs = dict(games=12, seed=5, settings=PairSettings(variant=AD, cube=cube, record=True))
    r = play_pair(td, load_agent("heuristic"), **kwargs)
    again = play_pair(random_ad_agent(2), load_agent("heuristic"), **kwargs)
    assert r.games == 12 and (r.ppg, r.wins) == (again.ppg, again.wins)
    assert sum(r.wins) == 12
    for g in r.results:
        replay_ad(g.record)
        assert g.record["points"] == g.points
        if not cube:
            assert g.cube == 1 and g.points == g.value
    # The heuristic enters and races where a random network does not.
    assert r.ppg < 0


def test_acey_deucey_match_play() -> None:
    r = play_pair(
        random_ad_agent(3),
        load_agent("random?seed=1"),
        games=4,
        seed=2,
        settings=PairSettings(variant=AD, match_to=3, record=True),
    )
    assert r.matches == 4
    by_match: dict[tuple[int, int], list] = {}
    for g in r.results:
        by_match.setdefault((g.sample, g.copy), []).append(g)
        replay_ad(g.record)
    for games in by_match.values():
        score = [0, 0]
        for g in games:
            assert g.record["score"] == score
            score[g.winner] += g.points
        assert max(score) >= 3 and games[-1].match_winner == int(np.argmax(score))


@pytest.mark.parametrize("variant", ["nackgammon", "nackgammon-seed"])
def test_nackgammon_tournaments_start_from_the_layout(variant: str) -> None:
    r = play_pair(
        load_agent("heuristic"),
        load_agent("random"),
        games=20,
        seed=1,
        settings=PairSettings(variant=variant, match_to=3, record=True),
    )
    start = engine.Position.start(variant)
    firsts = [g.record["turns"][0] for g in r.results if g.record["score"] == [0, 0]]
    assert firsts and all(t["position_id"] == start.position_id() for t in firsts)
    assert r.match_win_rate > 0.8  # heuristic against random
    money = play_pair(
        load_agent("td"),
        load_agent("heuristic"),
        games=40,
        seed=3,
        settings=PairSettings(variant=variant),
    )
    assert money.ppg > 0


# --- position strings ---------------------------------------------------------------------


def test_start_is_each_variants_start() -> None:
    for name in engine.VARIANTS:
        assert read_position("start", name) == (engine.Position.start(name), None)
    assert read_position(" START ", AD)[0].waiting == (15, 15)


def test_waiting_suffix_round_trips() -> None:
    rng = np.random.default_rng(4)
    boards = start_boards_ad(1)
    for _ in range(60):
        boards, again = load_agent("random?seed=2").choose_turns_ad(
            boards, engine.roll_dice(rng, 1)
        )
        pos = position_from_board_ad(boards[0])
        text = waiting_id(pos)
        assert read_position(text, AD)[0] == pos
        # The suffix is the waiting checkers, the side on roll first.
        assert split_waiting(text)[1] == (int(boards[0, 1, 25]), int(boards[0, 0, 25]))
        if not again[0]:
            boards = boards[:, ::-1].copy()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("AAAAAAAAAAAAAA@16,0", "two counts 0..15"),
        ("AAAAAAAAAAAAAA@x,1", "two counts"),
        ("AAAAAAAAAAAAAA@1", "@X,O"),
        ("4HPwATDgc/ABMA@1,0", "16 checkers"),
    ],
)
def test_bad_waiting_suffixes_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_position(text, AD)


def test_acey_deucey_td_values_finished_games_and_extra_rolls() -> None:
    agent = random_ad_agent(4)
    b = start_boards_ad(2)
    b[:, 1, 25] = 0  # the mover has borne off everything: it has won, a backgammon
    p = agent.probabilities_ad(b, np.array([False, True]))
    np.testing.assert_array_equal(p, [[1, 1, 1, 0, 0]] * 2)
    live = start_boards_ad(2)
    live[:, 1, 25], live[:, 1, 20] = 14, 1
    flags = np.array([False, True])
    np.testing.assert_allclose(
        equity(agent.probabilities_ad(live, flags)),
        equity(agent.evaluator.probabilities(live, flags)),
        rtol=1e-6,
    )
    # Before rolling, the side on roll's view is the opponent's afterstate, inverted.
    ctx = GameContext()
    assert isinstance(agent.double_decision(engine.Position.start(AD), ctx), bool)
