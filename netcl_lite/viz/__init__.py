"""Figures for the chapters: ``player`` makes an interactive one that runs
live in JupyterLab and plays stored frames in the static course."""

from netcl_lite.viz.player import Control, Player, player

__all__ = ["Control", "Player", "player"]
