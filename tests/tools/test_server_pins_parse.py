"""tools/server_pins: the requirement parser on small texts, and the clone mode on a tiny git repo."""
import subprocess

import pytest

from tools.server_pins import __main__ as cli
from tools.server_pins import sources
from tools.server_pins.parse import flashinfer_requirements, parse_requirement, summarize


def test_exact_pin_is_a_pin():
    r = parse_requirement("flashinfer-python==0.3.1")
    assert (r["name"], r["spec"], r["pin"]) == ("flashinfer-python", "==0.3.1", "0.3.1")


def test_range_is_no_pin():
    r = parse_requirement("flashinfer-python>=0.2.8")
    assert r["pin"] is None and r["spec"] == ">=0.2.8"
    assert parse_requirement("flashinfer-python==0.2.*")["pin"] is None  # a wildcard is a range
    assert parse_requirement("flashinfer-python>=0.2.8,<0.3")["pin"] is None


def test_extras_and_markers_and_names():
    r = parse_requirement('flashinfer-python[cu12]==0.2.6.post1 ; platform_machine == "x86_64"')
    assert r["pin"] == "0.2.6.post1" and r["marker"] == 'platform_machine == "x86_64"'
    assert parse_requirement("flashinfer==0.1.6")["name"] == "flashinfer"  # the old wheel name
    assert parse_requirement("flashinfer_python==0.2.3")["name"] == "flashinfer-python"  # normalized
    assert parse_requirement('flashinfer_python==0.2.3; extra == "srt"')["extra"] == "srt"
    for other in ("flashinfer-cubin==0.3.1", "flashinfer-jit-cache==0.3.1", "torch==2.8.0", "-r common.txt", "# flashinfer-python==1"):
        assert parse_requirement(other) is None, other


def test_file_forms():
    req_txt = "-r common.txt\n# flashinfer-python==9.9 commented out\nflashinfer-python==0.4.0  # pinned for sm100\ntorch==2.8\n"
    assert [r["pin"] for r in flashinfer_requirements(req_txt)] == ["0.4.0"]
    pyproject = 'srt = [\n  "sgl-kernel==0.1.0",\n  "flashinfer_python==0.2.3",\n]\nblackwell = ["flashinfer_python==0.2.3; extra == \'x\'"]\n'
    got = flashinfer_requirements(pyproject)
    assert [r["pin"] for r in got] == ["0.2.3", "0.2.3"] and got[1]["extra"] == "x"
    # METADATA: the quoted marker value "flashinfer" is an extra's name, not a requirement
    metadata = 'Provides-Extra: flashinfer\nRequires-Dist: flashinfer-python==0.3.1; extra == "flashinfer"\n'
    got = flashinfer_requirements(metadata)
    assert len(got) == 1 and got[0]["pin"] == "0.3.1" and got[0]["extra"] == "flashinfer"
    setup_py = 'extras_require={"flashinfer": ["flashinfer-python>=0.2.1"]},\nif find_spec("flashinfer"): pass\n'
    assert [r["spec"] for r in flashinfer_requirements(setup_py)] == [">=0.2.1"]


def test_summarize():
    assert summarize([]) == {"pin": None, "spec": None}
    one = summarize(flashinfer_requirements('flashinfer_python==0.3.1; extra == "srt"\nflashinfer_python==0.3.1; extra == "blackwell"'))
    assert one["pin"] == "0.3.1" and one["spec"] == "flashinfer-python==0.3.1" and one["extra"] == ["blackwell", "srt"]
    split = summarize(flashinfer_requirements('flashinfer==0.1.6; platform_machine == "x86_64"\nflashinfer>=0.1.5'))
    assert split["pin"] is None and split["spec"] == "flashinfer==0.1.6; flashinfer>=0.1.5" and "note" in split
    rng = summarize(flashinfer_requirements("flashinfer-python>=0.2.8"))
    assert rng["pin"] is None and rng["spec"] == "flashinfer-python>=0.2.8"


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def tiny_vllm(tmp_path):
    """A clone-shaped repo with three release tags: none, a range in requirements-cuda.txt, a pin in
    requirements/cuda.txt (the files vLLM used over time)."""
    repo = tmp_path / "vllm"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "setup.py").write_text("install_requires=get_requirements()\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "a")
    _git(repo, "tag", "v0.8.0")
    (repo / "requirements-cuda.txt").write_text("torch==2.6\nflashinfer-python>=0.2.1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "b")
    _git(repo, "tag", "v0.9.0")
    _git(repo, "rm", "-q", "requirements-cuda.txt")
    (repo / "requirements").mkdir()
    (repo / "requirements" / "cuda.txt").write_text("flashinfer-python==0.3.1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "c")
    _git(repo, "tag", "v0.11.0")
    _git(repo, "tag", "nightly")  # not a release tag
    return repo


def test_clone_mode_reads_each_tag(tiny_vllm, tmp_path):
    out = tmp_path / "pins.json"
    assert cli.main(["--vllm-repo", str(tiny_vllm), "--servers", "vllm", "--out", str(out)]) == 0
    import json

    doc = json.loads(out.read_text())
    rows = doc["servers"]["vllm"]
    assert list(rows) == ["0.8.0", "0.9.0", "0.11.0"]
    assert rows["0.8.0"]["spec"] is None and "requires no FlashInfer" in rows["0.8.0"]["note"]
    assert rows["0.9.0"]["pin"] is None and rows["0.9.0"]["spec"] == "flashinfer-python>=0.2.1"
    assert rows["0.9.0"]["source"] == "requirements-cuda.txt at v0.9.0"
    assert rows["0.11.0"]["pin"] == "0.3.1" and rows["0.11.0"]["source"] == "requirements/cuda.txt at v0.11.0"
    commit = subprocess.run(["git", "-C", str(tiny_vllm), "rev-parse", "v0.11.0"], capture_output=True, text=True).stdout.strip()
    assert rows["0.11.0"]["commit"] == commit
    # the command recorded names a placeholder, never this machine's path
    assert doc["generated_by"]["command"] == "python3 -m tools.server_pins --vllm-repo VLLM_CLONE --servers vllm"
    assert str(tmp_path) not in out.read_text()
    assert sources.release_tags(tiny_vllm) == {"0.8.0": "v0.8.0", "0.9.0": "v0.9.0", "0.11.0": "v0.11.0"}


def test_not_a_clone_is_one_line(tmp_path, capsys):
    assert cli.main(["--vllm-repo", str(tmp_path), "--servers", "vllm", "--out", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"server_pins: {tmp_path}: not a git clone"]
    assert not (tmp_path / "o.json").exists()
