"""What tools/trtllm_writers needs to know of one TensorRT-LLM writer: the source files it runs (each
named by repository, commit and path, with the sha256 of its bytes), the stand-ins for imports that
need TensorRT-LLM's C++ libraries or a GPU, the driver script, and what its PROVENANCE.json says
was substituted or not driven."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Source:
    path: str
    commit: str
    sha256: str
    size: int
    role: str
    repository: str = "NVIDIA/TensorRT-LLM"

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repository}/blob/{self.commit}/{self.path}"


@dataclass(frozen=True)
class Writer:
    name: str  # the folder under --out: the writer commit's first 12 hex digits
    sources: tuple[Source, ...]
    standins: dict[str, tuple[str, str]]  # path in the throwaway package -> (its text, why it stands in)
    drive: Path  # run once per rank in the throwaway directory
    helpers: tuple[Path, ...] = ()  # copied beside `drive` (imported by it)
    log_stream: str = "stderr"  # where the release's logger writes: that stream is the rank's log
    candidates_log: bool = False  # drive.py's derived #19162 lines, written to autotuner+candidates.rank<r>.log
    written_by: str = ""
    substituted: dict[str, str] = field(default_factory=dict)
    not_driven: dict[str, str] = field(default_factory=dict)
