# Entry points; the real build is CMake (CMakeLists.txt). Every target
# installs the Debian packages it needs first (as root) and works on a fresh
# Debian 12 machine.

BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 600
PREFIX ?= /usr/local

.PHONY: all build demo test fuzz bench check-exact install clean

all: build

build:
	@scripts/install-deps.sh build
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCONCORD_TESTS=OFF >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@echo "== concord solve examples/data/alignment.fg"
	@$(BUILD)/concord solve examples/data/alignment.fg

test:
	@scripts/install-deps.sh test
	@cmake -S . -B $(BUILD)-test -DCMAKE_BUILD_TYPE=Release -DCONCORD_TESTS=ON -DCONCORD_WERROR=ON >/dev/null
	@cmake --build $(BUILD)-test -j $(JOBS)
	@scripts/fuzz.sh $(BUILD)-test 60
	@cd $(BUILD)-test && ctest --output-on-failure -j $(JOBS)
	@CONCORD_LIB=$(abspath $(BUILD)-test)/libconcord.so PYTHONDONTWRITEBYTECODE=1 \
		/usr/bin/python3 -m pytest tests/python -q -p no:cacheprovider

fuzz:
	@scripts/install-deps.sh test
	@cmake -S . -B $(BUILD)-test -DCMAKE_BUILD_TYPE=Release -DCONCORD_TESTS=ON -DCONCORD_WERROR=ON >/dev/null
	@cmake --build $(BUILD)-test -j $(JOBS)
	@scripts/fuzz.sh $(BUILD)-test $(FUZZ_SECONDS)

# Every benchmark, one after the other (figures in docs/performance.md).
bench: build
	@for b in bench_ad3 bench_uai bench_read bench_sparse bench_oracles_trees bench_oracles_sequence \
		bench_memory bench_dual; do echo "== $$b"; $(BUILD)/$$b || exit 1; done

# Exact MAP against toulbar2 (and AD3's --exact when AD3_MULTI names its
# ad3_multi) on every shared instance, 60-second limits, 3 runs each: about
# half an hour (figures in docs/performance.md).
check-exact: build
	@scripts/install-deps.sh check-exact
	@$(BUILD)/bench_exact ../shared/data 3 60

# The header, the libraries, the executable, pkg-config and CMake package
# files under PREFIX (default /usr/local).
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(BUILD)-test
