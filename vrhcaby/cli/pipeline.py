"""`vrhcaby pipeline --config RECIPE`: expert iteration as one resumable command.

    vrhcaby pipeline --config configs/recipes/expert-iteration.toml [--jobs 16]
    vrhcaby pipeline --config ... --backend ray --address auto     # labels on a cluster
    vrhcaby pipeline --config ... --device cuda                    # bootstrap and fits on a GPU
    vrhcaby pipeline --config ... --status                         # what was done, what is next

The recipe (`vrhcaby.training.pipeline.PipelineConfig`: the file, then `--set`) names a
TD bootstrap (or a network to start from) and generations of label, fit, judge and
promote; the run lives in its `run_dir` (pipeline.json, STATUS.md, generations.svg).
Run the same command again after Ctrl-C, SIGTERM or SIGKILL to continue: the stages done
are skipped. A run folder started with another recipe is refused, naming the first key
that changed, unless `--force`.
"""

from __future__ import annotations

import argparse

from vrhcaby.base.config import load_config
from vrhcaby.base.files import check_output_dir
from vrhcaby.cli.common import UsageError, add_jobs_argument, add_ray_arguments, check_parallel
from vrhcaby.training.pipeline import PipelineConfig, Resources, run_pipeline, status


def run(args: argparse.Namespace) -> int:
    cfg = load_config(PipelineConfig, args.config, list(args.set or []))
    if args.status:
        print(status(cfg), end="")
        return 0
    check_parallel(args)
    if args.workers:
        raise UsageError("--workers: the pipeline's label stages use all the cluster's CPUs")
    if args.device:  # checked before any work: an absent GPU is one line, exit 2
        from vrhcaby.training.run import resolve_device

        try:
            resolve_device(args.device)
        except ValueError as exc:
            raise UsageError(f"--device: {exc}") from None
    check_output_dir(cfg.run_dir, "run_dir")
    res = Resources(args.jobs, args.backend, args.address, args.device or "")
    return run_pipeline(cfg, res, force=args.force)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "pipeline",
        help="expert iteration as one resumable command: bootstrap, then label, fit, judge",
        description="Run a recipe's stages (a TD bootstrap, then generations of label, "
        "fit, judge and promote), resuming from what its run folder holds.",
    )
    parser.add_argument(
        "--config",
        metavar="TOML",
        required=True,
        help="the recipe, e.g. configs/recipes/expert-iteration.toml",
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override one recipe value, e.g. --set generations.count=2 (repeatable)",
    )
    add_jobs_argument(parser)
    add_ray_arguments(
        parser,
        "local: label with --jobs processes here (default); ray: label on a Ray cluster",
        "unused (the label stages take the cluster's CPUs)",
    )
    parser.add_argument(
        "--device", help="torch device of the TD bootstrap and the fits: cpu, cuda, cuda:N"
    )
    parser.add_argument("--status", action="store_true", help="print the run's STATUS.md and stop")
    parser.add_argument(
        "--force", action="store_true", help="go on with a recipe that changed since the run began"
    )
    parser.set_defaults(func=run)
