"""Retry: re-run tuned configs in isolated child processes, beside the inspect layers (records, catalogs and the model in; a ledger out)."""
