"""`python -m tiletune` runs the CLI."""

from tiletune.launch import main

main()
