"""`vrhcaby play --variant ...` driven by a scripted player that reads the board the
program draws and answers with plays the engine lists as legal: Nackgammon from its
layout, and acey-deucey with 1-2 turns typed in steps (the 1 and the 2, the double, its
play), extra rolls, and illegal input answered with the engine's legal plays."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import engine
from agents import load_agent
from agents.turns_ad import step_text
from engine.acey_deucey import bonus_plays_ad, legal_plays_ad
from engine.waiting import read_position
from tests.test_play_command import Script
from tests.test_variants import random_ad_agent
from vrhcaby.cli import play

ROOT = Path(__file__).parents[1]
AD = "acey-deucey"


def ad_policy(rng: np.random.Generator):
    """Answers of a player who types random legal acey-deucey turns, now and then
    something illegal first; what it saw is kept in `state`."""

    def answer(new: str, state: dict) -> str | None:
        state.setdefault("log", []).append(new)
        if "Illegal play" in new:
            listed = new.split("Legal plays: ")[1].splitlines()[0]
            state["listed"].append((listed, ", ".join(sorted(state["legal"]))))
        if len(state["sent"]) > 400 or (state.get("one_twos", 0) >= 2 and state["extra_seen"]):
            return None
        state.setdefault("extra_seen", False)
        state.setdefault("listed", [])
        if "You roll again (the 1-2 bonus" in new:
            state["extra_seen"] = True
        if "Another game?" in new:
            return "y"
        if new.rstrip().endswith("Accept? [y/n]"):
            return "n"
        if new.rstrip().endswith("[take/pass/hint]"):
            return "take"
        if new.rstrip().endswith("[roll/double/hint/resign]"):
            return "roll"
        if new.rstrip().endswith("Choose your double (1-6):"):
            state["k"] = int(rng.integers(1, 7))
            return str(state["k"])
        m = re.search(r"Play (\d)-\1: $", new)
        if m:
            plays = [p for p in bonus_plays_ad(state["after"]) if p.double == state["k"]]
            pick = plays[int(rng.integers(len(plays)))]
            state["legal"] = [step_text(p) for p in plays]
            state["expect_extra"] = pick.extra_turn
            return step_text(pick)
        m = re.findall(r"You roll (\d)-(\d)\. (?:Your play|Play the 1 and the 2): $", new)
        if m:
            drawn = re.findall(r"Position   : (\S+)", "".join(state["log"]))[-1]
            pos, _ = read_position(drawn, AD)
            dice = (int(m[-1][0]), int(m[-1][1]))
            plays = legal_plays_ad(pos, dice, bonus=False)
            state["legal"] = [str(p) for p in plays]
            if rng.random() < 0.1 and not new.startswith("Illegal"):
                return "24/1"  # no checker of X on 24 early on, or an impossible move
            pick = plays[int(rng.integers(len(plays)))]
            if sorted(dice) == [1, 2]:
                state["one_twos"] = state.get("one_twos", 0) + pick.extra_turn
            state["after"] = pick.position
            return str(pick)
        return "quit"

    return answer


def test_acey_deucey_play_session_types_one_two_turns_in_steps() -> None:
    seen_extra = False
    for seed in range(6):
        out = io.StringIO()
        script = Script(out, ad_policy(np.random.default_rng(seed)))
        session = play.Session(random_ad_agent(seed), seed=seed, variant=AD, inp=script, out=out)
        assert session.run() == 0
        text = out.getvalue()
        state = script.state
        assert "Position   : " in text
        # Every illegal answer lists exactly the engine's plays for that roll.
        for listed, legal in state["listed"]:
            assert listed == legal
        # Legal plays were accepted: an "Illegal play" follows only the illegal answers.
        assert text.count("Illegal play") == state["sent"].count("24/1")
        seen_extra |= state["extra_seen"]
        if state.get("one_twos", 0) >= 2 and seen_extra:
            assert "Choose your double (1-6):" in text
            break
    assert seen_extra, "no 1-2 bonus went all four times in the scripted sessions"


def test_nackgammon_play_starts_from_its_layout() -> None:
    bot = load_agent("td")
    for variant in ("nackgammon", "nackgammon-seed"):
        start = engine.Position.start(variant)
        for seed in range(10):
            out = io.StringIO()

            def answer(new: str, state: dict) -> str | None:
                state["log"] = state.get("log", "") + new
                if len(state["sent"]) > 6:
                    return None
                if new.rstrip().endswith("[roll/double/hint/resign]"):
                    return "roll"
                m = re.findall(r"You roll (\d)-(\d)\. Your play: $", new)
                if not m:
                    return "quit"
                drawn = re.findall(r"Position ID: (\S+)", state["log"])[-1]
                pos = engine.Position.from_id(drawn)
                plays = engine.legal_plays(pos, (int(m[-1][0]), int(m[-1][1])))
                return str(plays[0])

            session = play.Session(
                bot, seed=seed, variant=variant, inp=Script(out, answer), out=out
            )
            assert session.run() == 0
            text = out.getvalue()
            assert "Illegal" not in text
            ids = re.findall(r"Position ID: (\S+)", text)
            if "The bot rolls" not in text.split("Position ID")[0]:  # you opened
                assert ids[0] == start.position_id()
                break
        else:
            raise AssertionError("the person never opened")


def test_play_refuses_an_agent_of_another_variant_in_one_line() -> None:
    res = subprocess.run(
        # `td` alone is the variant's own network; td-best plays the standard game only
        [
            sys.executable,
            "-m",
            "vrhcaby.cli.main",
            "play",
            "--variant",
            AD,
            "--agent",
            "td:td-best",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        input="",
    )
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "vrhcaby play: error: agent 'td:td-best' cannot play variant 'acey-deucey'"
    ]
