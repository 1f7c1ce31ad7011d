"""Pretrain the embedded character model of a preset on a machine without Snakemake or polars
(the GPU machine), and write what shipping it needs: the Hugging Face directory and a JSON summary
(the training history with the induction probe at every evaluation, the final probe's head rows,
the corpus hash, the device).

Run: `python bench/gpu_pretrain.py configs/pretrain_gpu.yaml OUT_DIR` (bench/gpu_session.sh does).
The same section as the workflow's pretrain rule (`lengthgen.config.pretrain_section`); with
Snakemake, `snakemake --configfile PRESET` makes the same model.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import yaml

from lengthgen.config import pretrain_section, validate_config
from lengthgen.mechanism.probe import probe_rows
from lengthgen.pretrain.train import pretrain
from lengthgen.settings import PretrainSettings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("preset")
    parser.add_argument("out", type=Path)
    parser.add_argument("--architecture", default=None, help="default: the preset's first")
    parser.add_argument("--corpus", default="natural", help="the corpus variant (pretrain/variants.py)")
    parser.add_argument("--steps", type=int, default=None, help="override max_steps (a quick check)")
    parser.add_argument("--corpus-chars", type=int, default=None, help="override corpus_chars (a quick check)")
    parser.add_argument("--batch-size", type=int, default=None, help="override the batch size (a quick check on a CPU)")
    args = parser.parse_args(argv)
    with open(args.preset) as handle:
        config = validate_config(yaml.safe_load(handle), check_availability=False)
    section = pretrain_section(config, args.architecture or config["pretrain"]["architectures"][0],
                               args.corpus).as_config()
    if args.steps is not None:
        section["training"] = {**section["training"], "max_steps": args.steps}
    if args.batch_size is not None:
        section["training"] = {**section["training"], "batch_size": args.batch_size}
    if args.corpus_chars is not None:
        section["corpus_chars"] = args.corpus_chars
    model_dir = args.out / "model"
    started = time.perf_counter()
    summary = pretrain(PretrainSettings.from_config(section), model_dir, checkpoint_dir=None, progress=False)
    seconds = time.perf_counter() - started
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    rows, accuracy = probe_rows(model, AutoTokenizer.from_pretrained(model_dir), section["probe_length"])
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    record = {"preset": args.preset, "section": section, "seconds": round(seconds, 1), "device": device,
              "torch": torch.__version__, **summary, "probe": rows, **accuracy}
    (args.out / "summary.json").write_text(json.dumps(record, indent=1))
    print(json.dumps({k: record[k] for k in ("seconds", "device", "steps", "tokens_seen", "corpus_hash",
                                             "best_accuracy", "forward_copy_accuracy", "backward_copy_accuracy")}))


if __name__ == "__main__":
    main()
