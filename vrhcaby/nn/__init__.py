"""Networks: input encodings, the value network and its numpy/numba evaluator,
checkpoints, rule-aware outputs, the bear-off databases."""
