# Reef: `make demo` runs the examples and the tour, `make test` runs the tests, `make sanitize` runs the BSON and store
# tests under AddressSanitizer and ThreadSanitizer. All install what is missing first.
SHELL := /bin/bash
SWIFT ?= swift
SHARED ?= $(abspath ../shared)
export BSON_CORPUS_DIR ?= $(SHARED)/bson-corpus
export REEF_SHARED_DIR ?= $(SHARED)
APT_PACKAGES := libbson-dev liblmdb-dev libpcre2-dev zlib1g-dev pkg-config
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps build test sanitize demo bench lint clean

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

# The unsafe corners checked by machines (STYLE.md): the BSON suites (Codable included) and the
# store suites (the crash test's writer processes included, 50 kills instead of 200: each round
# takes about 2.5 s under ASan) under AddressSanitizer, and the same suites but the crash test
# under ThreadSanitizer (Swift Testing runs the tests in parallel, so the Codable pools and the
# store's locks are raced too; the crash test's children are single-threaded processes, and its
# 300 kills would take most of CI's time). Each sanitizer builds in a folder of its own. Tests
# read REEF_SANITIZER to print why they skip what cannot run under a sanitizer. The suppression
# files in .ci say why each entry is there. The parallel stream scan's suite runs under both too:
# its workers share chunks, a queue and the source; so do the object layer's notification suites
# (the store's change feed is read by a thread of its own, and the stress test runs a writer and
# three readers, each with its Reef), the collection notifications, the freeze and async-sequence
# suites (frozen Reefs read from several threads), and the confinement and async-write suites
# (queues, actors, and a thread of Reef's waiting for the write lock).
SANITIZE_SUITES := ^(ReefBSONTests\.|ReefStoreTests\.|ReefQueryTests\.ParallelStreamScanTests|ReefSwiftTests\.(NotificationTests|CollectionDiffTests|LiveDataStressTests|CollectionNotificationTests|FreezeTests|AsyncChangesTests|ConfinementTests|AsyncWriteTests|ActorObservationTests|CollectionQueueTests|DeliveryEdgeCaseTests|RunLoopDeliveryTests))
sanitize: deps
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	REEF_SANITIZER=address REEF_CRASH_KILLS=50 LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp \
	  $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan --filter '$(SANITIZE_SUITES)'
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	REEF_SANITIZER=thread TSAN_OPTIONS=suppressions=$(CURDIR)/.ci/tsan.supp \
	  $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --filter '$(SANITIZE_SUITES)' \
	  --skip CrashSafetyTests

# `swift build` builds every executable of the package (the `reef` tool and the examples), so
# whatever demo.sh runs is built here, on a fresh clone too; demo.sh checks that each is there.
demo: deps
	$(SWIFT) build
	./Examples/demo.sh "$$($(SWIFT) build --show-bin-path)"

bench: deps
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark

lint:
	$(SWIFT) format lint --recursive --strict Sources Tests Examples

clean:
	rm -rf .build .build-asan .build-tsan
