"""Data tables shipped with tiletune (server_flashinfer_pins.json: see tools/server_pins)."""
