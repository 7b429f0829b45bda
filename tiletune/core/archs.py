"""Architecture names: normalising "sm_120a"/"120f"/"12.0" to "sm120", and GPU name -> arch.

The CUTLASS runner class names are the same on SM100, SM103 and SM120, so the arch must come
from somewhere else: `_metadata.gpu` (FlashInfer writes `torch.cuda.get_device_name()`), the JIT
workspace path (`.../flashinfer/<version>/<arch>/`, e.g. `120f`), or the user's `--arch`.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

KNOWN_ARCHS = ("sm80", "sm86", "sm87", "sm89", "sm90", "sm100", "sm103", "sm107", "sm110", "sm120", "sm121")

# Ordered: first match wins, so the more specific names come first. Patterns are matched
# case-insensitively against the whole device name as torch / nvidia-smi print it.
_GPU_ARCH_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\bGB10\b|DGX Spark", "sm121"),
    (r"RTX PRO \d+ Blackwell|RTX 50\d0|RTX PRO \d+\b.*Blackwell|RTX \d{4} PRO\b", "sm120"),  # ("RTX 6000 PRO", as written)
    (r"\bB300\b|\bGB300\b", "sm103"),
    (r"\bB200\b|\bGB200\b|\bB100\b", "sm100"),
    (r"\bH200\b|\bH100\b|\bH800\b|\bH20\b|\bGH200\b", "sm90"),
    (r"Jetson (?:AGX )?Thor|\bThor\b", "sm110"),
    (r"Jetson (?:AGX )?Orin|\bOrin\b", "sm87"),
    (r"\bL40S?\b|\bL4\b|\bL20\b|RTX 40\d0|RTX 6000 Ada", "sm89"),
    (r"\bA100\b|\bA800\b|\bA30\b", "sm80"),
    (r"\bA10G?\b|\bA40\b|RTX 30\d0|RTX A6000", "sm86"),
)


@functools.lru_cache(maxsize=1024)  # the model asks twice per modelled case (73,000 calls for a 50k cache)
def normalize_arch(text: str) -> Optional[str]:
    """'sm_120a' / 'SM120' / '120f' / '12.0' / '12.1a' / '90a' -> 'sm120' / 'sm121' / 'sm90'; None if not an arch."""
    t = text.strip().lower()
    m = re.fullmatch(r"(?:sm_?|compute_?)?(\d{2,3})[afn]?", t)
    if m:
        num = m.group(1)
    else:
        m = re.fullmatch(r"(\d{1,2})\.(\d)[af]?", t)
        if not m:
            return None
        num = m.group(1) + m.group(2)
    arch = "sm" + num
    return arch if arch in KNOWN_ARCHS else None


def arch_from_gpu_name(name: str) -> Optional[str]:
    """Map a device name ("NVIDIA RTX PRO 6000 Blackwell Server Edition") to its arch, or None."""
    for pattern, arch in _GPU_ARCH_PATTERNS:
        if re.search(pattern, name, flags=re.IGNORECASE):
            return arch
    return None


def arch_family(arch: str) -> str:
    """sm121 shares sm120's catalogs; sm103/sm110 are their own lists. Used for catalog lookup only."""
    return "sm120" if arch == "sm121" else arch
