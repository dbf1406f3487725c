"""The pruning network: a small network fitted to a full network's own 0-ply outputs, the
cheap ranker of `agents.search.Pruner` (`vrhcaby.nn.prune.PruningNet`).

    python -m vrhcaby.learn.prune --teacher td-best --out checkpoints/prune/td-best.pt

makes the shipped one (the defaults; about 7 minutes on one core). The data is the
teacher's world: the pre-roll boards of `games` cubeless games of the teacher against
itself at 0-ply (`vrhcaby.play.judge.recorded_positions`), and for whole rolls of them
drawn at random (about `samples` afterstates) every legal afterstate, good and bad plays
alike, since the search asks the ranker about all of them; the targets are the teacher's
five probabilities of each (`agents.search.afterstate_probabilities`). The student (198
Tesauro inputs, no hand-made features, `hidden` sigmoid units) is fitted by Adam to what
ranking needs: the squared equity error less the mean error of its roll (a roll's plays
are ranked against each other, so an error they share costs nothing), plus a tenth of the
plain squared errors so that the level is learned too. The result is an ordinary
backgammon checkpoint (`vrhcaby.nn.net.load_evaluator` reads it); its meta entry `pruner`
says how it was made. GNU Backgammon is no part of it: the teacher is the project's own.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

import engine
from agents import load_agent, search
from agents.td import find_checkpoint
from engine.dice import ROLLS
from vrhcaby.learn.trainer import model_arrays
from vrhcaby.nn import checkpoint
from vrhcaby.nn.net import NetConfig, build_model, joint
from vrhcaby.play.judge import recorded_positions

#: Cubeless money equity of the five outputs, as a column of weights.
_EQUITY = torch.tensor([2.0, 1.0, 1.0, -1.0, -1.0])


def pruning_data(
    teacher_spec: str, games: int, samples: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Afterstates int8 (S, 2, 25) of the teacher's self-play boards, whole rolls (all the
    plays of one board's roll) drawn at random until about `samples`; the teacher's
    probabilities float32 (S, 5) of each; and each one's roll, int64 (S,) ascending."""
    teacher = load_agent(teacher_spec)
    boards, _, _ = recorded_positions(teacher, teacher, games, seed)
    reps = np.repeat(boards, len(ROLLS), axis=0)
    after, parent = engine.batch_afterstates(reps, np.tile(ROLLS, (len(boards), 1)))
    sizes = np.bincount(parent, minlength=len(reps))
    order = np.random.default_rng(seed).permutation(len(reps))
    chosen = np.zeros(len(reps), bool)
    chosen[order[: np.searchsorted(np.cumsum(sizes[order]), samples) + 1]] = True
    rows = np.flatnonzero(chosen[parent])
    evaluator = teacher.evaluator  # type: ignore[attr-defined]
    p = search.afterstate_probabilities(evaluator, reps, after[rows], parent[rows])
    return after[rows], np.asarray(p, np.float32), parent[rows]


def fit(
    after: np.ndarray,
    targets: np.ndarray,
    rolls: np.ndarray,
    hidden: int,
    epochs: int,
    seed: int,
    batch: int = 2048,
    lr: float = 1e-2,
) -> tuple[torch.nn.Sequential, float]:
    """The student fitted to `targets`, and the root-mean-square of its equity error less
    the mean error of its roll (what ranking a roll's plays suffers from) on a tenth of
    the rolls, held out. The loss: that centred squared equity error, plus a tenth of the
    plain one and of the five outputs' squared errors (so the level is learned too)."""
    torch.manual_seed(seed)
    net = NetConfig("tesauro", (hidden,), "sigmoid")
    model = build_model(net)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    starts = np.flatnonzero(np.r_[True, rolls[1:] != rolls[:-1]])
    ends = np.r_[starts[1:], len(rolls)]
    rng = np.random.default_rng(seed)
    groups = rng.permutation(len(starts))
    test, train = groups[: len(groups) // 10], groups[len(groups) // 10 :]
    per_batch = max(1, batch * len(starts) // len(rolls))
    steps = epochs * (len(train) // per_batch)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, max(steps, 1))

    def rows_of(g: np.ndarray) -> tuple[np.ndarray, torch.Tensor]:
        rows = np.concatenate([np.arange(starts[k], ends[k]) for k in g])
        return rows, torch.from_numpy(np.repeat(np.arange(len(g)), ends[g] - starts[g]))

    def loss_of(g: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        rows, group = rows_of(g)
        p = joint(model(torch.from_numpy(net.encode(after[rows]))))
        t = torch.from_numpy(targets[rows])
        d = (p - t) @ _EQUITY
        mean = torch.zeros(len(g)).index_add_(0, group, d) / torch.bincount(group)
        centred = (d - mean[group]).pow(2).mean()
        return centred + 0.1 * (d.pow(2).mean() + (p - t).pow(2).sum(1).mean()), centred

    for _ in range(epochs):
        order = rng.permutation(train)
        for i in range(0, len(order) - per_batch + 1, per_batch):
            loss, _ = loss_of(order[i : i + per_batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
    with torch.no_grad():
        _, centred = loss_of(test)
    return model, float(centred.sqrt())


def save(path: Path, model: torch.nn.Sequential, hidden: int, made: dict) -> Path:
    """The student as a backgammon checkpoint at `path`, `made` its meta entry `pruner`."""
    net = NetConfig("tesauro", (hidden,), "sigmoid")
    arrays, meta = checkpoint.contents(
        net=(net.to_dict(), model_arrays(model)),
        config={"name": f"prune-{made['teacher']}", "variant": "standard"},
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    return checkpoint.save(path, arrays, {**meta, "pruner": made})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teacher", default="td-best", help="the full network (td:NAME)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--games", type=int, default=300, help="teacher self-play games")
    parser.add_argument("--samples", type=int, default=3_000_000, help="afterstates kept")
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    after, targets, rolls = pruning_data(f"td:{args.teacher}", args.games, args.samples, args.seed)
    print(f"{len(after)} afterstates labelled in {time.perf_counter() - start:.0f} s")
    model, error = fit(after, targets, rolls, args.hidden, args.epochs, args.seed)
    made = {
        "teacher": find_checkpoint(args.teacher).stem,
        "games": args.games,
        "samples": len(after),
        "hidden": args.hidden,
        "epochs": args.epochs,
        "seed": args.seed,
        "ranking_rmse": round(error, 5),
    }
    save(args.out, model, args.hidden, made)
    print(
        f"wrote {args.out}: equity error within a roll {error:.4f} (RMS, held-out rolls), "
        f"{time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
