"""Training runs as library calls, below the command line: `run` (a TD(λ) or distillation
run of a `TrainConfig`), `labelrun` (a label run's shards, resumable), `pipeline`
(expert iteration as one resumable run) and `stage` (the pipeline's stage processes,
`python -m vrhcaby.training.stage label|train`)."""
