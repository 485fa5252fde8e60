# Reef: `make demo` runs the tour, `make test` runs the tests. Both install what is missing first.
SHELL := /bin/bash
SWIFT ?= swift
SHARED ?= $(abspath ../shared)
export BSON_CORPUS_DIR ?= $(SHARED)/bson-corpus
export REEF_SHARED_DIR ?= $(SHARED)
APT_PACKAGES := libbson-dev liblmdb-dev zlib1g-dev pkg-config
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build test demo bench lint clean

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

test: deps lint
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: deps
	$(SWIFT) build --product reef
	./Examples/demo.sh "$$($(SWIFT) build --show-bin-path)/reef"

bench: deps
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark

lint:
	$(SWIFT) format lint --recursive --strict Sources Tests Examples

clean:
	rm -rf .build
