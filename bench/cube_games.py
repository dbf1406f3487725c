"""Agents' cube actions judged on the cube decisions of real games: what each costs a game.

    python bench/cube_games.py --build runs/tournaments/gen9-default26-gnubg-cube-100k-s11 \\
        --set runs/cube-games-s11.npz
    python bench/cube_games.py --set runs/cube-games-s11.npz td 'gnubg?plies=0' \\
        'td?cube_plies=0'

The cube yardstick (`bench/cube_judge.py`) draws its decisions from self-play games at
fixed shares; a tournament with the cube against GNU Backgammon is played on other
positions, under its own money rules (the Jacoby rule, as `vrhcaby tournament` plays by
default). `--build` takes the decisions from the games of a `vrhcaby tournament --out`
folder (`games.jsonl`, its first `--games`): every turn before the roll where the side on
roll may double (`vrhcaby.play.cube_judge.recorded_turns`), under the games' Jacoby rule.
They fall into strata: which agent was on roll (the folder's first, `a`, or `b`), whether
it doubled there, the cube state, and whether gnubg 0-ply finds the decision close (no
double and double, or take and pass, within `CLOSE`). `--decisions` are drawn, the
strata where a double was made or the decision is close four times as densely as the
others, and judged by gnubg 2-ply's cube analysis (resumable, as `bench/cube_judge.py
--build`). The set is a `CubeSet` (.npz, sources = strata) with a JSON beside it saying
how many decisions of each stratum the games held (`--set` with .json).

Each agent named then answers every decision, in the first agent's seat (`a`) and in the
other's (`b`), and its errors are weighted back to the games (a stratum's decisions
stand for all of its kind in the games read): per game, the doubler's error on its own
turns before the roll and the taker's on the turns where its opponent doubled in the
games. To first order (the positions are the games', whoever answers), a cube action
that costs less by this measure gains that much a game in those games, in points per game
with standard errors (stratified), paired to the first agent. gnubg 2-ply judges without
beavers (the games allowed them) and is never a teacher: nothing printed may become a
training target.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import load_agent  # noqa: E402
from vrhcaby.equity import decisions  # noqa: E402
from vrhcaby.nn.checkpoint import write_atomic  # noqa: E402
from vrhcaby.play.cube_judge import CubeSet, GnubgCubeJudge, recorded_turns  # noqa: E402
from vrhcaby.play.judge import build_in_parts  # noqa: E402

#: gnubg 0-ply's margin (equity) under which a decision counts as close.
CLOSE = 0.1
#: How much more densely the strata with a double or a close decision are drawn.
DENSER = 4
#: Decisions judged per resumable part.
PART = 100


def read_games(folder: Path, games: int) -> tuple[list[SimpleNamespace], dict]:
    """The first `games` records of a tournament folder, as `recorded_turns` reads a
    pair's results, and the folder's run.json."""
    path = folder / "games.jsonl"
    if not path.is_file():
        raise ValueError(f"{folder}: no games.jsonl (a `vrhcaby tournament --out` folder)")
    run = json.loads((folder / "run.json").read_text()) if (folder / "run.json").is_file() else {}
    if run.get("cube") is False:
        raise ValueError(f"{folder}: a cubeless tournament has no cube decisions")
    results = []
    with path.open() as f:
        for line in f:
            if len(results) == games:
                break
            g = json.loads(line)
            results.append(
                SimpleNamespace(
                    record=g, sample=g["sample"], copy=g["copy"], points=g["points"],
                    winner=g["winner"], a_seat=g.get("a_seat", 0), agents=(g["a"], g["b"]),
                )
            )  # fmt: skip
    if not results:
        raise ValueError(f"{path}: no games")
    return results, run


def strata(folder: Path, games: int) -> tuple[np.ndarray, list, np.ndarray, dict]:
    """Every cube decision of the games (boards, contexts), its stratum's name, and the
    facts the set's JSON keeps (the games read, the agents, the Jacoby rule)."""
    results, run = read_games(folder, games)
    jacoby = bool(run.get("jacoby", True))
    turns = recorded_turns(SimpleNamespace(results=results), jacoby=jacoby)
    a_seats = np.array([r.a_seat for r in results])[turns.games]
    gnubg = load_agent("gnubg?plies=0")
    names = []
    for i, (board, context) in enumerate(zip(turns.boards, turns.contexts, strict=True)):
        d = decisions.cube_decision(gnubg.before_roll(board), board, context)
        close = min(abs(d.nd - min(d.dt, d.dp)), abs(d.dt - d.dp)) <= CLOSE
        state = "centred" if context.cube_owner == "centre" else "owned"
        state = "match" if context.match_to else state
        on_roll = "a" if turns.seats[i] == a_seats[i] else "b"
        doubled = "doubled" if turns.doubled[i] else "held"
        names.append(f"{on_roll}-{doubled}-{state}-{'close' if close else 'clear'}")
    a, b = results[0].agents
    facts = {"folder": str(folder), "games": len(results), "a": a, "b": b, "jacoby": jacoby}
    return turns.boards, turns.contexts, np.array(names), facts


def draw(names: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Rows of `n` decisions, each stratum's share proportional to its size (times
    `DENSER` for the strata with a double or a close decision), at least a few of each."""
    rng = np.random.default_rng(seed)
    kinds, counts = np.unique(names, return_counts=True)
    dense = np.array([DENSER if ("doubled" in k or k.endswith("close")) else 1 for k in kinds])
    want = n * counts * dense / (counts * dense).sum()
    rows = []
    for kind, count, w in zip(kinds, counts, want, strict=True):
        take = min(count, max(5, round(w)))
        rows.append(rng.choice(np.flatnonzero(names == kind), take, replace=False))
    return np.sort(np.concatenate(rows))


def build(folder: Path, out: Path, games: int, n: int, seed: int) -> None:
    """Draw `n` decisions of the folder's first `games` and judge them into `out` part by
    part (a rerun with the same arguments resumes), its strata's sizes beside it (.json)."""
    boards, contexts, names, facts = strata(folder, games)
    kinds, counts = np.unique(names, return_counts=True)
    rows = draw(names, n, seed)
    print(f"{facts['games']:,} games: {len(names):,} cube decisions; drawing {len(rows):,}")
    picked = [contexts[i] for i in rows]
    judge = None

    def judged(part: slice) -> CubeSet:
        nonlocal judge
        if judge is None:  # gnubg's set-up only when a part is left to judge
            judge = GnubgCubeJudge()
        return CubeSet.judge(boards[rows][part], picked[part], names[rows][part], judge)

    whole = build_in_parts(out, boards[rows], judged, CubeSet.load, CubeSet.concat, size=PART)
    facts["strata"] = {str(k): int(c) for k, c in zip(kinds, counts, strict=True)}
    write_atomic(out.with_suffix(".json"), json.dumps(facts, indent=1) + "\n")
    print(f"wrote {out}: {len(whole)} decisions, and {out.with_suffix('.json').name}")


def per_game(sources: np.ndarray, facts: dict) -> tuple[np.ndarray, dict[str, tuple]]:
    """Each decision's weight (the decisions of the games it stands for, per game) by its
    stratum (`sources`), and each stratum's rows and size in the games."""
    weight = np.zeros(len(sources))
    strata = {}
    for kind, count in facts["strata"].items():
        mine = np.flatnonzero(sources == kind)
        if len(mine):
            weight[mine] = count / len(mine) / facts["games"]
            strata[kind] = (mine, count)
    return weight, strata


def cost(x: np.ndarray, weight: np.ndarray, strata: dict[str, tuple]) -> tuple[float, float]:
    """The weighted sum of `x` (per game) and its standard error, stratum by stratum (a
    stratum drawn whole adds no error)."""
    total = float((weight * x).sum())
    var = 0.0
    for rows, count in strata.values():
        if len(rows) > 1:
            per = weight[rows[0]] * len(rows)  # the stratum's decisions a game
            var += per**2 * x[rows].var(ddof=1) / len(rows) * (1 - len(rows) / count)
    return total, float(np.sqrt(var))


def role_costs(judged: CubeSet, agent) -> dict[str, np.ndarray]:
    """An agent's errors on every decision, as the side on roll (doubler) and as the side
    doubled (taker), masked to what each seat met in the games: as `a`, its doubler errors
    on a's turns and its taker errors where b doubled; as `b`, the other way round."""
    errors = judged.errors(*judged.answers(agent))
    kinds = judged.sources
    a_turn = np.char.startswith(kinds.astype(str), "a-")
    doubled = np.char.find(kinds.astype(str), "-doubled-") >= 0
    out = {}
    for seat, mine in (("a", a_turn), ("b", ~a_turn)):
        out[f"{seat}-double"] = np.where(mine, errors.double, 0.0)
        out[f"{seat}-take"] = np.where(~mine & doubled, errors.take, 0.0)
        out[f"{seat}-total"] = out[f"{seat}-double"] + out[f"{seat}-take"]
    return out


def _cell(v: dict | None) -> str:
    return f"{1000 * v['mean']:6.2f}±{1000 * v['se']:5.2f}" if v else f"{'-':>13s}"


def report(judged: CubeSet, facts: dict, specs: list[str]) -> list[dict]:
    agents = [load_agent(spec) for spec in specs]  # bad specs fail before any answer
    weight, rows = per_game(judged.sources, facts)
    print(
        f"{len(judged):,} cube decisions of {facts['games']:,} games of {facts['a']} (a) "
        f"against {facts['b']} (b), judged by gnubg 2-ply; millipoints a game lost by each "
        "agent's cube actions in a's seat and in b's (doubles on its turns, takes and "
        "passes where the other doubled)"
    )
    head = ["a: double", "a: take", "a: total", "paired", "b: total", "paired"]
    print(f"{'agent':28s} " + " ".join(f"{h:>13s}" for h in head))
    first: dict[str, np.ndarray] | None = None
    out = []
    for spec, agent in zip(specs, agents, strict=True):
        costs = role_costs(judged, agent)
        row: dict = {"agent": spec}
        for key, x in costs.items():
            m, se = cost(x, weight, rows)
            row[key] = {"mean": m, "se": se}
            if first is not None and key.endswith("total"):
                m, se = cost(x - first[key], weight, rows)
                row[f"{key}-paired"] = {"mean": m, "se": se}
        first = first or costs

        keys = ["a-double", "a-take", "a-total", "a-total-paired", "b-total", "b-total-paired"]
        print(f"{spec:28s} " + " ".join(_cell(row.get(k)) for k in keys))
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agents", nargs="*", help="agent specs; paired differences to the first")
    parser.add_argument("--set", type=Path, required=True, help="the judged set (.npz)")
    parser.add_argument("--build", type=Path, metavar="FOLDER", help="a tournament folder")
    parser.add_argument("--games", type=int, default=4000, help="games read by --build")
    parser.add_argument("--decisions", type=int, default=1200, help="decisions --build judges")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    for key in ("games", "decisions"):
        if getattr(args, key) < 1:
            parser.error(f"--{key} must be at least 1, got {getattr(args, key)}")
    if not args.agents and not args.build:
        parser.error("name agents to judge, or --build the set")
    try:
        if args.build:
            build(args.build, args.set, args.games, args.decisions, args.seed)
        if args.agents:
            judged = CubeSet.load(args.set)
            facts = json.loads(args.set.with_suffix(".json").read_text())
            results = report(judged, facts, args.agents)
            if args.json:
                text = json.dumps({"set": str(args.set), **facts, "results": results}, indent=1)
                write_atomic(args.json, text + "\n")
    except (ValueError, OSError, KeyError, json.JSONDecodeError) as exc:
        print(f"cube_games: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
