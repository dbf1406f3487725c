"""Training runs as library calls, below the command line: `run` (a TD(λ) or distillation
run of a `TrainConfig`) and `pipeline` (expert iteration as one resumable run)."""
