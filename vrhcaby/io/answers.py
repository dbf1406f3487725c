"""The answers of `hint`, `cube`, `eval` and `rollout` as JSON documents (`moves` and `show`:
`vrhcaby.io.board_json`).

One home for what the command line's `--json` prints and what `vrhcaby serve` answers over
HTTP: both read their options from an `argparse.Namespace` with the command line's names
(`position`, `match_id`, `match_to`, `score`, `crawford`, `jacoby`, `beavers`, `max_cube`,
`cube_efficiency`, `agent`, `plies`, ...), check them here, compute here and build the
document here, so the two answer alike field for field. Bad input is a `ValueError` of
one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

import engine
from agents import load_agent, parse_spec
from agents.base import GameContext
from engine.formats import MatchState, is_xgid
from engine.play import parse_dice
from engine.waiting import read_position as read_waiting_position
from vrhcaby import analysis
from vrhcaby.equity.context import MoneyRules, context_for, money_rule, money_rules, parse_score
from vrhcaby.io.board_json import read_dice
from vrhcaby.play.rollout import (
    CubeAnalysis,
    CubeRollout,
    CubeSetting,
    PlayRollout,
    RolloutResult,
    Settings,
    add_cubeful,
    cube_analysis,
    cube_rollout,
    default_evaluator,
    rollout_plays,
    rollout_position,
)
from vrhcaby.play.rollout_trials import Progress

#: What loads an analysis agent from its spec (`load_analysis_agent`, or a server's cache).
AgentLoader = Callable[[str], Any]


def number(x: float | None) -> float | None:
    """A float for JSON (None for a missing or NaN value)."""
    return None if x is None or math.isnan(x) else round(float(x), 6)


# --- the position, the match and the agent ---------------------------------------------


#: The network `td` alone stands for in a variant that has its own (`vrhcaby play`,
#: `hint`, `eval` and `cube` with `--variant`).
VARIANT_AGENTS = {
    "nackgammon": "td:td-nackgammon",
    "nackgammon-seed": "td:td-nackgammon",
    "acey-deucey": "td:td-acey-deucey-gen2",
}


def variant_agent(spec: str, variant: str) -> str:
    """The agent spec to load in `variant`: `td` alone is the variant's own shipped network
    where it has one (`VARIANT_AGENTS`), any other spec itself."""
    engine.get_variant(variant)  # an unknown variant: a ValueError naming the known ones
    return VARIANT_AGENTS.get(variant, spec) if spec == "td" else spec


def load_analysis_agent(spec: str) -> Any:
    """The agent a spec names, if it gives probabilities (a td agent); ValueError if not."""
    agent = load_agent(spec)
    if not hasattr(agent, "before_roll"):
        raise ValueError(
            f"agent {spec!r} gives no outcome probabilities; analysis needs a td agent "
            "(td or td:PATH)"
        )
    return agent


def read_position(args: argparse.Namespace) -> tuple[np.ndarray, engine.MatchState | None]:
    """The board (side on roll in row 1) and the match state of POSITION and --match-id."""
    position, state = read_variant_position(args)
    return position.board, state


def read_variant_position(
    args: argparse.Namespace,
) -> tuple[engine.Position, engine.MatchState | None]:
    """The position (acey-deucey: with its waiting checkers) and the match state of
    POSITION (also `start`, `engine.waiting`) in `--variant`, and of --match-id."""
    position, state = read_waiting_position(args.position, getattr(args, "variant", "standard"))
    if args.match_id:
        given = engine.MatchState.from_id(args.match_id.strip())
        if state is not None and state != given:
            raise ValueError(f"--match-id {args.match_id} contradicts the match in the position")
        state = given
    return position, state


def read_rules(args: argparse.Namespace, state: engine.MatchState | None) -> MoneyRules:
    """The money rules in force: the flags, else the position's, else gnubg's defaults."""
    return money_rules(args, state, from_xgid=is_xgid(args.position))


def read_context(
    args: argparse.Namespace, board: np.ndarray, state, rules: MoneyRules
) -> GameContext:
    """The cube and match context of the side on roll from the options."""
    if args.cube_efficiency is not None and not 0.0 <= args.cube_efficiency <= 1.0:
        raise ValueError(f"--cube-efficiency must be in [0, 1], got {args.cube_efficiency}")
    score = parse_score(args.score) if args.score else None
    if args.match_to is None and score is not None and state is None:
        raise ValueError("--score needs --match-to")
    if state is not None and not state.match_length:
        state = dataclasses.replace(state, jacoby=rules.jacoby, beavers=rules.beavers)
    return context_for(
        board,
        state,
        match_to=args.match_to,
        score=score,
        crawford=args.crawford,
        jacoby=rules.jacoby,
        max_cube=args.max_cube,
    )


#: The cube's owner in every header's words (`cube 1 centred`).
CUBE_OWNER_WORDS = {
    "centre": "centred",
    "me": "owned by the side on roll",
    "opponent": "owned by the opponent",
}


def describe_context(ctx: GameContext, rules: MoneyRules) -> str:
    """One line: money play and its rules, or the match score; and the cube."""
    cube_text = f"cube {ctx.cube_value} {CUBE_OWNER_WORDS[ctx.cube_owner]}"
    if not ctx.match_to:
        return f"money play, {rules.describe()}; {cube_text}"
    away = (ctx.match_to - ctx.score[0], ctx.match_to - ctx.score[1])
    tag = ", Crawford game" if ctx.crawford else ""
    if not ctx.crawford and 1 in away:
        tag = ", post-Crawford"
    return (
        f"{ctx.match_to}-point match, score {ctx.score[0]}-{ctx.score[1]} "
        f"({away[0]}-away, {away[1]}-away{tag}); {cube_text}"
    )


def money_json(ctx: GameContext, rules: MoneyRules) -> dict:
    """The money rules in force for `--json` (None for both in match play)."""
    money = not ctx.match_to
    return {"jacoby": rules.jacoby if money else None, "beavers": rules.beavers if money else None}


# --- hint --------------------------------------------------------------------------------


def pruned_spec(spec: str, plies: int | None, no_prune: bool) -> str:
    """The agent spec hint uses: `spec` with ``prune=on`` added for a td agent searching
    1 or 2 plies whose spec does not set prune, unless `no_prune`; with `no_prune`, a
    spec that asks for pruning is an error (they contradict each other)."""
    name, _, options = parse_spec(spec)
    if name != "td":
        return spec
    if no_prune:
        if options.get("prune", "off") != "off":
            raise ValueError(f"--no-prune contradicts the agent spec {spec!r}")
        return spec
    given = options.get("plies", "0")  # a malformed one is load_agent's to report
    depth = (
        plies if plies is not None else (int(given) if given.isascii() and given.isdigit() else 0)
    )
    if depth == 0 or "prune" in options:
        return spec
    return f"{spec.strip()}{'&' if '?' in spec else '?'}prune=on"


@dataclasses.dataclass(frozen=True)
class Hint:
    """The ranked plays of a position and roll (standard rules), with what they depend on."""

    board: np.ndarray
    dice: tuple[int, int]
    context: GameContext
    rules: MoneyRules
    cubeful: bool
    #: Every legal play, best first (`analysis.candidate_plays`).
    ranked: list[analysis.Candidate]


def hint(args: argparse.Namespace, load: AgentLoader = load_analysis_agent) -> Hint:
    """`hint`'s ranking of the plays of POSITION and DICE under the options (`candidates`,
    `cubeless`, `no_prune`, `plies`, the match and cube options)."""
    if args.candidates < 1:
        raise ValueError(f"--candidates must be at least 1, got {args.candidates}")
    board, state = read_position(args)
    rules = read_rules(args, state)
    ctx = read_context(args, board, state, rules)
    dice = read_dice(args, state)
    spec = variant_agent(args.agent, getattr(args, "variant", "standard"))
    agent = load(pruned_spec(spec, args.plies, args.no_prune))
    ranked = analysis.candidate_plays(
        agent,
        board,
        dice,
        ctx,
        plies=args.plies,
        x=args.cube_efficiency,
        cubeful=not args.cubeless,
    )
    return Hint(board, dice, ctx, rules, not args.cubeless, ranked)


def hint_json(
    candidates: list[analysis.Candidate],
    dice: tuple[int, int],
    ctx: GameContext,
    cubeful: bool,
    rules: MoneyRules,
) -> dict:
    """The `--json` document: ``{"moves": [...]}`` best first, plus the roll and setting."""
    return {
        "dice": list(dice),
        "cubeful": cubeful,
        "match_to": ctx.match_to,
        "score": list(ctx.score),
        **money_json(ctx, rules),
        "moves": [
            {
                "play": str(c.play),
                "equity": number(c.equity),
                "cubeless_equity": number(c.cubeless),
                "mwc": number(c.mwc),
                "plies": c.plies,
                "probabilities": [number(v) for v in c.probabilities],
                "position_id": c.position_id,
                "next_position_id": c.next_position_id,
            }
            for c in candidates
        ],
    }


def hint_json_ad(candidates, dice: tuple[int, int], ctx: GameContext, cubeful: bool) -> dict:
    """`hint --variant acey-deucey --json`: as `hint_json`, each move also split into its
    parts (`first`: the roll's play, or the 1 and the 2; `double`: the double chosen, or
    null; `double_play`) with `extra_turn`, and `position_id` written `PID@X,O` from the
    view of the side that rolls next."""
    doc: dict[str, Any] = {
        "variant": "acey-deucey",
        "dice": list(dice),
        "cubeful": cubeful,
        "match_to": ctx.match_to,
        "score": list(ctx.score),
        "moves": [],
    }
    for c in candidates:
        first, double, double_play = c.parts
        doc["moves"].append(
            {
                "play": str(c.play),
                "first": first,
                "double": double,
                "double_play": double_play,
                "extra_turn": c.extra_turn,
                "equity": number(c.equity),
                "cubeless_equity": number(c.cubeless),
                "mwc": number(c.mwc),
                "plies": 0,
                "probabilities": [number(v) for v in c.probabilities],
                "position_id": c.position_id,
            }
        )
    return doc


# --- cube and eval -------------------------------------------------------------------------


def evaluate(
    args: argparse.Namespace, load: AgentLoader = load_analysis_agent
) -> tuple[analysis.PositionEvaluation, str, dict]:
    """What `cube` and `eval` show: the evaluation of POSITION before the roll (in
    `--variant`: acey-deucey's with its waiting checkers), the header's setting line and
    the money rules for `--json`."""
    variant = getattr(args, "variant", "standard")
    spec = variant_agent(args.agent, variant)
    agent = load(spec)
    if not agent.supports(variant):
        raise ValueError(f"agent {agent.name!r} cannot play variant {variant!r}")
    position, state = read_variant_position(args)
    board = plain = position.board
    if engine.get_variant(variant).enter_from_start:
        from engine.acey_deucey import to_board_ad
        from vrhcaby.nn.encode import waiting_on_bar

        board = to_board_ad(position)
        plain = waiting_on_bar(board[None])[0]  # the match state's checks count them in
    rules = read_rules(args, state)
    ctx = read_context(args, plain, state, rules)
    beavers = money_rule(rules.beavers, match_to=ctx.match_to)
    plies = cube_plies(spec, agent, args.plies)
    ev = analysis.evaluate(agent, board, ctx, plies=plies, x=args.cube_efficiency, beavers=beavers)
    setting = describe_context(ctx, rules)
    if variant != "standard":
        setting = f"{variant}, {setting}"
    return ev, setting, money_json(ctx, rules)


def cube_plies(spec: str, agent: Any, given: int | None) -> int:
    """The look-ahead of the cube analysis of `cube` and `eval`: `given` (`--cube-plies`,
    or a request's `plies`), else the `cube_plies` the agent spec sets (`td?cube_plies=0`
    asks for Janowski's 0-ply), else `analysis.CUBE_PLIES`, the best measured; not the td
    agent's own default, which is the tournaments' (`agents.td`)."""
    if given is not None:
        return given
    _, _, options = parse_spec(spec)
    return agent.cube_plies if "cube_plies" in options else analysis.CUBE_PLIES


def cube_json(ev: analysis.PositionEvaluation, rules: dict) -> dict:
    """The `--json` document of the cube command."""
    d = ev.decision
    out = {
        **rules,
        "action": d.action,
        "detail": d.detail,
        "double": bool(d.double),
        "take": bool(d.take),
        "beaver": bool(d.beaver),
        "available": bool(d.available),
        "equities": {"nd": number(d.nd), "dt": number(d.dt), "dp": number(d.dp)},
        "optimal": number(d.optimal),
        "cubeless": number(d.cubeless),
        "doubler_error": number(d.doubler_error),
        "taker_error": number(d.taker_error),
        "probabilities": [number(v) for v in ev.probabilities],
        "cube_efficiency": number(ev.x),
        "cube_plies": ev.plies,
    }
    if d.nd_mwc is not None:
        out["mwc"] = {
            "nd": number(d.nd_mwc),
            "dt": number(d.dt_mwc),
            "dp": number(d.dp_mwc),
            "optimal": number(d.optimal_mwc),
            "cubeless": number(d.cubeless_mwc),
        }
    return out


def eval_json(ev: analysis.PositionEvaluation, rules: dict) -> dict:
    """The `--json` document of the eval command: the probabilities, the equities, the
    match figures and the cube analysis (`cube_json`)."""
    return {
        **rules,
        "probabilities": [number(v) for v in ev.probabilities],
        "cubeless_equity": number(ev.cubeless),
        "cubeful_equity": number(ev.cubeful),
        "cubeful_equity_no_double": number(ev.cubeful_nd),
        "mwc_cubeless": number(ev.mwc_cubeless),
        "mwc_cubeful": number(ev.mwc_cubeful),
        "take_points": None if ev.take_points is None else [number(t) for t in ev.take_points],
        "gammon_values": None
        if ev.gammon_values is None
        else dict(zip(ev.gammon_values._fields, map(number, ev.gammon_values), strict=True)),
        "cube": cube_json(ev, rules),
    }


# --- rollout -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RolloutInputs:
    """A rollout's checked inputs: what `rollout_position` / `rollout_plays` take."""

    board: np.ndarray
    setting: CubeSetting
    #: The roll whose plays are rolled out, or None for the position before the roll.
    dice: tuple[int, int] | None
    agent: Any
    #: The `--evaluator` network, or None for the agent's own.
    evaluator: Any
    settings: Settings


def rollout_inputs(args: argparse.Namespace, load: AgentLoader = load_agent) -> RolloutInputs:
    """The checked inputs of a rollout from the `rollout` options (`trials`, `truncate`,
    `race_cutoff`, `candidates`, `cubeful`, `cubeful_trials`, `match_id`, the money rules,
    `opening`, `quasi_random`, `luck`, `seed`, `agent`, `evaluator`)."""
    if args.trials < 1:
        raise ValueError(f"--trials must be at least 1, got {args.trials}")
    if args.truncate is not None and args.truncate < 1:
        raise ValueError(f"--truncate must be at least 1 ply, got {args.truncate}")
    if args.candidates < 1:
        raise ValueError(f"--candidates must be at least 1, got {args.candidates}")
    if args.cubeful_trials and not args.cubeful:
        raise ValueError("--cubeful-trials and --no-cubeful contradict each other")
    position, state = read_waiting_position(args.position)  # also `start`
    board = position.board
    if args.match_id:
        if state is not None:
            raise ValueError("the position already carries a match state; drop --match-id")
        state = MatchState.from_id(args.match_id.strip())
    if state is not None:  # the checks every verb makes: match length, score, cube limit
        context_for(board, state)
    setting = CubeSetting.from_state(state)
    if not setting.match_to:
        rules = money_rules(args, state, from_xgid=is_xgid(args.position) and not args.match_id)
        setting = dataclasses.replace(setting, jacoby=rules.jacoby, beavers=rules.beavers)
    dice = parse_dice(args.dice) if args.dice else None
    if dice is None and state is not None and state.dice != (0, 0):
        dice = state.dice
    if engine.game_value(board[None])[0] or engine.game_value(board[None, ::-1])[0]:
        raise ValueError("the game in this position is over: no side is on roll")
    if dice is not None and args.opening:
        raise ValueError("--opening rolls out the position before the opening roll: no dice")
    agent = load(args.agent)
    evaluator = None
    if args.evaluator:
        from agents.td import find_checkpoint
        from vrhcaby.nn.net import load_evaluator

        evaluator = load_evaluator(find_checkpoint(args.evaluator))  # a path or shipped name
    elif default_evaluator(agent) is None and (args.truncate or args.race_cutoff):
        what = "truncation" if args.truncate else "the race cut-off"
        raise ValueError(
            f"{what} needs a network evaluator; agent {agent.name!r} has none "
            "(give one with --evaluator PATH)"
        )
    settings = Settings(
        trials=args.trials,
        truncate=args.truncate,
        race_cutoff=args.race_cutoff,
        quasi_random=args.quasi_random,
        luck=args.luck,
        seed=args.seed,
    )
    settings.check()
    return RolloutInputs(board, setting, dice, agent, evaluator, settings)


def describe_rollout(
    agent, evaluator, settings: Settings, setting: CubeSetting, cube_trials: bool = False
) -> str:
    """The rollout's settings in one line (its header, and `settings` in its JSON)."""
    game = f"{setting.match_to}-point match, {setting.away[0]}-away/{setting.away[1]}-away"
    if not setting.match_to:
        game = f"money ({MoneyRules(setting.jacoby, setting.beavers).describe()})"
    luck = "luck-adjusted" if settings.luck and evaluator is not None else "no luck adjustment"
    stop = f"truncated at {settings.truncate} plies" if settings.truncate else "played to the end"
    if settings.race_cutoff:
        stop += ", stopped at no contact"
    dice = "quasi-random dice" if settings.quasi_random else "random dice"
    text = (
        f"{settings.trials} trials by {agent.name} (seed {settings.seed}), {game}, "
        f"cube {setting.cube_value} {CUBE_OWNER_WORDS[setting.cube_owner]}; {dice}, {luck}, "
        f"{stop}"
    )
    if cube_trials:
        text += "; cube played in the trials (the network's 0-ply Janowski decisions"
        if settings.luck and evaluator is not None:
            text += (
                ", no luck adjustment of cubeful figures in match play)"
                if setting.match_to
                else ", cubeful luck = cubeless luck x cube)"
            )
        else:
            text += ")"
    return text


def _rules_json(setting: CubeSetting) -> dict:
    """The money rules of the cube analysis for `--json` (None for both in match play)."""
    money = not setting.match_to
    return {
        "jacoby": setting.jacoby if money else None,
        "beavers": setting.beavers if money else None,
    }


def _play_json(x: PlayRollout) -> dict:
    assert x.diff is not None
    out = {
        "play": str(x.play),
        "position_id": x.play.position.position_id(),
        "next_position_id": x.play.position.flip().position_id(),
        "prior": x.prior,
        **x.result.to_json(),
    }
    out["diff"] = x.diff.equity
    out["diff_se"] = x.diff.equity_se
    out["cubeful"] = x.cubeful
    out["cubeful_se"] = x.cubeful_se
    if x.result.cubeful is not None:
        out["cubeful_rollout"], out["cubeful_rollout_se"] = x.result.cubeful_estimate()
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in out.items()}


@dataclasses.dataclass(frozen=True)
class RolloutRun:
    """What a rollout found: a position's (`result`, `cube`, `rolled`) or its plays'."""

    inputs: RolloutInputs
    #: The settings line, with the trials finished.
    describe: str
    #: Trials finished; fewer than asked when interrupted.
    done: int
    interrupted: bool
    #: Cubeful figures asked for (not with an opening roll).
    cubeful: bool
    result: RolloutResult | None = None
    #: The cube decision from the rolled-out probabilities (`cube_analysis`).
    cube: CubeAnalysis | None = None
    #: The cube played in the trials (`cube_rollout`).
    rolled: CubeRollout | None = None
    plays: list[PlayRollout] | None = None

    def to_json(self) -> dict:
        """The `rollout --json` document: a position's rollout and its cube analysis, or
        the plays rolled out, best first."""
        i = self.inputs
        board_id = engine.position_id(i.board)
        if self.plays is None:
            assert self.result is not None
            out = {
                "position": board_id,
                "settings": self.describe,
                **_rules_json(i.setting),
                "rollout": self.result.to_json(),
                "cube": self.cube.to_json() if self.cube else None,
            }
            if self.rolled is not None:
                out["cube_rollout"] = self.rolled.to_json()
            return out
        assert i.dice is not None
        return {
            "position": board_id,
            "dice": list(i.dice),
            "settings": self.describe,
            **_rules_json(i.setting),
            "plays": [_play_json(x) for x in self.plays],
        }


def run_rollout(
    inputs: RolloutInputs,
    args: argparse.Namespace,
    *,
    progress: Progress | None = None,
    jobs: int = 1,
    backend: str = "local",
    address: str | None = None,
) -> RolloutRun:
    """Roll out the position (no dice) or its best `args.candidates` plays, with the
    cube played in the trials under `args.cubeful_trials`, and add the cube figures
    (`args.cubeful`, not with `args.opening`). KeyboardInterrupt inside (Ctrl-C, or
    `progress` raising it) stops the trials: the run then holds the ones finished."""
    i = inputs
    trials_cube = i.setting if args.cubeful_trials else None
    where: dict[str, Any] = {"jobs": jobs, "backend": backend, "address": address}
    result = plays = None
    if i.dice is None:
        result = rollout_position(
            i.board,
            i.agent,
            evaluator=i.evaluator,
            settings=i.settings,
            opening=args.opening,
            progress=progress,
            cube=trials_cube,
            **where,
        )
        interrupted, done = result.interrupted, result.trials
    else:
        plays = rollout_plays(
            i.board,
            i.dice,
            i.agent,
            candidates=args.candidates,
            evaluator=i.evaluator,
            settings=i.settings,
            progress=progress,
            cube=trials_cube,
            **where,
        )
        interrupted, done = plays[0].result.interrupted, plays[0].result.trials
    settings = dataclasses.replace(i.settings, trials=done) if interrupted else i.settings
    evaluator = i.evaluator or default_evaluator(i.agent)
    describe = describe_rollout(i.agent, evaluator, settings, i.setting, args.cubeful_trials)
    cubeful = args.cubeful and not args.opening
    run = RolloutRun(i, describe, done, interrupted, cubeful, result=result, plays=plays)
    if done == 0:
        return run
    if result is not None:
        cube = cube_analysis(result.estimate(), i.board, i.setting) if cubeful else None
        rolled = cube_rollout(result, i.setting) if args.cubeful_trials else None
        return dataclasses.replace(run, cube=cube, rolled=rolled)
    if cubeful:
        assert plays is not None
        add_cubeful(plays, i.setting)
    return run
