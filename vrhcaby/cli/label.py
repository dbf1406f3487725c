"""`vrhcaby label --config TOML`: make a run's distillation labels, shard by shard.

    vrhcaby label --config configs/distill/pilot-labels.toml [--set key=value ...]
    vrhcaby label --config configs/distill/pilot-labels.toml --jobs 16 --shards 48
    vrhcaby label --config ... --backend ray --address auto --workers 64

The run (`vrhcaby.learn.labels.LabelConfig`: the file, then `--set`, then `--shards`)
names its teacher and student networks (a shipped network's name such as td-best, or a
path) and its folder, OUT_DIR/NAME/shard-00000.npz, ... Shard k depends only on the
config and k (`make_shard`), so the shards are the same whatever `--jobs` or the backend,
and the command resumes: a shard already in the folder, sound and made by this config, is
kept; a corrupt one is made again; one made by another config (any setting but `shards`
and `out_dir`) is an error, so that one folder never mixes two runs' labels. Ctrl-C or
SIGTERM stops after the shards finished (each is written atomically); run the command
again to continue.

This module is the command line: the options, the config read (the file, `--set`,
`--shards`) and checked with them. The run itself (the networks, the folder's survey, the
shards made here, in processes or on Ray, the summary) lives in
`vrhcaby.training.labelrun`; its `ShardJob`, the job that makes shards, is re-exported
for the tests that import it from here.
"""

from __future__ import annotations

import argparse

from vrhcaby.base.config import load_config
from vrhcaby.cli.common import add_jobs_argument, add_ray_arguments, check_parallel
from vrhcaby.learn.labels import LabelConfig
from vrhcaby.training.labelrun import Parallel, ShardJob, run_labels

__all__ = ["ShardJob", "configure", "register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "label",
        help="make distillation labels (the teacher's search on the student's self-play)",
        description="Make a run's distillation labels, shard by shard (resumable).",
    )
    parser.add_argument("--config", metavar="TOML", help="the run, e.g. configs/distill/*.toml")
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override one config value, e.g. --set games_per_shard=50 (repeatable)",
    )
    parser.add_argument(
        "--shards", type=int, metavar="N", help="shards of the run (overrides the config's)"
    )
    add_jobs_argument(parser)
    add_ray_arguments(
        parser,
        "local: --jobs processes here (default); ray: a Ray cluster (vrhcaby[ray])",
        "Ray tasks at a time (default 0: all the cluster's CPUs)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the summary as JSON here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def configure(args: argparse.Namespace) -> LabelConfig:
    """The run's config (the file, then --set, then --shards), the options checked."""
    overrides = list(args.set or [])
    if args.shards is not None:
        overrides.append(f"shards={args.shards}")
    config = load_config(LabelConfig, args.config, overrides)
    check_parallel(args)
    return config


def run(args: argparse.Namespace) -> int:
    """Make the run's missing shards (`vrhcaby.training.labelrun.run_labels`); after
    SIGINT or SIGTERM the shards finished are kept and the exit status is 130 or 143."""
    config = configure(args)
    parallel = Parallel(args.jobs, args.backend, args.address, args.workers)
    return run_labels(
        config,
        parallel,
        summary_file=args.json,
        progress=not args.no_progress,
        job_type=ShardJob,  # looked up here when called: a test may put its own job here
    )
