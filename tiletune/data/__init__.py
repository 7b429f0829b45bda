"""Data tables tiletune ships (each records the public sources and the command that rebuilds it)."""
