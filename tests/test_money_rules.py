"""One set of money-play rules in every command: GNU Backgammon's defaults (the Jacoby
rule on, beavers allowed), `--no-jacoby` / `--no-beavers` to turn them off, and the old
`--jacoby` / `--beavers` flags still accepted."""

from __future__ import annotations

import argparse

import pytest

from engine.formats import MatchState, parse_xgid
from vrhcaby.cli.common import MoneyRules, money_rules

# Every verb with money-play cube settings: each plays beavers.
VERBS = ("hint", "cube", "eval", "rollout", "play", "external", "tournament")
REQUIRED = {"external": ["--port", "0"], "tournament": ["a", "b"]}
POSITION = {
    "hint": ["4HPwATDgc/ABMA"],
    "cube": ["4HPwATDgc/ABMA"],
    "eval": ["4HPwATDgc/ABMA"],
    "rollout": ["4HPwATDgc/ABMA"],
}


def parse(verb: str, flags: list[str]) -> argparse.Namespace:
    import importlib

    parser = argparse.ArgumentParser()
    importlib.import_module(f"vrhcaby.cli.{verb}").register(parser.add_subparsers())
    return parser.parse_args([verb, *POSITION.get(verb, []), *REQUIRED.get(verb, []), *flags])


def rules_of(verb: str, flags: list[str]) -> MoneyRules:
    return money_rules(parse(verb, flags))


@pytest.mark.parametrize("verb", VERBS)
def test_defaults_are_gnubgs_and_each_rule_turns_off(verb):
    assert rules_of(verb, []) == MoneyRules(jacoby=True, beavers=True)
    assert rules_of(verb, ["--jacoby"]) == MoneyRules(jacoby=True, beavers=True)
    assert rules_of(verb, ["--no-jacoby"]) == MoneyRules(jacoby=False, beavers=True)
    assert rules_of(verb, ["--beavers"]) == MoneyRules(jacoby=True, beavers=True)
    assert rules_of(verb, ["--no-beavers"]) == MoneyRules(jacoby=True, beavers=False)
    assert rules_of(verb, ["--no-jacoby", "--no-beavers"]) == MoneyRules(False, False)


def test_the_position_has_its_own_rules_and_flags_win():
    args = parse("cube", [])
    # A Match ID holds the Jacoby bit but no beavers: those stay at the default.
    no_jacoby = MatchState.from_id("cAkAAAAAAAAE")
    assert money_rules(args, no_jacoby) == MoneyRules(jacoby=False, beavers=True)
    # An XGID's money rules field holds both (0: neither rule).
    _, state = parse_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
    assert money_rules(args, state, from_xgid=True) == MoneyRules(jacoby=False, beavers=False)
    _, state = parse_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10")
    assert money_rules(args, state, from_xgid=True) == MoneyRules(jacoby=True, beavers=True)
    # A flag given on the command line wins over the position.
    flagged = parse("cube", ["--jacoby", "--no-beavers"])
    assert money_rules(flagged, no_jacoby) == MoneyRules(jacoby=True, beavers=False)


def test_the_rules_in_words():
    assert MoneyRules().describe() == "Jacoby rule, beavers allowed"
    assert MoneyRules(False, False).describe() == "no Jacoby rule, no beavers"


def test_without_a_cube_gammons_count_whatever_the_jacoby_setting():
    """The Jacoby rule exists only with the cube in play: cubeless games (the benchmark
    tournaments) score gammons and backgammons at their value."""
    from agents import load_agent
    from vrhcaby.play.tournament import PairSettings, play_pair

    agents = load_agent("pubeval"), load_agent("random?seed=3")
    for jacoby in (False, True):
        pair = play_pair(
            *agents, games=40, seed=5, settings=PairSettings(cube=False, jacoby=jacoby)
        )
        assert all(g.cube == 1 and g.points == g.value for g in pair.results)
        assert any(g.value > 1 for g in pair.results)
    # With the cube, the rule scores an unturned cube's gammon single.
    pair = play_pair(*agents, games=40, seed=5, settings=PairSettings(cube=True, jacoby=True))
    assert all(g.points == 1 for g in pair.results if g.cube == 1)
