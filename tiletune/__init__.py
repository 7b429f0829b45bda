"""tiletune: see which CUTLASS tiles FlashInfer's autotuner picked, which failed and why.

One folder per stage; data flows down this list, each stage knowing nothing of the ones after it:

    core/      records, events, vocabulary, errors, bounded input   (what every stage shares)
    readers/   sources -> TuningRecord / Event    (caches, logs, blocklists, JIT dirs, ledgers)
    catalogs/  release / arch / op -> ordered TileConfig lists
    decode/    TuningRecord -> Entry               (key shapes -> Problem; tactic -> TileConfig)
    model/     GPU specs, shared-memory fit, time model
    analysis/  entries -> failures, never tried, overview, verdicts (InspectResult)
    tuner/     records -> attempts -> ledger       (isolated child processes; the ledger is a source)
    formats/   results -> text                     (table, json, markdown, report, pictures)
    cli/       the typer app, output routing, one module per command body

tests/test_layering.py reads each module's stage from its folder and fails on an import against the order.
"""

__version__ = "0.1.0"
