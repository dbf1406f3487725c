"""The pipeline's stage processes live on the training floor (`vrhcaby.training.stage`):
no module of `vrhcaby.training` imports the command line or names one of its modules
(for `python -m` or an import by name), a label stage and a TD stage run without loading
any, and a label stage makes the shards and the summary `vrhcaby label` makes; bad input
is one line and exit status 2."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vrhcaby.base.config import load_config
from vrhcaby.cli.main import main
from vrhcaby.learn.labels import LabelConfig
from vrhcaby.training import stage
from vrhcaby.training.pipeline import write_toml
from vrhcaby.training.run import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
TRAINING = ROOT / "vrhcaby" / "training"
MODULE_NAME = re.compile(r"vrhcaby\.cli(\.\w+)*")


def test_no_training_module_imports_or_names_the_command_line() -> None:
    modules = sorted(TRAINING.glob("*.py"))
    assert {p.stem for p in modules} >= {"run", "pipeline", "labelrun", "stage"}
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value]  # a module named in a string: python -m, importlib
            else:
                continue
            assert not any(MODULE_NAME.fullmatch(n) for n in names), (path.name, names)


def tiny_labels(out_dir: Path) -> LabelConfig:
    return LabelConfig(
        name="tiny",
        teacher="td-80",
        plies=1,
        filter=(3,),
        shards=2,
        games_per_shard=2,
        sample=0.3,
        keep_agreeing=1.0,
        student_top=2,
        random_siblings=1,
        seed=5,
        out_dir=str(out_dir),
    )


@pytest.mark.slow
def test_the_stages_run_without_the_command_line_and_label_as_the_verb_does(
    tmp_path: Path,
) -> None:
    """In a fresh interpreter: a label stage and a short TD stage, then the modules loaded;
    the stage's shards and summary those of `vrhcaby label` on the same config."""
    labels = write_toml(tmp_path / "label.toml", tiny_labels(tmp_path / "stage"))
    td = load_config(TrainConfig, ROOT / "tests" / "configs" / "smoke.toml")
    td = replace(td, games=16, checkpoint_every=16, checkpoint_dir=str(tmp_path / "ck"))
    td_file = write_toml(tmp_path / "td.toml", replace(td, runs_dir=str(tmp_path / "tb")))
    summary = tmp_path / "stage.json"
    script = (
        "import json, sys\n"
        "from vrhcaby.training import stage\n"
        f"codes = [stage.main(['label', '--config', {str(labels)!r}, '--no-progress', "
        f"'--json', {str(summary)!r}]), stage.main(['train', '--config', {str(td_file)!r}, "
        "'--no-progress'])]\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('vrhcaby.cli'))\n"
        "print(json.dumps({'codes': codes, 'loaded': loaded}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"codes": [0, 0], "loaded": []}
    assert [p.name for p in (tmp_path / "ck").glob("smoke-g*.pt")] == ["smoke-g000000016.pt"]

    verb = tmp_path / "verb.json"
    argv = ["label", "--config", str(labels), "--no-progress", "--jobs", "1"]
    argv += ["--set", f"out_dir={json.dumps(str(tmp_path / 'verb'))}", "--json", str(verb)]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    ours, theirs = json.loads(summary.read_text()), json.loads(verb.read_text())
    for key in ("shards_made", "labels", "decisions", "teacher_positions", "labels_held"):
        assert ours[key] == theirs[key] > 0, key
    for k in range(2):
        a = np.load(tmp_path / "stage" / "tiny" / f"shard-{k:05d}.npz")
        b = np.load(tmp_path / "verb" / "tiny" / f"shard-{k:05d}.npz")
        assert a.files == b.files
        for name in a.files:
            if name != "meta":  # it names the folder
                assert np.array_equal(a[name], b[name]), name


def exit_status(argv: list[str]) -> int:
    """`stage.main`'s exit status, whether it returns it or the parser exits with it."""
    try:
        return stage.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["label", "--config", "nowhere.toml"], "nowhere.toml"),
        (["label", "--config", "{labels}", "--jobs", "0"], "--jobs"),
        (["train", "--config", "{labels}"], "teacher"),  # a label config is no TrainConfig
        (["train", "--config", "{td}", "--device", "tpu"], "tpu"),
        (["fly"], "fly"),
    ],
)
def test_bad_input_to_a_stage_is_one_line_and_status_2(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    labels = write_toml(tmp_path / "labels.toml", tiny_labels(tmp_path / "out"))
    td = replace(TrainConfig(), checkpoint_dir=str(tmp_path / "out"), runs_dir=str(tmp_path))
    files = {"{labels}": str(labels), "{td}": str(write_toml(tmp_path / "td.toml", td))}
    assert exit_status([files.get(a, a) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0], err
    assert not (tmp_path / "out").exists()
