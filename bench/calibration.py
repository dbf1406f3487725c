"""Calibration of an agent's probabilities in its own games: predicted against realised.

    python bench/calibration.py 'td?cube_plies=0' --games 10000
    python bench/calibration.py td:td-contact-gen2 --games 2000 --json results/cal.json

The agent plays itself (cubeless money, `--games` games in lockstep, seeded dice); before
every turn but each game's first the side on roll's P(win), P(win gammon), P(win
backgammon), P(lose gammon) and P(lose backgammon) are recorded (`before_roll`, the
probabilities its cube decisions use: for `td` those of the cubeless search at its cube
depth, 1 ply unless the spec says `cube_plies=0`, the network's own 0-ply probabilities,
which is what the reports in docs/ measure) and set against what that side then won or lost
(`vrhcaby.play.calibration`). Each probability is cut in deciles (ten bins of equal count
by the prediction); printed per decile: the range, the mean prediction, the frequency
realised, the gap (realised minus predicted, in percentage points) with its standard
error clustered by game (the binomial one, which treats the turns of a game as
independent, is in the JSON), for all turns and for contact and race positions
separately. `--svg` draws the reliability diagram (all turns; win and the gammons).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import load_agent  # noqa: E402
from vrhcaby.equity.outcomes import LOSE_GAMMON, OUTCOMES, WIN, WIN_GAMMON  # noqa: E402
from vrhcaby.io.plot import reliability_svg  # noqa: E402
from vrhcaby.nn.checkpoint import write_atomic  # noqa: E402
from vrhcaby.play.calibration import GROUPS, selfplay_predictions  # noqa: E402

DRAWN = tuple(OUTCOMES[k] for k in (WIN, WIN_GAMMON, LOSE_GAMMON))


def print_tables(report: dict) -> None:
    """The decile tables of each event, all turns, then per group."""
    for group in ("all", *GROUPS):
        for event in OUTCOMES:
            rows = report[group][event]
            worst = max(abs(r["gap"]) for r in rows)
            print(
                f"\n{event} ({group}, {sum(r['count'] for r in rows):,} turns;"
                f" largest gap {100 * worst:.1f} points)"
            )
            print(f"  {'range':>13s} {'count':>7s} {'predicted':>9s} {'realised':>8s} {'gap':>12s}")
            for r in rows:
                print(
                    f"  {r['lo']:.3f}-{r['hi']:.3f} {r['count']:7d} {100 * r['predicted']:8.2f}%"
                    f" {100 * r['realised']:7.2f}% {100 * r['gap']:+6.2f}±{100 * r['se_games']:.2f}"
                )


def diagram(report: dict, title: str) -> str:
    """The reliability diagram of the events drawn (`DRAWN`), all turns."""
    series = {}
    for event in DRAWN:
        rows = report["all"][event]
        series[event.replace("_", " ")] = (
            [r["predicted"] for r in rows],
            [r["realised"] for r in rows],
            [r["se_games"] for r in rows],
        )
    return reliability_svg(series, title)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agent", help="agent spec with pre-roll probabilities (td, gnubg)")
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=2029)
    parser.add_argument("--json", type=Path, help="also write the tables here")
    parser.add_argument("--svg", type=Path, help="draw the reliability diagram here")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    torch.set_num_threads(1)
    agent = load_agent(args.agent)
    start = time.perf_counter()
    predictions = selfplay_predictions(agent, args.games, args.seed)
    seconds = time.perf_counter() - start
    report = predictions.report()
    print(
        f"{args.agent}: {args.games:,} games of self-play, {report['turns']:,} turns"
        f" in {seconds:.0f} s"
    )
    print_tables(report)
    if args.json:
        data = {"agent": args.agent, "games": args.games, "seed": args.seed, "seconds": seconds}
        write_atomic(args.json, json.dumps({**data, **report}, indent=1) + "\n")
    if args.svg:
        title = f"{args.agent}: {args.games:,} self-play games, deciles"
        write_atomic(args.svg, diagram(report, title))
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except ValueError as exc:  # a bad agent spec, an agent without probabilities
        raise SystemExit(f"calibration: {exc}") from None
