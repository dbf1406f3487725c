"""Networks: `encode` (input encodings), `net` (the value network and its numpy/numba
evaluator), `netset` (a network per position class), `ensemble`
(the mean of several networks as one set member), `checkpoint` (the one writer and
loader of checkpoints), `lawful` (rule-aware outputs), `bearoff_db` (the bear-off
databases), `onesided` (the one-sided race evaluator) and `prune` (the search's pruning
network)."""
