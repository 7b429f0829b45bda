"""One module per command's work between the CLI and the library (the cli layer).

Each takes the options `tiletune.cli.typer_app` parsed, runs the stages (readers, decode, model, tuner),
and hands the result to a formatter in `tiletune.formats`; `cli/typer_app.py` only wires typer to these,
prints, and turns errors into exit statuses.
"""
