# kglm: `make test` and `make demo` install missing Debian packages, configure, build and run.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build references test check demo bench install dist cuda12 gpu-kit-sm70 sanitize sanitize-build fuzz gpu-kit clean

# Each phase of `make test` and `make sanitize` appends its wall time to BUILD_DIR/phase-times.tsv
# (cmake/phase.sh); each ctest pass writes BUILD_DIR/ctest-junit.xml. tests/ci_times.py prints
# them (.ci/run does at its end): the CI budget in tests/README.md.
phase = cmake/phase.sh $(CURDIR)/$(1)/phase-times.tsv

all: build

deps:
	@cmake/install-deps.sh

# A failed configure leaves its cache behind: remove it, so that the next make configures again.
$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) || { rm -f $@; exit 1; }

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The field's own implementations as test oracles (transformers, sentence-transformers, seqeval,
# scikit-learn, sacrebleu, WikiExtractor), pinned in tests/references/requirements.txt, in a
# virtual environment over Debian's python3-torch; the tests labelled `references` use it.
# Where they cannot be installed (no network, no PyPI), the tests labelled `references` skip, saying so.
references:
	@cmake/references.sh $(BUILD)/references-venv || \
	  echo "kglm: the reference packages could not be installed: the tests labelled 'references' will skip" >&2

# The reference environment installs (downloads, unpacking: little CPU) while the build compiles.
test: configure
	@$(call phase,$(BUILD)) "make test: build + references" $(MAKE) --no-print-directory -j 2 build references
	@$(call phase,$(BUILD)) "make test: ctest" sh -c \
	  'cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --output-junit ctest-junit.xml'

# The fast loop while working: the unit tests (GoogleTest, labels unit and nn_ops) and the reliability matrix
# of every tool and the fault-injection cases (cli_bad_input, cli_faults: label policy), under 5 minutes after a build.
check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L "unit|nn_ops|policy"

demo: build
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin pipelines/demo.sh out/demo

# The peers: Debian's python3-torch and the reference environment, and in $(BUILD)/bench-venv the
# strongest ones (current torch with torch.compile, ONNX Runtime, CTranslate2: bench/peers/). Each
# benchmark also runs alone; bench/peak.py measures the machine's GEMM peak that they report against.
bench: build references
	cmake/bench-peers.sh $(BUILD)/bench-venv
	bench/peak.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/wd-extract.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/wiki-extract.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/cs-gen.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/kg-cycles.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/kg-align.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/kg-align-ner.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/sample-lang.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/pretrain-cpu.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/elmo-cpu.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/probe.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/embed-cpu.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/finetune-cpu.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/verbalize.py
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/scale.py --sizes 20000,200000
	KGLM_BIN=$(CURDIR)/$(BUILD)/bin bench/tensorboard.py

# The GPU kit: tools, GPU test binaries, their libraries, mpirun, scripts and fixtures in one archive
# for a lent GPU machine (tests/gpu/README.md): $(BUILD)/gpu-kit/kglm-gpu-kit.tar.xz.
gpu-kit: build
	tests/gpu/pack.sh --build $(BUILD)

# make install PREFIX=/opt/kglm/VERSION: a relocatable tree with an Lmod modulefile (man 7 kglm,
# INSTALLATION); without PREFIX, CMake's install prefix.
install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

# The source tarball the EasyBuild easyconfigs and the Spack package build from (packaging/):
# BUILD/kglm-VERSION.tar.gz of the committed tree.
VERSION = $(shell awk '/^project.kglm VERSION/ {print $$3}' CMakeLists.txt)
dist:
	@mkdir -p $(BUILD)
	git archive --prefix=kglm-$(VERSION)/ -o $(BUILD)/kglm-$(VERSION).tar.gz HEAD
	@echo "$(BUILD)/kglm-$(VERSION).tar.gz"

# V100 (sm_70), which CUDA 13 cannot build: CUDA 12 from PyPI's wheels, compiled by clang-19
# (cmake/cuda12.sh assembles the toolkit in BUILD/cuda12-toolkit); every tool and test for sm_70 and
# compute_70 PTX in BUILD/sm70. `make test` checks it (ctest cuda12); `make gpu-kit-sm70` packs the
# GPU kit with its stage (tests/gpu/README.md).
CUDA12_TOOLKIT = $(abspath $(BUILD))/cuda12-toolkit
cuda12: deps
	cmake/cuda12.sh $(CUDA12_TOOLKIT)
	cmake -S . -B $(BUILD)/sm70 -DCMAKE_BUILD_TYPE=Release -DKGLM_CUDA=ON -DKGLM_CUDA_ARCHS=70 \
	  -DCMAKE_CUDA_COMPILER=clang++-19 -DCUDAToolkit_ROOT=$(CUDA12_TOOLKIT) $(CMAKE_FLAGS)
	cmake --build $(BUILD)/sm70 -j $(JOBS)

gpu-kit-sm70: build cuda12
	tests/gpu/pack.sh --build $(BUILD) --sm70 $(BUILD)/sm70

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer, on the CPU backend: the
# sanitizers instrument host code only, the CUDA kernels are built and tested by `make test`, and
# ASan's shadow memory collides with the CUDA driver's address reservations on GPU machines. The
# Slurm tests (label slurm) and pipeline_papers check the pipelines' orchestration, not the tools,
# and run in `make test`; so do verbalize_quality and install_tree (the demo), which train small models for
# minutes (cli_verbalize and cli_bad_input run the same tools sanitized), the packaging recipes
# (label install: EasyBuild and Spack, no tool runs) and the reference comparisons (label
# references: numbers against the field's own code). Built -O0 with line tables
# only (-g1): optimisation can only remove checked accesses, so -O0 misses nothing -O1 finds (ASan
# advises -O1 for run time), and the build, most of this pass's time, takes 40% less (measured on
# six of the heaviest files; tests/README.md, the budget).
# SANITIZE_SKIP adds labels to leave out: CI passes `fixtures` (the fixture-scale runs of the same
# code stay in `make test`). `make sanitize-build` builds without testing.
SANITIZE_SKIP ?=
SANITIZE_BUILD = build-asan
sanitize-build:
	@cmake/install-deps.sh
	@$(call phase,$(SANITIZE_BUILD)) "make sanitize: configure + build" sh -c '\
	  cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKGLM_SANITIZE=ON -DKGLM_CUDA=OFF \
	    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" && \
	  cmake --build $(SANITIZE_BUILD) -j $(JOBS)'

sanitize: sanitize-build
	@$(call phase,$(SANITIZE_BUILD)) "make sanitize: ctest" sh -c 'cd $(SANITIZE_BUILD) && \
	  ctest --output-on-failure -j $(JOBS) --output-junit ctest-junit.xml \
	    -LE "slurm|references|install$(if $(SANITIZE_SKIP),|$(SANITIZE_SKIP))" -E "pipeline_papers|install_tree|verbalize_quality|cli_cpu_bf16"'

# libFuzzer targets (clang); run e.g. build-fuzz/tests/fuzz_entity_parser tests/fuzz/corpus or
# build-fuzz/tests/fuzz_wikitext tests/fuzz/wikitext-corpus or build-fuzz/tests/fuzz_dates_numbers tests/fuzz/dates-corpus
# or build-fuzz/tests/fuzz_sample_records tests/fuzz/sample-corpus
# or build-fuzz/tests/fuzz_safetensors tests/fuzz/safetensors-corpus
# or build-fuzz/tests/fuzz_torch_checkpoint tests/fuzz/torch-corpus
# or build-fuzz/tests/fuzz_input_policy tests/fuzz/input-corpus
# or build-fuzz/tests/fuzz_probe_inputs tests/fuzz/probe-corpus
# or build-fuzz/tests/fuzz_verbalizer_inputs tests/fuzz/verbalize-corpus
# or build-fuzz/tests/fuzz_elmo_files tests/fuzz/elmo-corpus or build-fuzz/tests/fuzz_conllu tests/fuzz/conllu-corpus
# or build-fuzz/tests/fuzz_sentence_tsv tests/fuzz/tsv-corpus or build-fuzz/tests/fuzz_task_readers tests/fuzz/task-corpus
fuzz:
	@cmake/install-deps.sh clang-14 libfuzzer-14-dev
	CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKGLM_FUZZ=ON
	cmake --build build-fuzz -j $(JOBS) --target fuzz_entity_parser fuzz_wikitext fuzz_dates_numbers fuzz_sample_records \
		fuzz_safetensors fuzz_torch_checkpoint fuzz_input_policy fuzz_tagged_reader fuzz_conllu fuzz_sentence_tsv fuzz_task_readers fuzz_probe_inputs fuzz_verbalizer_inputs \
		fuzz_elmo_files

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) build-fuzz out
