"""vrhcaby: a toolkit for training and judging backgammon bots the TD-Gammon way."""
