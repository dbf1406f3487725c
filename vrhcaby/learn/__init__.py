"""Learning by self-play: the TD(lambda) core, the backgammon game, the Ray trainer."""
