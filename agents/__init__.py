"""Backgammon agents, named by spec strings that are the same in Python, configs and the
command line.

Spec grammar: ``NAME[:PATH][?KEY=VALUE[&KEY=VALUE...]]``

==============================  ==========================================================
``random[?seed=N]``             uniform over the distinct legal plays
``heuristic``                   the hand-written strategy (`agents.heuristic`)
``pubeval``                     Tesauro's public benchmark evaluator
``td[:PATH][?plies=P&filter=A,B]`` a trained network (default ``checkpoints/td-contact-gen9.pt``)
                                with P-ply look-ahead (0, 1, 2) and move filters A, B;
                                PATH may name a shipped one (``td:td-contact``);
                                ``&prune=on|off|K`` prunes the search's replies;
                                ``&cube_plies=C`` cube decisions by cubeful C-ply
                                look-ahead (0, 1, 2; `agents.cubeful`; default 1,
                                `agents.td.CUBE_PLIES`, 0 in acey-deucey),
                                ``&cube_window=on|off|M|D,T,R`` searched only where
                                the 0-ply analysis is within M of a threshold (or D,
                                T, R for the double, take, resignation; `agents.td`),
                                ``&cube_prune=on|off|K`` the cube search's replies
                                pruned (default on)
``gnubg[?plies=N]``             GNU Backgammon through the ``gnubg-nn`` package
==============================  ==========================================================

The modules: `base` (the agent protocol, the context it is asked in), `simple` (random),
`heuristic`, `pubeval`, `td` (the neural agent), `search` (the n-ply search, every roll
at once), `cubeful` (cube decisions by cubeful look-ahead), `gnubg`, and acey-deucey's
`turns_ad` (whole turns for people) and `search_ad` (its one-ply search, for labels).

>>> load_agent("pubeval").name
'pubeval'
>>> load_agent("random?seed=3").name
'random?seed=3'
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from agents.base import Agent, BatchAgent, CubelessAgent, GameContext
from engine.text import ascii_int

if TYPE_CHECKING:
    from agents.td import CubeWindow

__all__ = ["Agent", "BatchAgent", "CubelessAgent", "GameContext", "load_agent", "parse_spec"]

_OPTIONS = {
    "random": {"seed"},
    "heuristic": set(),
    "pubeval": set(),
    "td": {"plies", "filter", "prune", "cube_plies", "cube_window", "cube_prune"},
    "gnubg": {"plies"},
}


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """Split a spec into `(name, path or None, options)`; ValueError if malformed."""
    text = spec.strip()
    head, _, query = text.partition("?")
    name, colon, path = head.partition(":")
    if name not in _OPTIONS:
        raise ValueError(f"unknown agent {spec!r} (known: {', '.join(_OPTIONS)})")
    if colon and name != "td":
        raise ValueError(f"agent {name!r} takes no path (in {spec!r})")
    options: dict[str, str] = {}
    for item in filter(None, query.split("&")):
        key, eq, value = item.partition("=")
        if not eq or not value:
            raise ValueError(f"agent option {item!r} in {spec!r} is not KEY=VALUE")
        if key not in _OPTIONS[name]:
            allowed = ", ".join(sorted(_OPTIONS[name])) or "none"
            raise ValueError(f"agent {name!r} has no option {key!r} (options: {allowed})")
        if key in options:
            raise ValueError(f"agent option {key!r} is given twice in {spec!r}")
        options[key] = value
    return name, (path if colon else None), options


def _int(spec: str, key: str, value: str) -> int:
    try:
        return ascii_int(value)
    except ValueError:
        raise ValueError(f"option {key}={value!r} of {spec!r} is not an integer") from None


def _prune(
    spec: str, options: dict[str, str], key: str = "prune", default: str = "off"
) -> int | None:
    """Replies kept per roll by option `key` (`prune`, `cube_prune`; off: None; on: the
    pruner's default), `default` where the spec does not set it, checked."""
    from agents.search import Pruner

    value = options.get(key, default)
    if value in ("off", "on"):
        return Pruner.keep if value == "on" else None
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise ValueError(
            f"option {key}={value!r} of {spec!r} is on, off or the replies kept per roll (1+)"
        )
    return int(value)


def _cube_window(spec: str, options: dict[str, str]) -> CubeWindow | None:
    """The cube window by option `cube_window` (off: None, every cube decision searched;
    on: the default, `agents.td.CUBE_WINDOW`; one margin of 0 or more for every question; or
    three, `D,T,R`, for the double, the take and the resignation; 0 answers a question at
    0 plies always), checked."""
    from agents.td import CUBE_WINDOW, CubeWindow

    value = options.get("cube_window", "on")
    if value in ("off", "on"):
        return CUBE_WINDOW if value == "on" else None
    margins = []
    for part in value.split(","):
        try:
            margins.append(float(part) if part.isascii() else math.nan)
        except ValueError:
            margins.append(math.nan)
    if len(margins) not in (1, 3) or not all(0 <= m < math.inf for m in margins):
        raise ValueError(
            f"option cube_window={value!r} of {spec!r} is on, off, a margin of 0 or more or "
            "three (double, take, resignation; equity per unit of the cube; 0: always 0-ply)"
        )
    return CubeWindow.every(margins[0]) if len(margins) == 1 else CubeWindow(*margins)


def load_agent(spec: str) -> Agent:
    """The agent a spec names; ValueError (one line) for an unknown or unusable spec."""
    name, path, options = parse_spec(spec)
    agent: Agent
    if name == "random":
        from agents.simple import RandomAgent

        seed = _int(spec, "seed", options["seed"]) if "seed" in options else None
        agent = RandomAgent(seed)
    elif name == "heuristic":
        from agents.heuristic import HeuristicAgent

        agent = HeuristicAgent()
    elif name == "pubeval":
        from agents.pubeval import PubevalAgent

        agent = PubevalAgent()
    elif name == "td":
        from agents.td import load_td

        if path == "":
            raise ValueError(f"agent {spec!r}: write td:PATH, or td alone for the shipped net")
        plies = _int(spec, "plies", options.get("plies", "0"))
        parts = options.get("filter", "8,3").split(",")
        if len(parts) != 2:
            raise ValueError(f"option filter of {spec!r} is two sizes, like filter=8,3")
        filt = (_int(spec, "filter", parts[0]), _int(spec, "filter", parts[1]))
        # unset: the network's default (`agents.td.CUBE_PLIES`; 0 in acey-deucey)
        cube_plies = (
            _int(spec, "cube_plies", options["cube_plies"]) if "cube_plies" in options else None
        )
        agent = load_td(
            path,
            plies=plies,
            filter=filt,
            prune=_prune(spec, options),
            cube_plies=cube_plies,
            cube_window=_cube_window(spec, options),
            cube_prune=_prune(spec, options, "cube_prune", "on"),
        )
    else:
        from agents.gnubg import GnubgAgent

        agent = GnubgAgent(_int(spec, "plies", options.get("plies", "0")))
    agent.name = spec.strip()
    return agent
