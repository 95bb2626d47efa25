"""python -m calibviz: the command line."""
import sys

from .cli import run

sys.exit(run())
