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
import json
import math
import signal
import sys

from vrhcaby.cli.common import (
    StopSignals,
    add_jobs_argument,
    add_money_rules_arguments,
    add_ray_arguments,
    check_parallel,
)
from vrhcaby.equity.outcomes import OUTCOMES
from vrhcaby.io.answers import (
    RolloutInputs,
    rollout_inputs,
    run_rollout,
)
from vrhcaby.play.rollout import (
    CubeRollout,
    PlayRollout,
    RolloutResult,
    default_evaluator,
)

#: The five probabilities' column heads: "win", "win gammon", "win bg", "lose gammon", "lose bg".
_NAMES = tuple(name.replace("_", " ").replace("backgammon", "bg") for name in OUTCOMES)


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


def _inputs(args: argparse.Namespace) -> RolloutInputs:
    """The checked inputs (`vrhcaby.io.answers.rollout_inputs`) and where they run."""
    check_parallel(args)
    inputs = rollout_inputs(args)
    quiet = args.json or not args.luck or inputs.evaluator is not None
    if not quiet and default_evaluator(inputs.agent) is None:
        print(
            f"note: agent {inputs.agent.name!r} has no network: no luck adjustment "
            "(give --evaluator PATH for one)",
            file=sys.stderr,
        )
    return inputs


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


def run(args: argparse.Namespace) -> int:
    """The rollout; after SIGINT or SIGTERM, the estimate over the trials finished, exit
    status 130 or 143 (`StopSignals`)."""
    with StopSignals() as stop:
        _rollout(args, stop)
    return stop.status


def _rollout(args: argparse.Namespace, stop: StopSignals) -> None:
    inputs = _inputs(args)
    bar, update = _bar(args, inputs.settings.trials)
    where: dict = {"jobs": args.jobs, "backend": "local"}
    if args.backend == "ray":
        where = {"jobs": args.workers, "backend": "ray", "address": args.address}
    try:
        run = run_rollout(inputs, args, progress=update, **where)
    finally:
        if bar is not None:
            bar.close()
    if run.interrupted:
        stop.received = stop.received or signal.SIGINT
        trials = f"{run.done} trial" + ("" if run.done == 1 else "s")
        print(f"interrupted: the estimate over the {trials} finished", file=sys.stderr)
        if run.done == 0 and not args.json:  # the JSON says so: trials 0, interrupted
            return
    if args.json:
        print(json.dumps(run.to_json(), indent=2))
    elif run.result is not None:
        print(_position_text(run.result, run.cube, run.describe, run.rolled))
    else:
        assert run.plays is not None
        print(_plays_text(run.plays, run.cubeful, run.describe, args.cubeful_trials))
