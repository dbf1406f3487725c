"""`vrhcaby play` driven by a scripted player that answers each prompt from what the
program has printed: illegal input answered with the legal plays (checked against the
engine), hints, doubles both ways, resignations, quitting, and the match score."""

from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import engine
from agents.td import TDAgent
from vrhcaby.cli import play
from vrhcaby.equity import cube

ROOT = Path(__file__).parents[1]


class Script:
    """A stdin whose every line is chosen by `policy(new output, state)`; None ends input."""

    def __init__(self, out: io.StringIO, policy: Callable[[str, dict], str | None]) -> None:
        self.out, self.policy, self.seen, self.state = out, policy, 0, {"sent": []}

    def readline(self) -> str:
        text = self.out.getvalue()
        new, self.seen = text[self.seen :], len(text)
        reply = self.policy(new, self.state)
        if reply is None:
            return ""
        self.state["sent"].append(reply)
        return reply + "\n"


def last_position(text: str) -> engine.Position:
    return engine.Position.from_id(re.findall(r"Position ID: (\S+)", text)[-1])


def last_roll(text: str) -> tuple[int, int]:
    a, b = re.findall(r"You roll (\d)-(\d)\. Your play", text)[-1]
    return int(a), int(b)


class ConstantEvaluator:
    """Every afterstate is worth `p` to its mover: the side on roll always has 1 - p[0]."""

    variant = "standard"

    def __init__(self, p: list[float]) -> None:
        self.p = np.array(p)

    def probabilities(self, afterstates: np.ndarray) -> np.ndarray:
        return np.tile(self.p, (len(afterstates), 1))


@pytest.fixture(scope="module")
def small_net(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small random network saved as a checkpoint, built without torch."""
    from vrhcaby.nn import checkpoint
    from vrhcaby.nn.net import NetConfig

    config = NetConfig("tesauro", (8,), "sigmoid")
    rng = np.random.default_rng(0)
    arrays = {}
    for i, (n_in, n_out) in enumerate(zip(config.sizes[:-1], config.sizes[1:], strict=True)):
        arrays[f"model/{2 * i}.weight"] = rng.normal(0, 0.3, (n_out, n_in)).astype(np.float32)
        arrays[f"model/{2 * i}.bias"] = rng.normal(0, 0.3, n_out).astype(np.float32)
    path = tmp_path_factory.mktemp("net") / "net.pt"
    checkpoint.save(path, arrays, {"net": config.to_dict(), "config": {"variant": "standard"}})
    return path


def test_illegal_input_hint_double_resign_quit(small_net: Path, monkeypatch) -> None:
    """Through the command's parser and `run`, with a real (small) network."""
    out = io.StringIO()
    history = {"illegal": None, "hint": None}

    def policy(new: str, state: dict) -> str | None:
        text = out.getvalue()
        if "Your play:" in new:
            position, dice = last_position(text), last_roll(text)
            legal = sorted(str(p) for p in engine.legal_plays(position, dice))
            if history["illegal"] is None:
                history["illegal"] = legal
                return "24/1"
            if history["hint"] is None:
                history["hint"] = legal
                return "hint"
            if "double" not in state["sent"]:
                return legal[0]
            return "resign" if "resign" not in state["sent"] else "quit"
        if "Roll or double?" in new:
            return "double" if "double" not in state["sent"] else "roll"
        if "Take or pass?" in new:
            return "take"
        if "Accept?" in new:
            return "n"
        return "quit"

    parser = argparse.ArgumentParser()
    play.register(parser.add_subparsers())
    args = parser.parse_args(
        ["play", "--agent", f"td:{small_net}", "--seed", "3", "--match-to", "3"]
    )
    monkeypatch.setattr(sys, "stdin", Script(out, policy))
    monkeypatch.setattr(sys, "stdout", out)
    assert args.func(args) == 0
    monkeypatch.undo()
    text = out.getvalue()
    listed = re.search(r"Illegal play: .*\. Legal plays: (.*)", text)
    assert listed and listed.group(1).split(", ") == history["illegal"]
    hints = re.findall(r"^  \d\. (.+?)\s+[+-]\d\.\d{3}$", text, flags=re.M)
    assert hints and set(hints) <= set(history["hint"])
    assert "The bot accepts your resignation" in text or "The bot refuses" in text
    assert re.search(r"The bot (takes|passes)", text)
    assert "Match to 3: you" in text and "Bye. Match to 3" in text.rstrip().splitlines()[-1]


def test_bot_doubles_and_the_take_hint_follows_the_cube_rules() -> None:
    """An evaluator that makes the side on roll a 70% favourite, gammonless: the bot
    doubles at its first chance, and the proper answer shown is the reference's."""
    p = [0.3, 0.0, 0.0, 0.0, 0.0]
    agent = TDAgent(ConstantEvaluator(p))
    out = io.StringIO()

    def policy(new: str, state: dict) -> str | None:
        if "Take or pass?" in new:
            return "hint" if "hint" not in state["sent"] else "take"
        if "Roll or double?" in new:
            return "roll"
        if "Your play:" in new and len(state["sent"]) < 60:
            if "take" in state["sent"] and "cube 2 (yours)" in out.getvalue():
                return None  # seen enough: end the input
            text = out.getvalue()
            return str(engine.legal_plays(last_position(text), last_roll(text))[0])
        return None

    session = play.Session(agent, seed=5, inp=Script(out, policy), out=out)
    assert session.run() == 0
    text = out.getvalue()
    reference = cube.money_cube_decision([0.7, 0, 0, 0, 0], x=cube.CONTACT_EFFICIENCY)
    assert reference.double and "The bot doubles to 2." in text
    assert f"Your proper answer: {'take' if reference.take else 'pass'}." in text
    assert "You take; the cube is at 2." in text
    assert "cube 2 (yours)" in text


def test_bad_match_length_is_an_error() -> None:
    with pytest.raises(ValueError, match="match-to"):
        play.Session(TDAgent(ConstantEvaluator([0.5, 0, 0, 0, 0])), match_to=-1)


def test_beavers_both_ways_by_default_and_not_with_no_beavers() -> None:
    """The side on roll is a 30% underdog, gammonless: a double is a beaver for the side
    doubled (GNU Backgammon's rule: taking leaves it the favourite)."""
    p = [0.7, 0.0, 0.0, 0.0, 0.0]  # every afterstate worth 70% to its mover
    reference = cube.money_cube_decision([0.3, 0, 0, 0, 0], x=cube.CONTACT_EFFICIENCY, beavers=True)
    assert reference.beaver and reference.take

    def run(beavers: bool) -> str:
        out = io.StringIO()

        def policy(new: str, state: dict) -> str | None:
            if "Roll or double?" in new:
                return "double" if "double" not in state["sent"] else None
            if "Your play:" in new and len(state["sent"]) < 60:
                text = out.getvalue()
                return str(engine.legal_plays(last_position(text), last_roll(text))[0])
            return None

        agent = TDAgent(ConstantEvaluator(p))
        session = play.Session(agent, seed=5, beavers=beavers, inp=Script(out, policy), out=out)
        assert session.run() == 0
        return out.getvalue()

    text = run(True)
    assert "Money play (Jacoby rule, beavers allowed)" in text
    assert "The bot beavers; the cube is at 4, the bot's." in text and "cube 4 (the bot's)" in text
    text = run(False)
    assert "beavers" not in text.replace("no beavers", "")
    assert "The bot takes; the cube is at 2." in text


def test_you_may_beaver_the_bots_double() -> None:
    agent = TDAgent(ConstantEvaluator([0.3, 0.0, 0.0, 0.0, 0.0]))  # on roll: 70%
    out = io.StringIO()

    def policy(new: str, state: dict) -> str | None:
        if "Take or pass? [take/beaver/pass/hint]" in new:
            return "beaver"
        if "Roll or double?" in new:
            return "roll"
        if "Your play:" in new and len(state["sent"]) < 60:
            if "beaver" in state["sent"]:
                return None
            text = out.getvalue()
            return str(engine.legal_plays(last_position(text), last_roll(text))[0])
        return None

    session = play.Session(agent, seed=5, inp=Script(out, policy), out=out)
    assert session.run() == 0
    text = out.getvalue()
    assert "You beaver; the cube is at 4, yours." in text and "cube 4 (yours)" in text
