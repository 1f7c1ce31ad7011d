"""Silent disk corruptions, planted: a flipped bit in a result table, an overwritten or truncated
training checkpoint, a large local model changed in its middle, a full disk at a write. Each ends
in the right numbers or in one message naming the file, and `lengthgen verify` finds each."""

import errno
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from lengthgen.engine.run import DamagedCheckpointWarning
from lengthgen.models import storage
from lengthgen.records import files
from lengthgen.records.files import DamagedFile, WriteFailed, read_frame, read_schema, read_table
from lengthgen.records.tables import read_provenance, write_parquet, write_table
from lengthgen.runtime import job_log
from lengthgen.settings import ScratchRunSettings
from lengthgen.tasks import get_task
from lengthgen.verify import report, verify_project
from tiny_models import tiny_training_section

TABLE = "results/tables/scratch.parquet"
CHECKPOINT = "results/checkpoints/scratch/NB/nope/seed0/state.pt"
MODEL = "results/scratch/NB/nope/seed0/model"


def a_table(root, path=TABLE, rows=200):
    table = pa.table({"example": list(range(rows)), "accuracy": [i / rows for i in range(rows)],
                      "task": [f"task{i % 7}" for i in range(rows)]})
    write_parquet(table, root / path, {"seed": 0})
    return root / path


def flip(path, offset: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 1 << bit
    path.write_bytes(bytes(data))


def sidecar(path):
    return path.with_name(path.name + ".sha256")


def data_pages(path) -> range:
    column = pq.ParquetFile(path).metadata.row_group(0).column(0)
    start = column.dictionary_page_offset or column.data_page_offset
    return range(start, start + column.total_compressed_size)


# -- (c) result tables carry their sha256 ------------------------------------------------------------

def test_a_parquet_is_written_with_its_sha256_beside_it(tmp_path):
    import hashlib

    path = a_table(tmp_path)
    stat = path.stat()
    assert sidecar(path).read_text() == (f"{hashlib.sha256(path.read_bytes()).hexdigest()}  scratch.parquet\n"
                                         f"# written as inode {stat.st_dev}:{stat.st_ino}\n"
                                         f"# written at {TABLE}\n")
    assert read_frame(path).height == 200 and read_provenance(path) == {"seed": 0}
    assert sorted(p.name for p in path.parent.iterdir()) == ["scratch.parquet", "scratch.parquet.sha256"]
    check = subprocess.run(["sha256sum", "-c", "scratch.parquet.sha256"], cwd=path.parent, capture_output=True,
                           text=True)
    assert check.returncode == 0 and check.stdout == "scratch.parquet: OK\n" and check.stderr == ""


def test_a_table_moved_into_snakemakes_cache_is_still_checked_and_another_workflows_entry_is_not_refused(tmp_path):
    """`--cache`: Snakemake moves an output into the cache and links it back (same inode: its sidecar
    still applies); a later fetch may link an entry another workflow made beside an old sidecar."""
    path = a_table(tmp_path)
    entry = tmp_path / "cache" / "0123abcd.parquet"
    entry.parent.mkdir()
    os.rename(path, entry)
    path.symlink_to(entry)
    assert read_frame(path).height == 200
    flip(entry, next(iter(data_pages(entry))) + 10)
    with pytest.raises(DamagedFile, match="differs from the sha256 in scratch.parquet.sha256"):
        read_frame(path)
    other = a_table(tmp_path / "other", "results/tables/scratch.parquet", rows=50)  # another workflow's entry
    path.unlink()
    path.symlink_to(other)
    assert read_frame(path).height == 50  # an older file's sidecar is not about it


def test_a_bit_flipped_inside_a_table_is_named_not_read_as_other_numbers(tmp_path):
    """Find a bit whose flip pyarrow reads without error as other numbers (the silent fault), then
    check that with the sidecar every reader names the file instead."""
    path = a_table(tmp_path)
    clean = read_table(path)
    good = path.read_bytes()
    bare = tmp_path / "bare.parquet"  # the same bytes without a sidecar: what readers saw before
    for offset in data_pages(path):
        bare.write_bytes(good)
        flip(bare, offset, 1)
        try:
            silent = not pq.read_table(bare).equals(clean)
        except (OSError, pa.ArrowException):
            continue
        if silent:
            break
    else:
        pytest.fail("no bit of the data pages reads silently as other numbers")
    flip(path, offset, 1)
    for reader in (read_table, read_frame, read_schema, read_provenance):
        with pytest.raises(DamagedFile) as failure:
            reader(path)
        assert str(failure.value) == (f"{path}: differs from the sha256 in scratch.parquet.sha256, written with it: "
                                      f"delete it and rerun the target: snakemake {TABLE}")


def test_every_bit_of_a_page_header_flipped_is_named_before_any_parser_runs(tmp_path, monkeypatch):
    path = a_table(tmp_path)
    good = path.read_bytes()
    parsed = []
    monkeypatch.setattr(pq, "read_table", lambda *a, **k: parsed.append(a))  # never reached
    for offset in range(4, 20):  # the first page header, after the magic "PAR1"
        for bit in range(8):
            path.write_bytes(good)
            flip(path, offset, bit)
            with pytest.raises(DamagedFile, match="differs from the sha256 in scratch.parquet.sha256"):
                read_table(path)
    assert parsed == []


FLIPPED_JOB = """
import sys
from types import SimpleNamespace
from lengthgen.runtime import start_job
from lengthgen.records.files import read_frame
start_job(SimpleNamespace(log=[sys.argv[2]], threads=1, output=[]))
read_frame(sys.argv[1])
"""


def test_a_job_reading_a_flipped_page_header_fails_in_one_line_with_its_log_kept(tmp_path):
    path = a_table(tmp_path)
    flip(path, 5, 3)
    log = tmp_path / "job.log"
    run = subprocess.run([sys.executable, "-c", FLIPPED_JOB, str(path), str(log)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1
    line = f"lengthgen: {path}: differs from the sha256 in scratch.parquet.sha256, written with it"
    assert run.stderr.startswith(line) and run.stderr.count("\n") == 1 and f"(details in {log})" in run.stderr
    assert line in log.read_text()


def test_a_rewritten_table_gets_a_new_sidecar_and_a_stale_one_never_fails_a_fresh_file(tmp_path, monkeypatch):
    path = a_table(tmp_path, rows=10)
    a_table(tmp_path, rows=20)  # the rule rerun: file and sidecar both new
    assert read_frame(path).height == 20
    # The job dies after the new file is in place, before its sidecar is written: the old sidecar is gone.
    real_replace = os.replace

    def fail_on_the_sidecar(source, target):
        if str(target).endswith(".sha256"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", fail_on_the_sidecar)
    with pytest.raises(WriteFailed) as failure:
        a_table(tmp_path, rows=30)
    monkeypatch.undo()
    assert str(failure.value) == (f"{path}: cannot be written (no space left on device): free space on its file "
                                  f"system and rerun the target: snakemake {TABLE}")  # the job fails, naming it
    assert not sidecar(path).exists() and read_frame(path).height == 30  # read unverified, never refused
    assert [p.name for p in path.parent.iterdir()] == ["scratch.parquet"]  # no temporary left behind
    a_table(tmp_path, rows=40)
    assert sidecar(path).exists() and read_frame(path).height == 40


def test_a_file_written_before_sidecars_is_read_and_a_damaged_sidecar_is_named(tmp_path):
    path = a_table(tmp_path)
    sidecar(path).write_text("not a checksum\n")
    with pytest.raises(DamagedFile) as failure:
        read_frame(path)
    assert str(failure.value) == (f"{sidecar(path)}: is not `SHA256  scratch.parquet`: "
                                  f"delete {TABLE} and rerun the target: snakemake {TABLE}")
    sidecar(path).unlink()
    assert read_frame(path).height == 200


# -- (d) a full disk at a table rule's write ------------------------------------------------------------

def no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_at_a_tables_write_names_the_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    path = a_table(tmp_path, rows=10)
    monkeypatch.setattr(pq, "write_table", no_space)
    with pytest.raises(WriteFailed) as failure:
        a_table(tmp_path, rows=20)
    assert str(failure.value) == (f"{path}: cannot be written (no space left on device): free space on its file "
                                  f"system and rerun the target: snakemake {TABLE}")
    assert sorted(p.name for p in path.parent.iterdir()) == ["scratch.parquet", "scratch.parquet.sha256"]
    assert read_frame(path).height == 10  # the last good table, still verified


def test_a_full_disk_in_a_run_rule_is_one_line_in_its_log_and_on_the_terminal(tmp_path, monkeypatch, capsys):
    import polars as pl

    outputs = SimpleNamespace(parquet=tmp_path / TABLE, markdown=tmp_path / "results/tables/scratch.md")
    log = tmp_path / "job.log"
    a_table(tmp_path)  # the table of an earlier run, with its sidecar
    monkeypatch.setattr(pq, "write_table", no_space)
    with pytest.raises(WriteFailed), job_log([str(log)], [str(outputs.parquet)]):
        write_table(pl.DataFrame({"x": [1]}), outputs, {"config_hash": "h", "code_version": "v", "device": "cpu"})
    line = (f"lengthgen: {outputs.parquet}: cannot be written (no space left on device): free space on its file "
            f"system and rerun the target: snakemake {TABLE}")
    assert log.read_text() == line + "\n"  # the reason, no traceback
    assert capsys.readouterr().err == f"{line} (details in {log})\n"
    # Snakemake removes a failed job's outputs; their sidecars are gone already, not left beside nothing.
    assert not sidecar(outputs.parquet).exists()


SCRIPT_JOB = """
import sys, warnings
from types import SimpleNamespace
from lengthgen import runtime
from lengthgen.engine.run import DamagedCheckpointWarning
from lengthgen.records.files import WriteFailed
log, table = sys.argv[1:]
runtime.start_job(SimpleNamespace(log=[log], output=[table], threads=1))
warnings.warn("state.pt: set aside as state.pt.damaged; run NB/nope/seed0 starts again from step 0",
              DamagedCheckpointWarning)
warnings.warn("a library's chatter", UserWarning)
raise WriteFailed(table, OSError(28, "No space left on device"))
"""


def test_a_script_job_shows_a_set_aside_checkpoint_on_the_terminal_and_a_failed_one_drops_its_sidecars(tmp_path):
    table, log = a_table(tmp_path), tmp_path / "job.log"
    run = subprocess.run([sys.executable, "-c", SCRIPT_JOB, str(log), str(table)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1
    terminal = run.stderr.splitlines()
    assert terminal[0] == ("lengthgen: state.pt: set aside as state.pt.damaged; run NB/nope/seed0 starts again "
                           f"from step 0 (details in {log})")
    assert len(terminal) == 2 and terminal[1].startswith(f"lengthgen: {table}: cannot be written")
    assert "a library's chatter" in log.read_text() and "DamagedCheckpointWarning" in log.read_text()
    assert table.exists() and not sidecar(table).exists()


# -- (a) training checkpoints carry their sha256 ---------------------------------------------------------

SECTION = tiny_training_section(max_steps=10, eval_every=5, warmup_steps=2, checkpoint_every=5, eval_examples=16,
                                eval_batch_size=16, early_stop=False)


def build(root, name=MODEL):
    """The scratch_train job's work: train (or resume) the model, save it."""
    from lengthgen.scratch.train import train_scratch_model

    return train_scratch_model(get_task("NB"), "nope", 0, ScratchRunSettings.from_config(SECTION), root / name,
                               root / os.path.dirname(CHECKPOINT), progress=False)


def weights(model_dir):
    from safetensors.torch import load_file

    return load_file(model_dir / "model.safetensors")


def same_weights(a, b) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model trained once: its checkpoint (finished) and its weights, the right numbers."""
    root = tmp_path_factory.mktemp("trained")
    summary = build(root)
    return root, summary, weights(root / MODEL)


def overwrite_4kb(path):
    with open(path, "r+b") as handle:
        handle.seek(path.stat().st_size // 2)
        handle.write(bytes(4096))


def truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flip_a_weight(path):
    """One bit of a tensor's bytes: torch.load reads it without complaint, as another weight."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        member = max((m for m in archive.infolist() if "/data/" in m.filename), key=lambda m: m.file_size)
    start = member.header_offset + 30 + len(member.filename) + len(member.extra)
    flip(path, start + member.file_size // 2, 4)


def a_copy(trained, tmp_path):
    import shutil

    root = trained[0]
    shutil.copytree(root / "results", tmp_path / "results")
    return tmp_path / CHECKPOINT


@pytest.mark.parametrize("damage", [overwrite_4kb, truncate, flip_a_weight],
                         ids=["4 KB overwritten", "truncated", "a bit of a weight"])
@pytest.mark.parametrize("with_sidecar", [True, False], ids=["with its sha256", "written before sidecars"])
def test_a_damaged_checkpoint_is_set_aside_and_the_model_rebuilt_is_the_right_one(trained, tmp_path, damage,
                                                                                   with_sidecar):
    _, clean, right = trained
    checkpoint = a_copy(trained, tmp_path)
    assert build(tmp_path)["resumed_from"] == 10  # a rebuild (--forcerun) of a finished run resumes its end
    damage(checkpoint)
    if not with_sidecar:
        sidecar(checkpoint).unlink()
    with pytest.warns(DamagedCheckpointWarning) as caught:
        summary = build(tmp_path)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(f"{checkpoint}: ") and message.endswith(
        "set aside as state.pt.damaged; run NB/nope/seed0 starts again from step 0")
    assert summary["resumed_from"] is None and summary["history"] == clean["history"]
    assert same_weights(weights(tmp_path / MODEL), right)  # trained again: the right numbers
    assert (checkpoint.parent / "state.pt.damaged").exists() and sidecar(checkpoint).exists()
    assert build(tmp_path)["resumed_from"] == 10  # the new checkpoint verifies


def test_a_full_disk_at_a_checkpoint_save_names_the_file_and_keeps_the_last_checkpoint(trained, tmp_path,
                                                                                       monkeypatch):
    from lengthgen.engine import run as engine

    real_save = torch.save
    checkpoint = tmp_path / CHECKPOINT

    def full_after_some_bytes(state, handle):
        handle.write(b"PK\x03\x04" + bytes(1000))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def torch_error(state, handle):
        raise RuntimeError("PytorchStreamWriter failed writing file data/3: file write failed")

    for fail, reason in ((full_after_some_bytes, "no space left on device"),
                         (torch_error, "RuntimeError: PytorchStreamWriter failed writing file data/3: file write failed")):
        saves = []

        def save(state, handle, saves=saves, fail=fail):
            saves.append(state["step"])
            return real_save(state, handle) if len(saves) == 1 else fail(state, handle)  # step 5 saved, step 10 not

        monkeypatch.setattr(engine.torch, "save", save)
        with pytest.raises(WriteFailed) as failure:
            build(tmp_path)
        assert saves == [5, 10]
        assert str(failure.value) == f"{checkpoint}: cannot be written ({reason}): {engine.SAVE_REMEDY}"
        assert sorted(p.name for p in checkpoint.parent.iterdir()) == ["state.pt", "state.pt.sha256"]  # no temporary
        monkeypatch.undo()
        summary = build(tmp_path)  # the job rerun once there is space: it resumes from step 5
        assert summary["resumed_from"] == 5 and same_weights(weights(tmp_path / MODEL), trained[2])
        checkpoint.unlink()


def test_a_full_disk_at_a_checkpoint_save_is_one_line_from_a_job(tmp_path):
    script = (
        "import errno, os, sys, json\n"
        "from types import SimpleNamespace\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "from lengthgen.runtime import start_job\n"
        "start_job(SimpleNamespace(log=[], output=[], threads=1))\n"
        "import torch\n"
        "def full(*a, **k):\n"
        "    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
        "torch.save = full\n"
        "from test_faults_disk import build\n"
        "from pathlib import Path\n"
        "build(Path(sys.argv[1]))\n")
    tests = os.path.dirname(__file__)
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path), tests], capture_output=True, text=True,
                         timeout=300, cwd=tests)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith(f"lengthgen: {tmp_path / CHECKPOINT}: cannot be written (no space left on device)")


# -- (b) a large local model's identity follows every byte ---------------------------------------------

def test_a_large_model_file_changed_in_its_middle_gets_a_new_identity(tmp_path, monkeypatch):
    monkeypatch.setattr(storage, "WHOLE_FILE_LIMIT", 4096)  # "large": over 4 KB here, over 64 MB in use
    monkeypatch.setenv(storage.HASH_CACHE_ENV, str(tmp_path / "hashes.json"))
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    weights_file = model / "model.safetensors"
    weights_file.write_bytes(bytes(range(256)) * 64 * 5)  # 80 KB, its first and last 32 KB never touched
    before = storage.directory_fingerprint(model)
    hashed = []
    real = storage.sha256_of
    monkeypatch.setattr(storage, "sha256_of", lambda p, *a: hashed.append(p) or real(p, *a))
    assert storage.directory_fingerprint(model) == before and hashed == []  # from the hash cache: a stat
    stat = weights_file.stat()
    flip(weights_file, stat.st_size // 2)
    assert storage.directory_fingerprint(model) != before and hashed == [weights_file]
    flip(weights_file, stat.st_size // 2)
    os.utime(weights_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # size and mtime as before the change
    assert storage.directory_fingerprint(model) == before  # the same bytes: the same model
    entries = json.loads((tmp_path / "hashes.json").read_text())
    assert len(entries) == 1 and list(entries.values()) == [real(weights_file)]  # one entry per file


def test_changed_bytes_with_size_and_mtime_restored_are_still_seen(tmp_path, monkeypatch):
    monkeypatch.setattr(storage, "WHOLE_FILE_LIMIT", 4096)
    monkeypatch.setenv(storage.HASH_CACHE_ENV, str(tmp_path / "hashes.json"))
    model = tmp_path / "model"
    model.mkdir()
    weights_file = model / "model.safetensors"
    weights_file.write_bytes(bytes(80_000))
    before = storage.directory_fingerprint(model)
    stat = weights_file.stat()
    flip(weights_file, 40_000)
    os.utime(weights_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # a copy tool keeping times
    assert storage.directory_fingerprint(model) != before  # the change time (ctime) gives it away


def test_a_small_models_identity_is_unchanged(repo):
    """Files under the limit are hashed in whole, as before: no prediction cache key changed."""
    assert storage.directory_fingerprint(repo / "resources" / "embedded" / "gpt2") == "5a97f6b11fc4d5b4"


# -- lengthgen verify finds each ---------------------------------------------------------------------------

def test_verify_finds_a_flipped_table_and_damaged_checkpoints(trained, tmp_path):
    checkpoint = a_copy(trained, tmp_path)
    table = a_table(tmp_path)
    old = a_table(tmp_path, "results/tables/old.parquet")
    sidecar(old).unlink()  # written before tables carried a sidecar
    text, status = report(verify_project(tmp_path))
    assert status == 0, text
    assert "unverified results: 1 parquet file(s) without a .sha256" in text.replace(str(tmp_path) + "/", "")

    offset = next(iter(data_pages(table)))
    flip(table, offset + 10)
    overwrite_4kb(checkpoint)
    other = tmp_path / "results/checkpoints/finetune/m/NB/seed0/state.pt"
    other.parent.mkdir(parents=True)
    other.write_bytes(checkpoint.read_bytes()[:1000])  # truncated, without a sidecar
    found = {f.path: f for f in verify_project(tmp_path)}
    assert found[str(table)].kind == "damaged" and found[str(table)].target == TABLE
    assert found[str(table)].problem == "differs from the sha256 in scratch.parquet.sha256, written with it"
    for path in (checkpoint, other):
        assert found[str(path)].kind == "checkpoint" and "starts again from step 0" in found[str(path)].problem
    assert found[str(checkpoint)].problem.startswith("differs from the sha256 in state.pt.sha256")
    text, status = report(list(found.values()))
    assert status == 1 and "not made by this workflow" not in text
    assert text.splitlines()[-1] == f"rebuild: snakemake --forcerun {TABLE}"


def test_verify_does_not_flag_a_sidecar_for_a_removed_file(tmp_path):
    table = a_table(tmp_path)
    table.unlink()  # Snakemake removed a failed job's output; its sidecar stays until the rule writes again
    assert verify_project(tmp_path) == []
    assert files.sidecar_of(table).exists()


# -- another output's file copied in, sidecar and all ----------------------------------------------------

UB_DATA, UF_DATA = "results/data/tokens/UB/26-32/seed0.parquet", "results/data/tokens/UF/26-32/seed0.parquet"


def a_data_file(root, path=UB_DATA):
    rows = 10
    table = pa.table({"encoding": ["tokens"] * rows, "task": ["UB"] * rows, "bin": ["26-32"] * rows,
                      "seed": [0] * rows, "input": ["a b c"] * rows})
    write_parquet(table, root / path, {"seed": 0})
    return root / path


def copy_with_sidecar(source, target):
    import shutil

    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    shutil.copy(sidecar(source), sidecar(target))


def test_another_tasks_data_file_copied_with_its_sidecar_is_refused_and_verify_names_it(tmp_path):
    copy_with_sidecar(a_data_file(tmp_path), tmp_path / UF_DATA)
    with pytest.raises(DamagedFile, match=f"was written at {UB_DATA}"):
        read_table(tmp_path / UF_DATA)
    found = {f.path: f for f in verify_project(tmp_path)}
    assert list(found) == [str(tmp_path / UF_DATA)]
    assert found[str(tmp_path / UF_DATA)].target == UF_DATA
    assert report(list(found.values()))[0].splitlines()[-1] == f"rebuild: snakemake --forcerun {UF_DATA}"
    # A sidecar written before it noted the place: the rows' task still gives the copy away.
    note = sidecar(tmp_path / UF_DATA)
    note.write_text("".join(line for line in note.read_text().splitlines(keepends=True) if "written at" not in line))
    found = verify_project(tmp_path)
    assert [f.path for f in found] == [str(tmp_path / UF_DATA)]
    assert found[0].problem == "holds data of task UB, but is read as UF tokens/26-32 seed 0 data"


def test_another_models_table_copied_with_its_sidecar_is_named(tmp_path):
    """Same file name, another model's folder: the sidecar's `SHA256  NAME` line matches; its place does not."""
    written, copied = "results/icl/gpt2/copy.parquet", "results/icl/smollm2/copy.parquet"
    copy_with_sidecar(a_table(tmp_path, written), tmp_path / copied)
    found = verify_project(tmp_path)
    assert [(f.path, f.problem, f.target) for f in found] == [
        (str(tmp_path / copied), f"was written at {written} (another output's file, copied here)", copied)]


def test_another_tasks_model_copied_with_its_manifest_is_refused_and_verify_names_it(trained, tmp_path):
    import shutil

    root = trained[0]
    copy = tmp_path / "results/scratch/NR/nope/seed0/model"
    shutil.copytree(root / MODEL, copy)
    assert storage.verify_model_directory(root / MODEL)
    with pytest.raises(DamagedFile, match=f"was written at {MODEL}"):
        storage.verify_model_directory(copy)
    found = verify_project(tmp_path)
    assert [(f.kind, f.path, f.target) for f in found] == [("damaged", str(copy), "results/scratch/NR/nope/seed0/model")]
    # The manifest stays what `sha256sum -c` checks: the note is a comment it skips.
    check = subprocess.run(["sha256sum", "-c", "manifest.sha256"], cwd=root / MODEL, capture_output=True, text=True)
    assert check.returncode == 0 and check.stderr == "", check.stderr
