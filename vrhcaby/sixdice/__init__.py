"""The six-dice scoring game (vrhcaby, RULES.md section 3): its players, optimum and learner."""
