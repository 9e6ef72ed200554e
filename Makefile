# Entry points; the real build is CMake (CMakeLists.txt). Every target
# installs the Debian packages it needs first (as root) and works on a fresh
# Debian 12 machine.

BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 600
PREFIX ?= /usr/local
VENV ?= .venv

.PHONY: all build python demo test fuzz bench plots check-exact check-random install clean

# configure,DIR,OPTIONS: CMake with the Ninja generator (the test build's
# ninety-odd programs build in 67 s, against 84 s with Makefiles); a
# directory another generator configured is configured afresh.
configure = grep -qsx 'CMAKE_GENERATOR:INTERNAL=Ninja' $(1)/CMakeCache.txt || \
	rm -rf $(1)/CMakeCache.txt $(1)/CMakeFiles; \
	cmake -G Ninja -S . -B $(1) -DCMAKE_BUILD_TYPE=Release $(2) >/dev/null

all: build

# The build's log is shown only when it fails ($(BUILD)/build.log).
build:
	@scripts/install-deps.sh build
	@$(call configure,$(BUILD),-DCONCORD_TESTS=OFF)
	@echo "building the library, the command-line tool, the examples and the benchmarks"
	@cmake --build $(BUILD) -j $(JOBS) >$(BUILD)/build.log 2>&1 || { cat $(BUILD)/build.log; exit 1; }
	@echo "built (the log, with any compiler warnings: $(BUILD)/build.log)"

# The Python package, built by pip from the same C sources into a virtual
# environment over Debian's python3 (whose numpy, torch and matplotlib it
# sees); rebuilt only when a source changed.
PYTHON_SOURCES := setup.py setup.cfg pyproject.toml $(wildcard include/*.h src/*.[ch] \
	src/*/*.[ch] python/concord/*.py python/concord/*/*.py python/concord/*/*/*.py \
	python/concord/*.pyx python/concord/*.pxd)

python:
	@scripts/install-deps.sh python
	@$(MAKE) -s --no-print-directory $(VENV)/.installed

$(VENV)/.installed: $(PYTHON_SOURCES)
	@echo "building the Python package into $(VENV)"
	@test -x $(VENV)/bin/python || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	@$(VENV)/bin/pip install --no-build-isolation --no-deps --disable-pip-version-check . \
		>$(VENV)/pip.log 2>&1 || { cat $(VENV)/pip.log; exit 1; }
	@touch $@

demo: build python
	@scripts/demo.sh $(BUILD) $(VENV)

# The build's log is shown only when it fails (with -Werror, a warning
# fails it); the three fuzzers run for 3 s each, only when the sources changed
# since their last passing run (make fuzz fuzzes for FUZZ_SECONDS), beside
# the Python package's build, a single compiler process that leaves a core
# idle; the last line is the overall tally.
test:
	@scripts/install-deps.sh test
	@$(call configure,$(BUILD)-test,-DCONCORD_TESTS=ON -DCONCORD_WERROR=ON)
	@echo "building the library, the tests and their sanitized twins"
	@cmake --build $(BUILD)-test -j $(JOBS) >$(BUILD)-test/build.log 2>&1 || \
		{ cat $(BUILD)-test/build.log; exit 1; }
	@scripts/fuzz.sh $(BUILD)-test 10 --if-changed & fuzzing=$$!; \
		$(MAKE) -s --no-print-directory $(VENV)/.installed; built=$$?; \
		wait $$fuzzing && [ $$built -eq 0 ]
	@scripts/run-tests.sh $(BUILD)-test $(VENV)

fuzz:
	@scripts/install-deps.sh test
	@$(call configure,$(BUILD)-test,-DCONCORD_TESTS=ON -DCONCORD_WERROR=ON)
	@cmake --build $(BUILD)-test -j $(JOBS)
	@scripts/fuzz.sh $(BUILD)-test $(FUZZ_SECONDS)

# Every benchmark, one after the other (figures in docs/performance.md);
# what each prints is also saved in $(RESULTS), which `make plots` draws.
RESULTS = $(BUILD)/bench-results
bench: build python
	@mkdir -p $(RESULTS)
	@for b in bench_ad3 bench_uai bench_read bench_sparse bench_oracles_trees bench_oracles_sequence \
		bench_memory bench_dual bench_structured; do echo "== $$b"; $(BUILD)/$$b >$(RESULTS)/$$b.txt || exit 1; \
		cat $(RESULTS)/$$b.txt; done
	@echo "== python_overhead"; $(VENV)/bin/python bench/python_overhead.py $(BUILD)/bench_lp_matching \
		>$(RESULTS)/python_overhead.txt && cat $(RESULTS)/python_overhead.txt
	@for b in python_batch python_memory python_lpsmap_torch python_calls python_forbidden mixture_convergence potts_edges \
		sparse_weights; do \
		echo "== $$b"; \
		$(VENV)/bin/python bench/$$b.py >$(RESULTS)/$$b.txt || exit 1; cat $(RESULTS)/$$b.txt; done

# The figures of docs/performance.md, from the outputs `make bench` saved
# (and $(RESULTS)/ad3_inproc.txt, the AD3 anchor's output, when present).
plots:
	@$(VENV)/bin/python bench/plots.py $(RESULTS) docs/img

# Exact MAP against toulbar2 (and AD3's --exact when AD3_MULTI names its
# ad3_multi) on every shared instance, 60-second limits, 3 runs each: about
# half an hour (figures in docs/performance.md).
check-exact: build
	@scripts/install-deps.sh check-exact
	@$(BUILD)/bench_exact ../shared/data 3 60

# test_lp_random on SEED_COUNT other draws of its random graphs, from
# FIRST_SEED on (about 3 s a seed, two at a time).
FIRST_SEED ?= 1000
SEED_COUNT ?= 100
check-random:
	@scripts/install-deps.sh test
	@$(call configure,$(BUILD)-test,-DCONCORD_TESTS=ON -DCONCORD_WERROR=ON)
	@cmake --build $(BUILD)-test -j $(JOBS) --target test_lp_random >/dev/null
	@scripts/check-random.sh $(BUILD)-test $(FIRST_SEED) $(SEED_COUNT)

# The header, the libraries, the executable, pkg-config and CMake package
# files under PREFIX (default /usr/local).
# As root, ldconfig then updates the loader's cache (for PREFIX=/usr/local).
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)
	@if [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

clean:
	rm -rf $(BUILD) $(BUILD)-test build-python $(VENV)
