"""tiletune: see which CUTLASS tiles FlashInfer's autotuner picked, which failed and why.

Pipeline (data flows one way; each stage knows nothing of the ones after it):

    readers/   sources -> TuningRecord            (cache files, logs, blocklists, JIT dirs, ledgers)
    decode.py  TuningRecord -> Entry               (op semantics in ops.py + catalogs/ -> TileConfig)
    model/     Entry -> analyses                   (GPU specs, shared-memory fit, roofline, time)
    pipeline.py  analyses -> failures, not tried, verdicts (types in results.py)
    formats/   results -> str                      (table, json, markdown)
    tuner/     records -> attempts -> ledger       (isolated child processes; the ledger is a source)
    commands/  one module per command; cli.py wires them to typer

tests/test_layering.py holds the layer table and fails on an import against it.
"""

__version__ = "0.1.0"
