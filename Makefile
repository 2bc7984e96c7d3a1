# The two quick-start commands are `make demo` and `make test`; everything else here serves them.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
EXTRAS ?= test,docker,spark,bench
STAMP  := $(VENV)/.installed-$(shell echo '$(EXTRAS)' | tr ',' '-')
CLUSTERS_DIR ?= run/clusters

.PHONY: test chaos unit lint typecheck kafka spark-kafka clusters clusters-down demo bench clean \
	test-tools container-tools image test-containers

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	@touch $@

## kafka: fetch the pinned Apache Kafka jars with mvn into .cache/ (idempotent; offline once cached),
## and the older releases the migration tests start as source clusters
kafka: $(STAMP)
	$(PY) -m pyconnect.testing.kafka fetch
	$(PY) -m pyconnect.testing.kafka fetch --versions 3.9.1,2.8.2

## spark-kafka: fetch Spark's Kafka source jars with mvn into .cache/ (idempotent; offline once cached)
spark-kafka: $(STAMP)
	$(PY) -m spark_analytics.packages fetch

## test: the whole suite, unit and integration, against two real local Kafka clusters; tests marked
## `long` (each has a short version that runs here) are left to `make chaos`. The pure tests run beside
## the Kafka ones under nice (tests/streams.py)
test: kafka spark-kafka image test-tools
	$(PY) -m tests.streams -m "not long"

## chaos: the long runs only (faults, scale, many rounds); bounded, tens of minutes
chaos: kafka spark-kafka image test-tools
	$(PY) -m pytest -m long

## test-tools: the Debian parts the tests use as a user would, when missing: Prometheus and promtool
## (the /metrics exposition is checked and scraped, alert rules fire), chromium (pages are opened
## headless and screenshotted)
test-tools:
	@.ci/debian-packages promtool:prometheus prometheus:prometheus chromium:chromium

## container-tools: podman, buildah, mmdebstrap and runc from Debian when missing (podman reads the
## project's deploy/image/containers.conf through CONTAINERS_CONF; nothing under /etc changes)
container-tools:
	@.ci/debian-packages podman:podman buildah:buildah mmdebstrap:mmdebstrap runc:runc \
	  newuidmap:uidmap strip:binutils

## image: the pyconnect image and the Java (Apache Kafka) image it is measured against, both on a Debian
## base made by mmdebstrap (pyconnect/testing/images.py); each is rebuilt only when one of its inputs changed
image: kafka container-tools
	$(PY) -m pyconnect.testing.images build all

## test-containers: podman's Docker API socket, the images, and a slice of the suite (mirror, checkpoints,
## fleet, REST) with the test clusters in containers through testcontainers
TEST_CONTAINERS_SLICE := tests/integration/test_mirror_source.py tests/integration/test_mirror_checkpoint.py \
	tests/integration/test_distributed_fleet.py tests/integration/test_rest_adversarial.py \
	tests/integration/test_testcontainers_backend.py
PODMAN_SOCKET := unix:///run/pyconnect-podman/podman.sock
test-containers: image
	$(PY) -m pyconnect.testing.podman up
	status=0; \
	PYCONNECT_TEST_BACKEND=testcontainers TESTCONTAINERS_RYUK_DISABLED=true DOCKER_HOST=$(PODMAN_SOCKET) \
	  $(PY) -m pytest -m "not long" $(TEST_CONTAINERS_SLICE) || status=$$?; \
	DOCKER_HOST=$(PODMAN_SOCKET) $(PY) -m pytest tests/integration/test_testcontainers_backend.py || status=$$?; \
	$(PY) -m pyconnect.testing.podman down; exit $$status

## unit: only the tests that need no Kafka
unit: $(STAMP)
	$(PY) -m pytest tests/unit tests/golden

## lint: ruff and mypy
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

## clusters: start local clusters A and B in $(CLUSTERS_DIR) and leave them running
clusters: kafka
	$(PY) -m pyconnect.testing.kafka up --clusters A,B --dir $(CLUSTERS_DIR)

clusters-down:
	$(PY) -m pyconnect.testing.kafka down --dir $(CLUSTERS_DIR)

## demo: mirror a live topic from local cluster A to B with a three-worker fleet (Ctrl-C stops)
demo: kafka
	$(PY) -m pyconnect.testing.demo

## bench: pyconnect beside Java MirrorMaker 2 on two local clusters; results in benchmarks/results/<date>/
## (`$(PY) -m benchmarks --quick --out DIR` runs a small version in a few minutes)
bench: kafka spark-kafka
	$(PY) -m pip install -q -e '.[bench,spark]'
	$(PY) -m benchmarks --out benchmarks/results/$$(date -u +%Y-%m-%d)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache run
