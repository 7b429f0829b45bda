"""`python -m tiletune` runs the CLI."""

from tiletune.cli import main

main()
