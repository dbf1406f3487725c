"""`vrhcaby pipeline`: the tiny recipe end to end, killed with SIGKILL in the middle of a
stage and resumed to the same result without redoing finished work; the promotion rule
checked against the numbers the run wrote; a changed recipe and bad keys refused. The
tiny acey-deucey recipe the same way, judged by duels against the teacher: the duel's
points per game recomputed from its counts, promotion by the duel's rule, its fits on
`--device cpu` equal to the default's bit for bit; an absent GPU one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import load_agent
from vrhcaby.base.config import load_config
from vrhcaby.cli.main import main
from vrhcaby.learn.labels import Shard
from vrhcaby.nn import checkpoint
from vrhcaby.nn.net import NetConfig
from vrhcaby.play.cube_judge import CubeSet
from vrhcaby.play.judge import Judged
from vrhcaby.training.pipeline import (
    Duel,
    GenerationsConfig,
    PipelineConfig,
    Resources,
    State,
    bootstrap,
    judge,
    write_toml,
)
from vrhcaby.training.run import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "recipes" / "tiny.toml"
ACEY = ROOT / "configs" / "recipes" / "acey-deucey-tiny.toml"


def command(run_dir: Path, *extra: str, recipe: Path = TINY) -> list[str]:
    return [
        sys.executable,
        "-m",
        "vrhcaby.cli",
        "pipeline",
        "--config",
        str(recipe),
        "--set",
        f"run_dir={run_dir}",
        "--jobs",
        "1",
        *extra,
    ]


def state(run_dir: Path) -> dict:
    return json.loads((run_dir / "pipeline.json").read_text())


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("whole") / "run"
    done = subprocess.run(command(run_dir), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return run_dir


@pytest.mark.slow
def test_the_tiny_recipe_runs_every_stage_and_reports_them(uninterrupted: Path) -> None:
    doc = state(uninterrupted)
    assert doc["next"] == "" and doc["stopped"]
    gens = doc["generations"]
    assert [g["generation"] for g in gens][:2] == [0, 1]
    for g in gens[1:]:
        stages = [f"gen{g['generation']}/{s}" for s in ("label", "fit", "judge")]
        assert all(doc["stages"][s]["status"] == "done" for s in stages)
        assert g["labels"] > 0 and g["epochs"] == 2 and g["core_hours"] > 0
        assert 0 < g["judged"]["0"] < 1 and g["cube_error"] == g["cube_errors"]["0"]
    # the cube error at each depth is the cube set's judgement of the agent at that depth
    cubes = CubeSet.load(ROOT / "data" / "judge" / "gnubg-cube-2ply.npz").first(20)
    last = gens[-1]
    assert set(last["cube_errors"]) == {"0", "1"}
    for plies, error in last["cube_errors"].items():
        full = "cube_window=off&cube_prune=off"  # every decision searched, every reply valued
        agent = load_agent(f"td:{last['network']}?cube_plies={plies}&{full}")
        assert error == pytest.approx(1000 * cubes.errors(*cubes.answers(agent)).total.mean())
    # every stage's cost is summed into the run's, and the report has them all
    total = sum(s.get("core_hours", 0.0) for s in doc["stages"].values())
    assert doc["core_hours"] == pytest.approx(total)
    svg = (uninterrupted / "generations.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<circle") == len(gens)
    assert "| gen1/fit | done |" in (uninterrupted / "STATUS.md").read_text()
    assert list((uninterrupted / "tb" / "pipeline").iterdir())


@pytest.mark.slow
def test_promotion_follows_the_rule_on_the_judged_numbers(uninterrupted: Path) -> None:
    """Promoted if and only if the judged cost is below the teacher's by the margin; the
    teacher of a generation is the last promoted one before it (a plain replay)."""
    doc = state(uninterrupted)
    margin = doc["recipe"]["generations"]["margin"]
    patience = doc["recipe"]["generations"]["patience"]
    champion = doc["generations"][0]
    stale = 0
    for g in doc["generations"][1:]:
        assert g["teacher"] == champion["network"]
        want = g["judged"]["0"] < champion["judged"]["0"] - margin
        assert g["promoted"] is want
        champion, stale = (g, 0) if want else (champion, stale + 1)
    assert doc["champion"] == champion["network"]
    count = doc["recipe"]["generations"]["count"]
    assert len(doc["generations"]) - 1 == count or stale >= patience


@pytest.mark.slow
def test_carried_labels_fit_every_earlier_generations_folder(uninterrupted: Path) -> None:
    """With `generations.carry_labels` (the tiny recipe's) each fit reads every label
    folder labelled so far, whoever taught it, through `distill.mix_teachers`."""
    doc = state(uninterrupted)
    assert doc["recipe"]["generations"]["carry_labels"] is True
    labelled: list[str] = []
    for g in doc["generations"][1:]:
        k = g["generation"]
        labelled.append(doc["stages"][f"gen{k}/label"]["folder"])
        assert doc["stages"][f"gen{k}/fit"]["label_folders"] == labelled
        fit = load_config(TrainConfig, uninterrupted / "stages" / f"gen{k}-fit.toml")
        assert list(fit.distill.labels) == labelled and fit.distill.mix_teachers
    assert len(labelled) >= 2


@pytest.fixture(scope="module")
def acey(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny acey-deucey recipe run whole, its bootstrap and fits on `--device cpu`."""
    run_dir = tmp_path_factory.mktemp("acey") / "run"
    done = subprocess.run(
        command(run_dir, "--device", "cpu", recipe=ACEY),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return run_dir


@pytest.mark.slow
def test_a_sigkill_in_a_stage_resumes_to_the_same_run(uninterrupted: Path, tmp_path: Path) -> None:
    killed_in_the_first_fit_and_resumed(tmp_path / "run", uninterrupted, TINY, "bootstrap")


@pytest.mark.slow
def test_an_acey_deucey_run_killed_in_a_stage_resumes_to_the_same_duels(
    acey: Path, tmp_path: Path
) -> None:
    """Resumed without --device, its duels are those of the whole run on --device cpu:
    the same fitted networks, game for game."""
    run_dir = tmp_path / "run"
    killed_in_the_first_fit_and_resumed(run_dir, acey, ACEY, "gen0/judge")
    for ours, theirs in zip(state(run_dir)["generations"], state(acey)["generations"], strict=True):
        assert ours["duel"] == theirs["duel"]


@pytest.mark.slow
@pytest.mark.parametrize("lost", ["folder", "one shard"])
def test_a_run_folder_without_a_stages_output_makes_it_and_what_follows_again(
    uninterrupted: Path, tmp_path: Path, lost: str
) -> None:
    """A run folder moved without generation 1's labels, or with only some of them,
    resumes: the label stage and every stage after it run again, the bootstrap and
    generation 0's judgement do not, and the generations come out as those of the run
    that was never moved (no fit on part of the labels)."""
    run_dir = tmp_path / "run"
    first = subprocess.run(command(run_dir), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    before = state(run_dir)
    bootstrap = Path(before["stages"]["bootstrap"]["network"])
    mtime = bootstrap.stat().st_mtime_ns
    folder = Path(before["stages"]["gen1/label"]["folder"])
    if lost == "folder":
        shutil.rmtree(folder)
    else:
        sorted(folder.glob("shard-*.npz"))[-1].unlink()

    again = subprocess.run(command(run_dir), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "gen1/label is not on disk" in again.stderr
    after = state(run_dir)
    assert after["stages"].keys() == before["stages"].keys()
    assert after["stages"]["bootstrap"] == before["stages"]["bootstrap"]
    assert after["stages"]["gen0/judge"] == before["stages"]["gen0/judge"]
    assert bootstrap.stat().st_mtime_ns == mtime
    assert Path(after["stages"]["gen1/label"]["folder"]).is_dir()
    for ours, theirs in zip(after["generations"], state(uninterrupted)["generations"], strict=True):
        assert ours["judged"] == theirs["judged"] and ours["promoted"] == theirs["promoted"]
        assert ours["labels"] == theirs["labels"]


def killed_in_the_first_fit_and_resumed(
    run_dir: Path, whole_dir: Path, recipe: Path, first: str
) -> None:
    """Run `recipe` into `run_dir`, SIGKILL it in its first fit, run it again: the stages
    finished are not redone, and the generations are those of the run `whole_dir`."""
    process = subprocess.Popen(
        command(run_dir, recipe=recipe),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            path = run_dir / "pipeline.json"
            fit = state(run_dir)["stages"].get("gen1/fit", {}) if path.exists() else {}
            if fit.get("status") == "running":
                break
            assert process.poll() is None, "the run ended before its first fit"
            time.sleep(0.05)  # the fit's process takes seconds to start: killed in it
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    before = state(run_dir)
    assert before["stages"]["gen1/fit"]["status"] == "running"
    done_before = {k for k, s in before["stages"].items() if s["status"] == "done"}
    assert {first, "gen0/judge", "gen1/label"} <= done_before
    shards = sorted((run_dir / "labels" / "gen1").glob("shard-*.npz"))
    mtimes = {p: p.stat().st_mtime_ns for p in shards}
    if "bootstrap" in before["stages"]:
        bootstrap = Path(before["stages"]["bootstrap"]["network"])
        mtimes[bootstrap] = bootstrap.stat().st_mtime_ns

    done = subprocess.run(
        command(run_dir, recipe=recipe), cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    after, whole = state(run_dir), state(whole_dir)
    assert after["stages"].keys() == whole["stages"].keys()
    for name in done_before:  # finished work is not redone
        assert after["stages"][name].get("attempts", 1) == 1, name
    assert after["stages"]["gen1/fit"]["attempts"] == 2
    assert {p: p.stat().st_mtime_ns for p in mtimes} == mtimes
    for ours, theirs in zip(after["generations"], whole["generations"], strict=True):
        assert ours["judged"] == theirs["judged"] and ours["promoted"] == theirs["promoted"]
        assert ours["labels"] == theirs["labels"] and ours["cube_error"] == theirs["cube_error"]


@pytest.mark.slow
def test_sigint_to_the_pipeline_alone_stops_its_stage_and_resumes(
    uninterrupted: Path, tmp_path: Path
) -> None:
    """`kill -INT` of the pipeline's process (not its process group: the stage runs in a
    session of its own) reaches the running stage, which stops; the pipeline exits 130
    with the stage unfinished, and the same command finishes the run as the
    uninterrupted one."""
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        command(run_dir),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            path = run_dir / "pipeline.json"
            label = state(run_dir)["stages"].get("gen1/label", {}) if path.exists() else {}
            if label.get("status") == "running":
                break
            assert process.poll() is None, "the run ended before its first label stage"
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGINT)  # the tiny stage lasts a second or two
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err[-2000:]
    assert state(run_dir)["stages"]["gen1/label"]["status"] != "done"
    last = err.decode().strip().splitlines()[-1]
    assert "gen1/label" in last and "status 0 " not in last, last  # the stage got it
    done = subprocess.run(command(run_dir), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    for ours, theirs in zip(
        state(run_dir)["generations"], state(uninterrupted)["generations"], strict=True
    ):
        assert ours["judged"] == theirs["judged"] and ours["promoted"] == theirs["promoted"]


@pytest.mark.slow
def test_a_changed_recipe_is_refused_naming_the_key(uninterrupted: Path) -> None:
    changed = subprocess.run(
        command(uninterrupted, "--set", "generations.margin=0.5"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert changed.returncode == 2
    lines = changed.stderr.strip().splitlines()
    assert len(lines) == 1 and "generations.margin" in lines[0] and "--force" in lines[0]
    status = subprocess.run(
        command(uninterrupted, "--status"), cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert status.returncode == 0
    assert status.stdout == (uninterrupted / "STATUS.md").read_text()


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("generations.bogus=1", "bogus"),
        ("generations.patience=0", "patience"),
        ("generations.judge_plies=[3]", "judge_plies"),
        ("variant=nackgammon", "generations.judge"),
        ("variant=hypergammon", "variant"),
        ("bootstrap.distill.labels=['x']", "distill.labels"),
        ("init_from=no-such-network", "init_from"),
        ("generations.judge=nowhere.npz", "generations.judge"),
    ],
)
def test_bad_recipe_keys_are_one_line(
    setting: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    argv = ["pipeline", "--config", str(TINY), "--set", f"run_dir={tmp_path / 'r'}"]
    assert main([*argv, "--set", setting]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0], err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("generations.duel_games=0", "duel_games"),
        ("generations.duel_games=41", "duel_games"),
        ("generations.judge=data/judge/gnubg-2ply.npz", "generations.judge"),
        ("generations.cube_judge=data/judge/gnubg-cube-2ply.npz", "generations.cube_judge"),
        ("generations.label.prune=4", "generations.label"),
        ("race=onesided-race", "race"),
        ("init_from=td-80", "init_from"),
    ],
)
def test_bad_acey_deucey_recipe_keys_are_one_line(
    setting: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    argv = ["pipeline", "--config", str(ACEY), "--set", f"run_dir={tmp_path / 'r'}"]
    assert main([*argv, "--set", setting]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0], err
    assert not (tmp_path / "r").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is here")
def test_cuda_without_a_gpu_is_one_line_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    argv = ["pipeline", "--config", str(ACEY), "--set", f"run_dir={tmp_path / 'r'}"]
    assert main([*argv, "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--device" in err[0] and "CUDA" in err[0], err
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_the_acey_deucey_recipe_duels_and_promotes_by_the_duels_rule(acey: Path) -> None:
    """Every stage done; each generation's duel against its teacher played to the recipe's
    games, its points per game equal to what its wins, gammons and backgammons add up to
    (cubeless: 1, 2, 3 points), and promoted iff the lower end of its 95% interval is
    above the margin; the teacher of a generation is the last promoted one before it."""
    doc = state(acey)
    recipe = doc["recipe"]["generations"]
    assert doc["recipe"]["variant"] == "acey-deucey" and doc["next"] == "" and doc["stopped"]
    gens = doc["generations"]
    assert [g["generation"] for g in gens] == list(range(len(gens))) and len(gens) >= 2
    champion = gens[0]
    assert champion["duel"] is None and champion["judged"] == {}
    stale = 0
    for g in gens[1:]:
        k = g["generation"]
        assert all(doc["stages"][f"gen{k}/{s}"]["status"] == "done" for s in ("label", "fit"))
        assert g["labels"] > 0 and g["epochs"] == 1 and g["core_hours"] > 0
        duel = g["duel"]
        assert g["teacher"] == champion["network"] == duel["opponent"]
        assert duel["games"] == recipe["duel_games"]
        (wa, wb), (ga, gb), (ba, bb) = duel["wins"], duel["gammons"], duel["backgammons"]
        assert wa + wb == duel["games"]
        points = (wa + ga + 2 * ba) - (wb + gb + 2 * bb)
        assert duel["ppg"] == pytest.approx(points / duel["games"])
        lo, hi = duel["ci95"]
        assert lo < duel["ppg"] < hi
        want = lo > recipe["margin"]
        assert g["promoted"] is want
        champion, stale = (g, 0) if want else (champion, stale + 1)
    assert doc["champion"] == champion["network"]
    assert len(gens) - 1 == recipe["count"] or stale >= recipe["patience"]
    status = (acey / "STATUS.md").read_text()
    assert "duel vs teacher (ppg)" in status and f"over {recipe['duel_games']} games" in status
    svg = (acey / "generations.svg").read_text()
    assert svg.count("<circle") == len(gens) - 1 and "points per game" in svg


@pytest.mark.slow
def test_the_fit_on_device_cpu_is_the_default_fit_bit_for_bit(acey: Path, tmp_path: Path) -> None:
    """The pipeline passed --device cpu to its fits; the first fit's stage config run again
    without it gives the same network, array for array."""
    log = (acey / "logs" / "gen1-fit.log").read_text()
    assert "--device cpu" in log.splitlines()[0]
    config = acey / "stages" / "gen1-fit.toml"
    argv = [sys.executable, "-m", "vrhcaby.cli", "train", "--config", str(config), "--no-progress"]
    argv += ["--set", f"checkpoint_dir={tmp_path}", "--set", f"runs_dir={tmp_path / 'tb'}"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = Path(state(acey)["stages"]["gen1/fit"]["network"])
    ours, _ = checkpoint.load(tmp_path / theirs.name, "backgammon")
    fitted, _ = checkpoint.load(theirs, "backgammon")
    weights = [k for k in fitted if k.startswith("model/")]
    assert weights and ours.keys() == fitted.keys()
    for key in weights:
        assert np.array_equal(ours[key], fitted[key]), key


@pytest.mark.slow
def test_a_nackgammon_recipe_plays_nackgammon_in_every_stage(tmp_path: Path) -> None:
    """The tiny recipe as Nackgammon, judged by a duel: the bootstrap learns Nackgammon, the
    label run plays it (its first decision is Nack Ballard's layout of RULES.md §2), the
    fit is of that variant, and the duel is played."""
    run_dir = tmp_path / "run"
    extra = ["variant=nackgammon", 'generations.judge=""', 'generations.cube_judge=""']
    extra += ["generations.duel_games=20", "generations.count=1", "generations.label.sample=1.0"]
    extra += ["generations.label.keep_agreeing=1.0"]  # every decision labelled: the first too
    argv = command(run_dir, *(a for x in extra for a in ("--set", x)))
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = state(run_dir)
    _, meta = checkpoint.load(doc["stages"]["bootstrap"]["network"], "backgammon")
    assert meta["variant"] == "nackgammon"
    fit = load_config(TrainConfig, run_dir / "stages" / "gen1-fit.toml")
    assert fit.variant == "nackgammon"
    layout = np.zeros(25, np.int8)
    for point, checkers in ((24, 2), (23, 2), (13, 4), (8, 3), (6, 4)):
        layout[point - 1] = checkers
    shard = Shard.load(run_dir / "labels" / "gen1" / "shard-00000.npz")
    assert Shard.meta(run_dir / "labels" / "gen1" / "shard-00000.npz")["config"]["variant"] == (
        "nackgammon"
    )
    assert np.array_equal(shard.boards[0], np.stack([layout, layout]))
    duel = doc["generations"][1]["duel"]
    assert duel["games"] == 20 and doc["generations"][1]["promoted"] is (duel["ci95"][0] > 0)


@pytest.mark.slow
def test_a_duel_is_the_same_in_one_process_in_two_and_on_ray(ray) -> None:
    """The duel's games are the tournaments' (chunks seeded from the recipe's seed): the
    same figures whatever `--jobs` or the backend."""
    gens = GenerationsConfig(judge="", duel_games=40)
    figures = []
    for res in (Resources(jobs=1), Resources(jobs=2), Resources(backend="ray")):
        duel = Duel(str(ROOT / "checkpoints" / "td-acey-deucey.pt"), "acey-deucey", 5, res)
        figures.append(judge(gens, "td-acey-deucey-gen2", duel)["duel"])
    assert figures[0]["games"] == 40 and figures[0] == figures[1] == figures[2]


def test_a_stage_config_written_reads_back_the_same(tmp_path: Path) -> None:
    cfg = load_config(PipelineConfig, TINY)
    for config in (cfg.bootstrap, cfg.generations.fit, cfg.generations.label):
        path = write_toml(tmp_path / "stage.toml", config)
        assert load_config(type(config), path) == config


def test_the_first_decisions_of_judged_sets_are_theirs() -> None:
    """`Judged.first` and `CubeSet.first` against a plain loop over the decisions."""
    judged = Judged.load(ROOT / "data" / "judge" / "gnubg-2ply.npz")
    cut = judged.first(7)
    assert len(cut.boards) == 7 and (cut.boards == judged.boards[:7]).all()
    rows = [m for m in range(len(judged.parent)) if judged.parent[m] < 7]
    assert (cut.after == judged.after[rows]).all() and (cut.parent == judged.parent[rows]).all()
    assert (cut.equities == judged.equities[rows]).all() and cut.sources is not None
    # a plain loop: the best and the worst play of each position, and what they cost
    best, worst, spread = [], [], []
    for i in range(7):
        mine = [m for m in rows if judged.parent[m] == i]
        values = [judged.equities[m] for m in mine]
        best.append(judged.after[mine[int(np.argmax(values))]])
        worst.append(judged.after[mine[int(np.argmin(values))]])
        spread.append(max(values) - min(values))
    assert np.allclose(cut.cost(np.array(best)), 0)
    assert np.allclose(cut.cost(np.array(worst)), spread)
    cubes = CubeSet.load(ROOT / "data" / "judge" / "gnubg-cube-2ply.npz")
    assert len(cubes.first(5)) == 5 and (cubes.first(5).nd == cubes.nd[:5]).all()


def test_init_from_is_the_first_champion_and_the_fits_shape(tmp_path: Path) -> None:
    """No TD stage: the network named is the champion, its shape the fits' (read here from
    the checkpoint's own description)."""
    cfg = load_config(PipelineConfig, TINY, [f"run_dir={tmp_path}", "init_from=td-80"])
    champion, fit = bootstrap(cfg, State(tmp_path / "pipeline.json", {}), Resources())
    assert Path(champion) == ROOT / "checkpoints" / "td-80.pt"
    _, meta = checkpoint.load(champion, "backgammon")
    assert fit.net == NetConfig(**{**meta["net"], "hidden": tuple(meta["net"]["hidden"])})
    assert fit.net.hidden == (80,) and not list(tmp_path.iterdir())


@pytest.mark.slow
def test_a_race_network_makes_the_champions_sets_that_carry_it(tmp_path: Path) -> None:
    """With `race`, the first champion is the bootstrap's network and the shipped race
    network as a set (`vrhcaby netset`'s), and a generation fits the set's contact network
    only: its race network is the shipped file's, weight for weight."""
    run_dir = tmp_path / "run"
    extra = ("--set", "race=onesided-race", "--set", "generations.count=1")
    done = subprocess.run(
        command(run_dir, *extra), cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    doc = state(run_dir)
    race, _ = checkpoint.load(ROOT / "checkpoints" / "onesided-race.pt", "backgammon")
    bootstrap_net, _ = checkpoint.load(doc["stages"]["bootstrap"]["network"], "backgammon")
    first, second = (Path(g["network"]) for g in doc["generations"])
    assert first == Path(doc["stages"]["assemble"]["network"])
    for path in (first, second):
        arrays, meta = checkpoint.load(path, sets=True)
        assert meta["fallback"] == {"crashed": "contact"}
        for key, value in race.items():
            assert np.array_equal(arrays[f"set/race/{key}"], value), key
    arrays, _ = checkpoint.load(first, sets=True)
    for key in ("model/0.weight", "model/2.bias"):
        assert np.array_equal(arrays[f"set/contact/{key}"], bootstrap_net[key])
    fitted, _ = checkpoint.load(second, sets=True)
    assert not np.array_equal(
        fitted["set/contact/model/0.weight"], arrays["set/contact/model/0.weight"]
    )
