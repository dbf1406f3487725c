"""Every shipped config loads as a training run, and the networks it names are there:
the presets in configs/, the recipes of the shipped networks in configs/recipes/, the
research log's label and fit runs in configs/distill/, and the test fixtures in
tests/configs/."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from agents.td import find_checkpoint
from vrhcaby.base.config import load_config, to_dict
from vrhcaby.learn.labels import LabelConfig
from vrhcaby.learn.onesided import OneSidedConfig
from vrhcaby.nn import checkpoint
from vrhcaby.training.pipeline import PipelineConfig
from vrhcaby.training.run import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "configs" / "recipes"
EVERY = sorted((ROOT / "configs").rglob("*.toml")) + sorted(
    (ROOT / "tests" / "configs").rglob("*.toml")
)
#: Label-generation runs (`vrhcaby.learn.labels.LabelConfig`: they name a teacher).
LABELS = [p for p in EVERY if "teacher" in tomllib.loads(p.read_text())]
#: One-sided race network runs (`vrhcaby.learn.onesided.OneSidedConfig`: rounds of backups).
ONESIDED = [p for p in EVERY if "rounds" in tomllib.loads(p.read_text())]
#: Pipeline recipes (`vrhcaby.training.pipeline.PipelineConfig`: their generations).
PIPELINES = [p for p in EVERY if "generations" in tomllib.loads(p.read_text())]
CONFIGS = [p for p in EVERY if p not in LABELS and p not in ONESIDED and p not in PIPELINES]
SHIPPED = sorted((ROOT / "checkpoints").glob("*.pt"))
NAMED = re.compile(r"checkpoints/([\w.+-]+\.pt)\b")


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", CONFIGS, ids=_id)
def test_a_config_loads_as_a_training_run(path):
    cfg = load_config(TrainConfig, path)
    assert cfg.name and cfg.games >= 1


@pytest.mark.parametrize("path", LABELS, ids=_id)
def test_a_label_config_loads_as_a_label_run(path):
    cfg = load_config(LabelConfig, path)
    assert cfg.name and cfg.shards >= 1


@pytest.mark.parametrize("path", PIPELINES, ids=_id)
def test_a_pipeline_recipe_loads_with_its_stages(path):
    cfg = load_config(PipelineConfig, path)
    assert cfg.generations.count >= 1 and cfg.generations.label.shards >= 1
    assert cfg.init_from or cfg.bootstrap.games >= 1


@pytest.mark.parametrize("path", ONESIDED, ids=_id)
def test_a_one_sided_config_loads_and_names_a_shipped_network(path):
    """Its starts' network is shipped, and so is the network it writes, made by exactly
    this config (the checkpoint records the run's whole config)."""
    cfg = load_config(OneSidedConfig, path)
    assert find_checkpoint(cfg.starts.network).resolve().parent == ROOT / "checkpoints"
    _, meta = checkpoint.load(ROOT / cfg.out, "backgammon")
    recorded = {k: v for k, v in meta["config"].items() if k not in ("history", "start_rows")}
    assert recorded == to_dict(cfg)


@pytest.mark.parametrize("path", CONFIGS, ids=_id)
def test_the_networks_a_config_names_are_shipped(path):
    """Its warm start is a shipped network or one of a pipeline run committed whole
    (runs/pipeline/NAME/checkpoints), its td opponents are shipped networks; a checkpoint
    its comments name is shipped too, its warm start, or one this run writes itself
    (NAME-g<games>.pt, NAME-best.pt)."""
    cfg = load_config(TrainConfig, path)
    if cfg.init_from:
        start = ROOT / cfg.init_from
        assert start.is_file(), f"init_from {cfg.init_from} is not shipped"
        assert start.parent == ROOT / "checkpoints" or (
            start.parent.name == "checkpoints"
            and start.parent.parent.parent == ROOT / "runs" / "pipeline"
        ), cfg.init_from
    for spec in cfg.eval.opponents:
        kind, _, rest = spec.partition("?")[0].partition(":")
        if kind == "td" and rest:
            assert find_checkpoint(rest).resolve().parent == ROOT / "checkpoints", spec
    own = re.compile(rf"{re.escape(cfg.name)}-(g\d+|best)\.pt")
    start_name = Path(cfg.init_from).name if cfg.init_from else None
    for name in NAMED.findall(path.read_text()):
        assert (
            (ROOT / "checkpoints" / name).is_file() or own.fullmatch(name) or name == start_name
        ), name


@pytest.mark.parametrize("network", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_network_has_its_recipe(network):
    """The run a shipped network records (its config's name) is a recipe's: a TD run's in
    configs/recipes/, a distillation fit's in configs/distill/, a pipeline recipe's
    generation (NAME-genK); a set put together by `vrhcaby netset`, the runs of the
    networks it took."""
    _, meta = checkpoint.load(network, sets=True)
    fits = [p for p in CONFIGS if "distill" in p.parts]
    recipes = [p for p in RECIPES.glob("*.toml") if p not in ONESIDED and p not in PIPELINES]
    names = {load_config(TrainConfig, p).name for p in [*recipes, *fits]}
    names |= {load_config(OneSidedConfig, p).name for p in ONESIDED}
    pipelines = [load_config(PipelineConfig, p) for p in PIPELINES]
    names |= {f"{c.name}-gen{k}" for c in pipelines for k in range(1, c.generations.count + 1)}
    runs = meta["config"].get("assembled_runs", {})
    assert set(runs.values()) <= names
    assert runs or meta["config"]["name"] in names
