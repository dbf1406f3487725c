"""An ensemble of networks (`vrhcaby.nn.ensemble`): how its search does on the judged set,
and its values as a fit's labels.

    python bench/ensemble.py gap td-contact-gen9 td-contact-ei
    python bench/ensemble.py relabel runs/ens-labels td-contact-gen9 td-contact-ei \\
        --config configs/distill/gen9-all-fit.toml

`gap`: `bench/ply_gap.py`'s figures (the judged cost of the 0-ply and the 1-ply choices,
the 1-ply minus 0-ply spread) for the first network alone and for the ensemble of all,
paired. `relabel`: every shard of the label folders of a fit `--config` ([distill]
labels) written again under OUT with the ensemble's 0-ply probabilities as the target:
OUT/pure/FOLDER/ the ensemble's values alone, OUT/mix/FOLDER/ the mean of those and the
shard's own teacher values (the same afterstates, decisions and shard numbers, so that the
same shards are held out; configs/distill/ens-pure-fit.toml fits the first). A shard
already written is kept (the command resumes). The ensemble's networks are the project's
own: GNU Backgammon teaches nothing here.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
import time
import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import load_agent  # noqa: E402
from agents.td import find_checkpoint  # noqa: E402
from vrhcaby.learn.distill import shard_files  # noqa: E402
from vrhcaby.learn.labels import Shard  # noqa: E402
from vrhcaby.nn.ensemble import ensemble_set  # noqa: E402
from vrhcaby.nn.netset import NetworkSet  # noqa: E402
from vrhcaby.play.judge import Judged  # noqa: E402

#: Afterstates valued per call of the ensemble.
CHUNK = 20_000


def relabelled(shard: Shard, evaluator: NetworkSet) -> dict[str, Shard]:
    """`shard` with its targets the ensemble's 0-ply probabilities ("pure") and the mean of
    those and its own ("mix")."""
    p = np.empty((len(shard.after), 5), np.float32)
    for lo in range(0, len(shard.after), CHUNK):
        p[lo : lo + CHUNK] = evaluator.probabilities(shard.after[lo : lo + CHUNK])
    return {
        kind: dataclasses.replace(shard, probabilities=target)
        for kind, target in (("pure", p), ("mix", (p + shard.probabilities) / 2))
    }


def relabel(out: Path, networks: list[str], config: Path) -> None:
    folders = tomllib.loads(config.read_text())["distill"]["labels"]
    names = [Path(f).name for f in folders]
    if len(set(names)) != len(names):
        raise ValueError(f"the label folders of {config} share names: {names}")
    evaluator = ensemble_set([find_checkpoint(n) for n in networks])
    start, count = time.perf_counter(), 0
    for folder in folders:
        files = shard_files([ROOT / folder])
        for file in files:
            targets = {kind: out / kind / Path(folder).name / file.name for kind in ("pure", "mix")}
            if all(t.exists() for t in targets.values()):
                continue
            shard = Shard.load(file)
            meta = {**Shard.meta(file), "relabelled": {"ensemble": networks, "from": str(folder)}}
            for kind, each in relabelled(shard, evaluator).items():
                targets[kind].parent.mkdir(parents=True, exist_ok=True)
                each.save(targets[kind], {**meta, "target": kind})
            count += len(shard.after)
        print(
            f"{folder}: {len(files)} shards ({count:,} labels, {time.perf_counter() - start:.0f} s)"
        )


def gap(networks: list[str], judged_set: Path) -> None:
    spec = importlib.util.spec_from_file_location("ply_gap", ROOT / "bench" / "ply_gap.py")
    assert spec is not None and spec.loader is not None
    ply_gap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ply_gap)
    judged = Judged.load(judged_set)
    alone = load_agent(f"td:{networks[0]}")
    together = load_agent(f"td:{networks[0]}")
    together.evaluator = ensemble_set([find_checkpoint(n) for n in networks])  # type: ignore[attr-defined]
    results = {}
    for name, agent in ((networks[0], alone), ("ensemble of " + " + ".join(networks), together)):
        r = results[name] = ply_gap.searched(agent, judged)
        print(
            f"{name}: 0-ply {ply_gap.mean_se(r['zero'])}, 1-ply {ply_gap.mean_se(r['one'])}, "
            f"1-ply - 0-ply mean {r['gap'].mean():+.4f}, sd {r['gap'].std():.4f}",
            flush=True,
        )
    first, second = results.values()
    print(
        f"ensemble - {networks[0]}: 0-ply {ply_gap.mean_se(second['zero'] - first['zero'])}, "
        f"1-ply {ply_gap.mean_se(second['one'] - first['one'])}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="part", required=True)
    g = sub.add_parser("gap", help="the judged 0- and 1-ply of the first network and of all")
    g.add_argument("networks", nargs="+", help="network sets (shipped names or paths)")
    g.add_argument("--set", type=Path, default=ROOT / "data" / "judge" / "gnubg-2ply.npz")
    r = sub.add_parser("relabel", help="a fit's label folders with the ensemble's targets")
    r.add_argument("out", type=Path, help="the folder of the relabelled shards")
    r.add_argument("networks", nargs="+", help="network sets (shipped names or paths)")
    r.add_argument("--config", type=Path, required=True, help="the fit whose labels to relabel")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    try:
        if args.part == "gap":
            gap(args.networks, args.set)
        else:
            relabel(args.out, args.networks, args.config)
    except (ValueError, OSError, KeyError, tomllib.TOMLDecodeError) as e:
        print(f"ensemble: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
