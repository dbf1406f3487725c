"""`vrhcaby label --backend ray` (the path `vrhcaby pipeline --backend ray` takes): on a real
local Ray instance (`conftest.ray`), the shards of a tiny run equal the local ones."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from tests.test_labels import label, same_shards, tiny
from vrhcaby.learn.labels import Shard
from vrhcaby.play import ray as ray_backend


@pytest.mark.slow  # about 40 s, most of it Ray's start
def test_ray_labels_the_shards_the_local_backend_labels(ray, tmp_path: Path, monkeypatch) -> None:
    tasks = []  # the chunks handed to Ray: proof that the shards were made there

    def run_ray(job, chunks, **kw):
        tasks.extend(chunks)
        return real(job, chunks, **kw)

    real = ray_backend.run_ray
    monkeypatch.setattr(ray_backend, "run_ray", run_ray)
    runs = {
        "local": ["--jobs", "1"],
        "ray": ["--backend", "ray", "--workers", "2"],
    }
    for name, backend in runs.items():
        # Two shards of two games each, the same seed.
        argv = tiny(tmp_path / name, *backend, "--set", "games_per_shard=2", shards=2)
        code, _, err = label(*argv)
        assert code == 0, err
    assert tasks == [range(0, 1), range(1, 2)]
    same_shards(tmp_path / "local", tmp_path / "ray")
    for index in range(2):
        name = f"tiny/shard-{index:05d}.npz"
        local, remote = (Shard.load(tmp_path / run / name) for run in runs)
        assert local.games == remote.games == 2 and len(local.after) > 0
        for field in fields(Shard):
            a, b = getattr(local, field.name), getattr(remote, field.name)
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, field.name
