"""The distillation generations, judged: each generation's network on the judged set
(`bench/judge.py`), with the core-hours spent to make it, drawn as a picture.

    python bench/generations.py            # prints the table, writes docs/generations.*

Each generation is a recipe in `configs/distill/` (its labels' config, its fit's config;
teacher, seeds and label counts are in them and in `data/labels/README.md`), and a
network. The core-hours are those measured when the generation was made, on the project's
two-core CPU machine (labels, then fitting; a generation's cost, not the ones before it).
Writes `docs/generations.json` (the figures) and `docs/generations.svg` (the judged cost
per generation, GNU Backgammon 0-ply's as a line).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import load_agent  # noqa: E402
from vrhcaby.io.plot import points_svg  # noqa: E402
from vrhcaby.play.judge import Judged  # noqa: E402

#: (name, agent spec, recipe, core-hours to make it from the generation before).
GENERATIONS = (
    ("gen0", "td:td-best", "configs/recipes/full-rich.toml + full-rich-extend.toml (TD)", 2.3),
    (
        "gen1",
        "td:td-gen1",
        "configs/distill/pilot1-labels.toml + gen1-labels.toml + gen1-fit.toml",
        0.75,
    ),
    ("gen2", "td:td-gen2", "configs/distill/gen2-labels.toml + gen2-fit.toml", 0.8),
    # The bigger network's line: td-contact.pt (TD: td-wide's runs, then full-contact.toml
    # on two workers), then taught by its own 1-ply, with the set's race network.
    ("contact0", "td:td-contact", "configs/recipes/full-expert.toml + full-contact.toml (TD)", 5.4),
    (
        "contact1",
        "td:td-contact-gen1",
        "configs/distill/contact1-labels.toml + contact1-fit.toml; race.toml + race-extend.toml",
        3.4,
    ),
    # Taught by the best searcher's 2-ply (teacher-contact2.pt), with the one-sided race.
    (
        "contact2",
        "td:td-contact-gen2",
        "configs/distill/contact2-labels.toml + contact2-fit.toml; onesided-race.toml",
        2.5,
    ),
    # Grown to 1,024 units by splitting, fitted on all 588 contact2 shards (the 188 made
    # after contact2's fit counted here), then on td-contact-gen2's own 2-ply labels.
    ("contact2x", "td:td-contact-gen2x", "configs/distill/contact2x-fit.toml", 1.6),
    (
        "contact3",
        "td:td-contact-gen3",
        "configs/distill/contact3-labels.toml (172 shards) + contact3-fit.toml",
        1.0,
    ),
)
REFERENCES = {"gnubg 0-ply": "gnubg?plies=0", "gen0 1-ply": "td:td-best?plies=1"}


def main() -> int:
    judged = Judged.load(ROOT / "data" / "judge" / "gnubg-2ply.npz")
    first = None
    rows = []
    print(f"{'generation':10s} {'cost/decision':>17s} {'paired to gen0':>19s} core-hours  recipe")
    for name, spec, recipe, hours in GENERATIONS:
        cost = judged.cost(judged.choose(load_agent(spec)))
        first = cost if first is None else first
        diff = cost - first
        row = {
            "generation": name,
            "agent": spec,
            "recipe": recipe,
            "core_hours": hours,
            "mean": float(cost.mean()),
            "se": float(cost.std() / np.sqrt(len(cost))),
            "paired_diff": float(diff.mean()),
            "paired_se": float(diff.std() / np.sqrt(len(diff))),
        }
        rows.append(row)
        print(
            f"{name:10s} {row['mean']:.5f} ± {row['se']:.5f} {row['paired_diff']:+.5f} ± "
            f"{row['paired_se']:.5f} {hours:10.1f}  {recipe}"
        )
    references = {}
    for label, spec in REFERENCES.items():
        cost = judged.cost(judged.choose(load_agent(spec)))
        references[label] = float(cost.mean())
        print(f"{label:10s} {cost.mean():.5f} ± {cost.std() / np.sqrt(len(cost)):.5f}")
    docs = ROOT / "docs"
    record = {"decisions": len(judged.boards), "generations": rows, "references": references}
    (docs / "generations.json").write_text(json.dumps(record, indent=1) + "\n")
    svg = points_svg(
        [r["generation"] for r in rows],
        [r["mean"] for r in rows],
        [r["se"] for r in rows],
        references,
        "Equity lost per decision, judged by GNU Backgammon 2-ply (0-ply networks)",
        "equity per decision",
    )
    (docs / "generations.svg").write_text(svg)
    print("wrote docs/generations.json, docs/generations.svg")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
