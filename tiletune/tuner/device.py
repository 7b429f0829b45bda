"""Is there a CUDA device retry can run on? Asked of the NVIDIA driver before anything is built.

The driver API (libcuda: cuInit, cuDeviceGetCount) answers in milliseconds without torch, nvcc
or a build, and honours CUDA_VISIBLE_DEVICES exactly as the children will. It is asked in a short
child process with a time limit, so a wedged driver cannot hang the parent and the parent never
holds CUDA state of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Optional

PROBE_TIMEOUT_S = 30.0

# cuInit / cuDeviceGetCount in the child; prints one JSON object
_PROBE = r"""
import ctypes, json
out = {}
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    out["error"] = "no NVIDIA driver (libcuda.so.1 cannot be loaded)"
else:
    rc = cuda.cuInit(0)
    n = ctypes.c_int(0)
    if rc == 0:
        rc = cuda.cuDeviceGetCount(ctypes.byref(n))
    if rc != 0:
        name = ctypes.c_char_p()
        try:
            cuda.cuGetErrorName(rc, ctypes.byref(name))
        except Exception:
            pass
        out["error"] = "the NVIDIA driver reports %s (error %d)" % ((name.value or b"?").decode(), rc)
    out["count"] = n.value
print(json.dumps(out))
"""


def cuda_device_problem() -> Optional[str]:
    """None when the driver sees at least one CUDA device; else why not, as a phrase."""
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"the NVIDIA driver did not answer within {PROBE_TIMEOUT_S:g} s"
    except OSError as e:
        return f"the device check could not start ({e})"
    try:
        answer = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return f"the device check failed (exit {out.returncode}: {out.stderr.strip()[-200:]})"
    if answer.get("error"):
        return str(answer["error"])
    if not answer.get("count"):
        return "the NVIDIA driver sees no CUDA device (check CUDA_VISIBLE_DEVICES)"
    return None
