"""Server release -> FlashInfer requirement table (tiletune/core/data/server_flashinfer_pins.json).

Read by code from public sources only: each vLLM / SGLang release's wheel METADATA on PyPI
(`Requires-Dist`, which setup.py / pyproject.toml build from the release's requirement files), or,
with --vllm-repo / --sglang-repo, the requirement files themselves at each release tag of a clone.
Run `python3 -m tools.server_pins --help`.
"""
