"""`vrhcaby rollout POSITION [DICE]`: judge a position or a close play by rolling it out.

Without DICE, the position before the roll: the five outcome probabilities, the cubeless
and cubeful equity and the cube decision, for the side on roll. With DICE (or dice in the
position's Match ID or XGID), the best `--candidates` plays by a 0-ply search, rolled out
with the same dice streams, each with its difference from the best. Every figure comes
with its standard error and a 95% interval; the output says how much quasi-random dice
and luck adjustment cut the error. Ctrl-C prints the estimate over the trials so far.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import signal
import sys

import engine
from agents import load_agent
from engine.formats import MatchState, is_xgid
from engine.play import parse_dice
from engine.waiting import read_position
from vrhcaby.cli.common import (
    MoneyRules,
    StopSignals,
    add_jobs_argument,
    add_money_rules_arguments,
    add_ray_arguments,
    check_parallel,
    money_rules,
)
from vrhcaby.play.rollout import (
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

_NAMES = ("win", "win gammon", "win bg", "lose gammon", "lose bg")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "rollout", help="roll out a position or a play", description=__doc__.splitlines()[0]
    )
    parser.add_argument("position", help="Position ID, PositionID:MatchID, or XGID")
    parser.add_argument("dice", nargs="?", help="roll out the plays for this roll, e.g. 52")
    parser.add_argument("--agent", default="td", help="agent that plays the trials (default td)")
    parser.add_argument(
        "--evaluator",
        metavar="PATH",
        help="network for luck adjustment and truncation (default: the agent's own)",
    )
    parser.add_argument("--trials", type=int, default=1296, help="trials (default 1296)")
    parser.add_argument(
        "--truncate", type=int, metavar="PLIES", help="stop trials after PLIES plies"
    )
    parser.add_argument(
        "--race-cutoff", action="store_true", help="stop trials once there is no contact"
    )
    parser.add_argument(
        "--candidates", type=int, default=5, metavar="K", help="plays to roll out (default 5)"
    )
    parser.add_argument(
        "--cubeful",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="cubeful equities and the cube decision (default on)",
    )
    parser.add_argument(
        "--cubeful-trials",
        action="store_true",
        help="play the cube inside the trials (as GNU Backgammon's cubeful rollouts): "
        "no double and double/take rolled out on the same dice",
    )
    parser.add_argument("--match-id", metavar="ID", help="cube and score as a GNU Match ID")
    add_money_rules_arguments(parser)
    parser.add_argument(
        "--opening",
        action="store_true",
        help="start with an opening roll (each side one die, the higher starts)",
    )
    parser.add_argument(
        "--quasi-random",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="stratify the first rolls (default on)",
    )
    parser.add_argument(
        "--luck",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="luck adjustment (default on)",
    )
    parser.add_argument("--seed", type=int, default=0, help="dice seed (default 0)")
    add_jobs_argument(parser)
    add_ray_arguments(
        parser,
        "where trials run: local processes (--jobs) or Ray tasks (default local)",
        "Ray tasks at once (default 0: the cluster's CPUs)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def _inputs(args: argparse.Namespace):
    if args.trials < 1:
        raise ValueError(f"--trials must be at least 1, got {args.trials}")
    if args.truncate is not None and args.truncate < 1:
        raise ValueError(f"--truncate must be at least 1 ply, got {args.truncate}")
    check_parallel(args)
    if args.candidates < 1:
        raise ValueError(f"--candidates must be at least 1, got {args.candidates}")
    if args.cubeful_trials and not args.cubeful:
        raise ValueError("--cubeful-trials and --no-cubeful contradict each other")
    position, state = read_position(args.position)  # also `start`
    board = position.board
    if args.match_id:
        if state is not None:
            raise ValueError("the position already carries a match state; drop --match-id")
        state = MatchState.from_id(args.match_id.strip())
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
    agent = load_agent(args.agent)
    evaluator = None
    if args.evaluator:
        from vrhcaby.nn.net import load_evaluator

        evaluator = load_evaluator(args.evaluator)
    elif default_evaluator(agent) is None and (args.truncate or args.race_cutoff):
        what = "truncation" if args.truncate else "the race cut-off"
        raise ValueError(
            f"{what} needs a network evaluator; agent {agent.name!r} has none "
            "(give one with --evaluator PATH)"
        )
    elif default_evaluator(agent) is None and args.luck and not args.json:
        print(
            f"note: agent {agent.name!r} has no network: no luck adjustment "
            "(give --evaluator PATH for one)",
            file=sys.stderr,
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
    return board, setting, dice, agent, evaluator, settings


def _bar(args: argparse.Namespace, trials: int):
    if args.no_progress or args.json or not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=trials, unit="trial", leave=False, desc="rollout")

    def update(results: list[RolloutResult]) -> None:
        best = max(results, key=lambda r: r.estimate().equity)
        e = best.estimate()
        bar.n = best.trials
        bar.set_postfix_str(f"equity {e.equity:+.4f} ± {1.96 * e.equity_se:.4f}", refresh=False)
        bar.refresh()

    return bar, update


def _f(x: float, width: int = 7, sign: bool = False) -> str:
    if not math.isfinite(x):
        return "n/a".rjust(width)
    return f"{x:+{width}.4f}" if sign else f"{x:{width}.4f}"


def _cuts(r: RolloutResult) -> str:
    cuts = r.se_cut()
    names = {"luck": "luck adjustment", "quasi_random": "quasi-random dice", "total": "together"}
    parts = [f"{names[k]} {v:.2f}x" for k, v in cuts.items() if math.isfinite(v)]
    return "standard error cut by " + ", ".join(parts) if parts else "no variance reduction"


def _describe(
    agent, evaluator, settings: Settings, setting: CubeSetting, cube_trials: bool = False
) -> str:
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
        f"cube {setting.cube_value} {setting.cube_owner}; {dice}, {luck}, {stop}"
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


def _position_text(r: RolloutResult, cube, describe: str, rolled: CubeRollout | None = None) -> str:
    e = r.estimate()
    lo, hi = e.ci95()
    lines = [describe, "", "        " + "".join(f"{n:>13}" for n in _NAMES)]
    lines.append("value   " + "".join(f"{v:13.4f}" for v in e.mean))
    lines.append("± se    " + "".join(f"{v:13.4f}" for v in e.probability_se))
    lines.append("")
    lines.append(
        f"cubeless equity {_f(e.equity, sign=True)} ± {e.equity_se:.4f}"
        f"  (95%: {lo:+.4f} .. {hi:+.4f})"
    )
    if cube is not None:
        d = cube.decision
        lines.append(
            f"cubeful (Janowski) {_f(d.optimal, sign=True)} ± {cube.optimal_se:.4f}"
            f"  (95%: {d.optimal - 1.96 * cube.optimal_se:+.4f} .. "
            f"{d.optimal + 1.96 * cube.optimal_se:+.4f})"
        )
        lines.append(f"cube decision (Janowski): {d.detail}")
        lines.append(f"  no double     {_f(d.nd, sign=True)} ± {cube.nd_se:.4f}")
        lines.append(f"  double, take  {_f(d.dt, sign=True)} ± {cube.dt_se:.4f}")
        lines.append(f"  double, pass  {_f(d.dp, sign=True)}")
    if rolled is not None:
        se = rolled.versus_optimal
        lines.append(f"cubeful (rolled out) {_f(rolled.optimal, sign=True)}")
        lines.append(f"cube decision (rolled out): {rolled.detail}")
        rows = [
            ("no double", rolled.nd, rolled.nd_se),
            ("double, take", rolled.dt, rolled.dt_se),
            ("double, pass", rolled.dp, 0.0),
        ]
        for name, value, value_se in rows:
            if name in se:
                diff, diff_se = se[name]
                lines.append(
                    f"  {name:<13} {_f(value, sign=True)} ± {value_se:.4f}"
                    f"   ({_f(diff, sign=True)} ± {diff_se:.4f})"
                )
    lines.append(_cuts(r) + f"; {r.plies.mean():.1f} plies per trial")
    return "\n".join(lines)


def _plays_text(
    plays: list[PlayRollout], cubeful: bool, describe: str, cube_trials: bool = False
) -> str:
    lines = [describe, ""]
    head = f"{'#':>2} {'play':<22}{'equity':>9}{'± se':>8}{'diff':>9}{'± se':>8}"
    head += f"{'cubeful':>9}{'± se':>8}" if cubeful else ""
    head += f"{'cf trials':>10}{'± se':>8}" if cube_trials else ""
    head += f"{'win':>8}{'wg':>7}{'lg':>7}{'0-ply':>9}"
    lines.append(head)
    for k, x in enumerate(plays, 1):
        e = x.result.estimate()
        assert x.diff is not None
        row = f"{k:>2} {x.play!s:<22}{_f(e.equity, 9, True)}{_f(e.equity_se, 8)}"
        row += f"{_f(x.diff.equity, 9, True)}{_f(x.diff.equity_se, 8)}"
        if cubeful:
            row += f"{_f(x.cubeful, 9, True)}{_f(x.cubeful_se, 8)}"
        if cube_trials:
            mean, se = x.result.cubeful_estimate()
            row += f"{_f(mean, 10, True)}{_f(se, 8)}"
        row += f"{e.mean[0]:8.3f}{e.mean[1]:7.3f}{e.mean[3]:7.3f}{_f(x.prior, 9, True)}"
        lines.append(row)
    lines.append("diff: equity minus the best's, paired by trial (same dice), with its error")
    if cubeful:
        lines.append(
            "cubeful: Janowski from the rolled-out probabilities"
            + ("; cf trials: the cube played in the trials" if cube_trials else "")
        )
    lines.append(_cuts(plays[0].result))
    return "\n".join(lines)


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


def run(args: argparse.Namespace) -> int:
    """The rollout; after SIGINT or SIGTERM, the estimate over the trials finished, exit
    status 130 or 143 (`StopSignals`)."""
    with StopSignals() as stop:
        _rollout(args, stop)
    return stop.status


def _rollout(args: argparse.Namespace, stop: StopSignals) -> None:
    board, setting, dice, agent, evaluator, settings = _inputs(args)
    trials_cube = setting if args.cubeful_trials else None
    bar, update = _bar(args, settings.trials)
    where = {"jobs": args.jobs, "backend": "local"}
    if args.backend == "ray":
        where = {"jobs": args.workers, "backend": "ray", "address": args.address}
    try:
        if dice is None:
            result = rollout_position(
                board,
                agent,
                evaluator=evaluator,
                settings=settings,
                opening=args.opening,
                progress=update,
                cube=trials_cube,
                **where,
            )
            interrupted, done = result.interrupted, result.trials
        else:
            plays = rollout_plays(
                board,
                dice,
                agent,
                candidates=args.candidates,
                evaluator=evaluator,
                settings=settings,
                progress=update,
                cube=trials_cube,
                **where,
            )
            interrupted, done = plays[0].result.interrupted, plays[0].result.trials
    finally:
        if bar is not None:
            bar.close()
    if interrupted:
        stop.received = stop.received or signal.SIGINT
        print(f"interrupted: the estimate over the {done} trials finished", file=sys.stderr)
        if done == 0:
            return
        settings = dataclasses.replace(settings, trials=done)  # what the header reports
    describe = _describe(
        agent, evaluator or default_evaluator(agent), settings, setting, args.cubeful_trials
    )
    cubeful = args.cubeful and not args.opening
    if dice is None:
        cube = cube_analysis(result.estimate(), board, setting) if cubeful else None
        rolled = cube_rollout(result, setting) if args.cubeful_trials else None
        if args.json:
            out = {
                "position": engine.position_id(board),
                "settings": describe,
                **_rules_json(setting),
                "rollout": result.to_json(),
                "cube": cube.to_json() if cube else None,
            }
            if rolled is not None:
                out["cube_rollout"] = rolled.to_json()
            print(json.dumps(out, indent=2))
        else:
            print(_position_text(result, cube, describe, rolled))
    else:
        if cubeful:
            add_cubeful(plays, setting)
        if args.json:
            out = {
                "position": engine.position_id(board),
                "dice": list(dice),
                "settings": describe,
                **_rules_json(setting),
                "plays": [_play_json(x) for x in plays],
            }
            print(json.dumps(out, indent=2))
        else:
            print(_plays_text(plays, cubeful, describe, args.cubeful_trials))
