"""The distillation generations, judged: each generation's network on the judged set of
checker plays (`bench/judge.py`) and on the cube yardstick (`bench/cube_judge.py`), with
the labels and core-hours spent to make it, drawn as a picture.

    python bench/generations.py            # judges, prints the table, writes docs/generations.*
    python bench/generations.py --only contact4  # judges only these, keeps the others' figures
    python bench/generations.py --draw     # redraws docs/generations.svg from the json

Each generation is a recipe in `configs/distill/` (its labels' config, its fit's config;
teacher, seeds and label counts are in them and in `data/labels/README.md`), and a
network. The core-hours are those measured when the generation was made, on the project's
two-core CPU machine (labels, then fitting; a generation's cost, not the ones before it).
Judged here, on one core: the checker plays at 0 and 1 ply (equity given away per
decision against GNU Backgammon 2-ply, 2,400 decisions) and the cube decisions with
`cube_plies` 0 and 1 (millipoints per decision, 1,200 decisions; 1 ply with every
decision searched, `cube_window=off`, as before the window existed); the 2-ply checker cost
is slow to judge (minutes a network) and is copied from where it was measured
(`TWO_PLY`), null where it never was. Writes `docs/generations.json` (the figures, its
`fields` saying what each is) and `docs/generations.svg` (two panels: the checker cost
per generation at each depth, the cube error at each cube depth; GNU Backgammon 0-ply's
as dashed lines). Judging every generation takes most of an hour on the shared machine (the
1-ply figures); `--only` judges the generations named (a new one) and keeps the others'
rows and the references from docs/generations.json, the paired differences still against
gen0 judged again (0-ply, seconds).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import load_agent  # noqa: E402
from vrhcaby.io.plot import series_svg, stacked_svg  # noqa: E402
from vrhcaby.nn.checkpoint import write_atomic  # noqa: E402
from vrhcaby.play.cube_judge import CubeSet, mean_se  # noqa: E402
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
    # td-contact-gen3 fitted on more of contact3's labels and on the labels at the replies
    # its own one-ply search visits (session 16; the labels 0.505 core-hours, the fit 2.2
    # minutes).
    (
        "contact4",
        "td:td-contact-gen4",
        "configs/distill/visited-labels.toml (96 shards) + gen4-fit.toml",
        0.55,
    ),
    # td-contact-gen4 fitted on its own pruned 2-ply labels with visited replies (contact5,
    # 211 shards, 1.32 core-hours) and every older label of the contact network (session 18;
    # the fit about 8 minutes).
    (
        "contact5",
        "td:td-contact-gen5",
        "configs/distill/contact5-labels.toml (211 shards) + gen5-all-fit.toml",
        1.45,
    ),
    # td-contact-gen5 fitted at the pipeline recipe's rate on every label of the contact
    # network: the hand-run line's, its own pruned 2-ply labels (contact6, 400 shards, 2.3
    # core-hours in session 20, first fitted for the unshipped generation 6) and the
    # expert-iteration pipeline run's four generations (made by that run; session 22, the
    # fit 0.76 core-hours).
    (
        "contact7",
        "td:td-contact-gen7",
        "configs/distill/contact6-labels.toml + runs/pipeline/expert-iteration + gen7-all-fit.toml",
        3.1,
    ),
    # td-contact-gen7 fitted on every label it was fitted on, with contact7 added (400
    # shards, 2.6 core-hours in sessions 22 and 23: td-contact-ei.pt's pruned 2-ply on
    # generation 7's self-play; session 23, the fit 0.65 core-hours).
    (
        "contact8",
        "td:td-contact-gen8",
        "configs/distill/contact7-labels.toml + gen8-all-fit.toml",
        3.2,
    ),
    # td-contact-gen8 fitted on every label it was fitted on, with ei-self added (400
    # shards, 2.0 core-hours in sessions 23 and 24: td-contact-ei.pt's pruned 2-ply on its
    # own self-play with its own visited replies; session 24, the fit 0.8 core-hours).
    (
        "contact9",
        "td:td-contact-gen9",
        "configs/distill/ei-self-labels.toml + gen9-all-fit.toml",
        2.8,
    ),
)
REFERENCES = {"gnubg 0-ply": "gnubg?plies=0", "gen0 1-ply": "td:td-best?plies=1"}
#: The labels each generation was fitted from (None: a TD generation, made by self-play),
#: as docs/distillation.md counts them.
LABELS = {
    "gen0": None,
    "gen1": 1_040_081,
    "gen2": 796_257,
    "contact0": None,
    "contact1": 510_529,
    "contact2": 1_263_939,
    "contact2x": 1_489_527,
    "contact3": 561_722,
    "contact4": 233_078 + 312_662,  # the first 96 shards of visited/ and of contact3/
    "contact5": 1_311_065 + 362_370 + 240_298 + 515_923,  # contact3, visited(-student), contact5
    # contact5's folders, contact6, and the pipeline run's generations 1 to 4
    "contact7": 2_429_656 + 963_547 + 949_734 + 968_278 + 979_495 + 968_983,
    # contact7's folders and contact7
    "contact8": 2_429_656 + 963_547 + 949_734 + 968_278 + 979_495 + 968_983 + 957_558,
    # contact8's folders and ei-self
    "contact9": 2_429_656 + 963_547 + 949_734 + 968_278 + 979_495 + 968_983 + 957_558 + 972_842,
}
#: The 2-ply judged costs measured when the generations were made (mean, standard error,
#: pruned search, where the figure is written); the generations missing were not judged
#: at 2 plies.
TWO_PLY = {
    "gen0": (0.00181, 0.00015, False, "docs/benchmarks.md, the judged benchmark"),
    "contact0": (0.00150, 0.00013, True, "docs/distillation.md, session 11"),
    "contact2": (0.00138, 0.00013, True, "checkpoints/README.md, td-contact-gen2.pt"),
    "contact3": (0.00150, 0.00018, True, "checkpoints/README.md, td-contact-gen3.pt"),
    "contact4": (0.00124, 0.00012, True, "checkpoints/README.md, td-contact-gen4.pt"),
    "contact5": (0.00107, 0.00011, True, "checkpoints/README.md, td-contact-gen5.pt"),
    "contact7": (0.00097, 0.00014, True, "checkpoints/README.md, td-contact-gen7.pt"),
    "contact8": (0.00091, 0.00014, True, "checkpoints/README.md, td-contact-gen8.pt"),
    "contact9": (0.00090, 0.00012, True, "checkpoints/README.md, td-contact-gen9.pt"),
}
#: What each field of a generation in docs/generations.json holds.
FIELDS = {
    "generation": "the generation's name",
    "agent": "its agent spec",
    "recipe": "the configs that made it",
    "labels": "labels it was fitted from, as docs/distillation.md counts them: its shards' "
    "labels of every class (contact2x: the contact and crashed ones of generation 2's 588 "
    "shards; contact4: the first 96 shards of the visited replies' run and of contact3's, "
    "the latter made for generation 3; contact5: all of contact3's, visited's, "
    "visited-student's and contact5's; contact7: those, contact6's and the expert-iteration "
    "pipeline run's four generations'; contact8: contact7's and the contact7 folder's; "
    "contact9: contact8's and ei-self's); "
    "null: a TD generation, self-play without labels",
    "core_hours": "core-hours to make it from the generation before (labels and fitting)",
    "mean": "equity given away per checker decision at 0-ply, judged by gnubg 2-ply",
    "se": "its standard error",
    "paired_diff": "mean minus gen0's, paired on the same decisions",
    "paired_se": "its standard error",
    "mean_1ply": "equity given away per checker decision at 1-ply (td?plies=1)",
    "se_1ply": "its standard error",
    "mean_2ply": "the same at 2-ply (td?plies=2), as measured when made; null: not measured",
    "se_2ply": "its standard error; null: not measured",
    "pruned_2ply": "whether that 2-ply search was pruned (prune=on); null: not measured",
    "source_2ply": "where the 2-ply figure was measured and written; null: not measured",
    "cube_error": "cube error with cube_plies=0 (Janowski on the 0-ply probabilities), "
    "millipoints per decision on the cube yardstick (1,200 decisions, gnubg 2-ply)",
    "cube_se": "its standard error",
    "cube_error_1ply": "cube error with cube_plies=1 (cubeful 1-ply search, every decision "
    "searched: cube_window=off), millipoints",
    "cube_se_1ply": "its standard error",
}
CUBE_SET = ROOT / "data" / "judge" / "gnubg-cube-2ply.npz"


def judge(only: list[str] | None = None, kept: dict | None = None) -> dict:
    """Every generation judged (checker plays at 0 and 1 ply, the cube at 0 and 1 ply),
    printed as it goes: the record docs/generations.json holds. With `only`, just those
    generations are judged; the others' rows and the references are `kept`'s (a record)."""
    judged = Judged.load(ROOT / "data" / "judge" / "gnubg-2ply.npz")
    cubes = CubeSet.load(CUBE_SET)
    old = {r["generation"]: r for r in kept["generations"]} if kept else {}
    first = judged.cost(judged.choose(load_agent(GENERATIONS[0][1])))
    rows = []
    print(
        f"{'generation':10s} {'0-ply':>17s} {'paired to gen0':>19s} {'1-ply':>17s} "
        f"{'2-ply':>8s} {'cube 0':>12s} {'cube 1':>12s} core-hours  labels"
    )
    for name, spec, recipe, hours in GENERATIONS:
        row: dict[str, Any]
        if only is not None and name not in only:
            row = old[name]
        else:
            cost = judged.cost(judged.choose(load_agent(spec)))
            diff = cost - first
            deep = judged.cost(judged.choose(load_agent(f"{spec}?plies=1")))
            cube = {}
            for plies, window in ((0, ""), (1, "&cube_window=off&cube_prune=off")):
                agent = load_agent(f"{spec}?cube_plies={plies}{window}")
                cube[plies] = cubes.summary(cubes.errors(*cubes.answers(agent)))["total"]
            two = TWO_PLY.get(name, (None, None, None, None))
            m1, se1 = mean_se(deep)
            row = {
                "generation": name,
                "agent": spec,
                "recipe": recipe,
                "labels": LABELS[name],
                "core_hours": hours,
                "mean": float(cost.mean()),
                "se": float(cost.std() / np.sqrt(len(cost))),
                "paired_diff": float(diff.mean()),
                "paired_se": float(diff.std() / np.sqrt(len(diff))),
                "mean_1ply": m1,
                "se_1ply": se1,
                **dict(
                    zip(("mean_2ply", "se_2ply", "pruned_2ply", "source_2ply"), two, strict=True)
                ),
                "cube_error": cube[0]["mean"],
                "cube_se": cube[0]["se"],
                "cube_error_1ply": cube[1]["mean"],
                "cube_se_1ply": cube[1]["se"],
            }
        rows.append(row)
        two_ply = "-" if row["mean_2ply"] is None else f"{row['mean_2ply']:.5f}"
        print(
            f"{name:10s} {row['mean']:.5f} ± {row['se']:.5f} {row['paired_diff']:+.5f} ± "
            f"{row['paired_se']:.5f} {row['mean_1ply']:.5f} ± {row['se_1ply']:.5f} "
            f"{two_ply:>8s} {row['cube_error']:5.2f} ± {row['cube_se']:4.2f} "
            f"{row['cube_error_1ply']:5.2f} ± {row['cube_se_1ply']:4.2f} {hours:10.1f}  "
            f"{LABELS[name] or 'TD'}"
        )
    if only is not None and kept is not None:
        references, cube_references = kept["references"], kept["cube_references"]
    else:
        references = {}
        for label, spec in REFERENCES.items():
            cost = judged.cost(judged.choose(load_agent(spec)))
            references[label] = float(cost.mean())
            print(f"{label:10s} {cost.mean():.5f} ± {cost.std() / np.sqrt(len(cost)):.5f}")
        agent = load_agent(REFERENCES["gnubg 0-ply"])
        gnubg = cubes.summary(cubes.errors(*cubes.answers(agent)))["total"]
        cube_references = {"gnubg 0-ply": gnubg["mean"]}
        print(f"cube error of gnubg 0-ply {gnubg['mean']:.2f} ± {gnubg['se']:.2f}")
    return {
        "decisions": len(judged.boards),
        "cube_decisions": len(cubes),
        "fields": FIELDS,
        "generations": rows,
        "references": references,
        "cube_references": cube_references,
    }


def picture(record: dict) -> str:
    """docs/generations.svg: the checker cost per generation at 0, 1 and 2 plies (2-ply
    where it was measured) above the cube error at cube_plies 0 and 1."""
    rows = record["generations"]
    labels = [r["generation"] for r in rows]

    def series(mean: str, se: str) -> tuple[list[float], list[float]]:
        return (
            [np.nan if r[mean] is None else r[mean] for r in rows],
            [0.0 if r[se] is None else r[se] for r in rows],
        )

    checker = series_svg(
        labels,
        {
            "0-ply": series("mean", "se"),
            "1-ply": series("mean_1ply", "se_1ply"),
            "2-ply (where measured)": series("mean_2ply", "se_2ply"),
        },
        {"gnubg 0-ply": record["references"]["gnubg 0-ply"]},
        "Checker plays: equity lost per decision, judged by GNU Backgammon 2-ply",
        "equity per decision",
    )
    cube = series_svg(
        labels,
        {
            "cube_plies=0 (Janowski)": series("cube_error", "cube_se"),
            "cube_plies=1 (cubeful)": series("cube_error_1ply", "cube_se_1ply"),
        },
        record["cube_references"],
        "Cube decisions: error per decision, judged by GNU Backgammon 2-ply",
        "millipoints per decision",
        digits=1,
    )
    return stacked_svg([checker, cube])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--draw", action="store_true", help="only redraw docs/generations.svg from the json"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="judge only these generations, keeping the others' figures from the json",
    )
    args = parser.parse_args(argv)
    docs = ROOT / "docs"
    names = [name for name, *_ in GENERATIONS]
    if args.only and (unknown := sorted(set(args.only) - set(names))):
        parser.error(
            f"--only: no generation {', '.join(unknown)} (generations: {', '.join(names)})"
        )
    if args.draw:
        record = json.loads((docs / "generations.json").read_text())
    elif args.only:
        kept = json.loads((docs / "generations.json").read_text())
        missing = set(names) - set(args.only) - {r["generation"] for r in kept["generations"]}
        if missing:
            parser.error(f"--only: docs/generations.json lacks {', '.join(sorted(missing))}")
        record = judge(args.only, kept)
    else:
        record = judge()
    if not args.draw:
        write_atomic(docs / "generations.json", json.dumps(record, indent=1) + "\n")
    write_atomic(docs / "generations.svg", picture(record))
    print("wrote docs/generations.svg" + ("" if args.draw else ", docs/generations.json"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
