# Set-up and everyday commands. `make app` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
APT_GET := $(shell [ "$$(id -u)" = 0 ] && echo apt-get || echo sudo apt-get)
PORT ?= 8501
# The app listens on this machine only; APP_HOST=0.0.0.0 opens it to the network (see the README).
APP_HOST ?= 127.0.0.1

.PHONY: app test bench lint system-packages clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Debian's Chromium for the browser tests (Playwright cannot download its own browser here),
# LibreOffice Calc, headless, which recalculates exported workbooks in the formula tests, and
# PostgreSQL, whose server the scenario library's tests start in a temporary folder.
system-packages:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v soffice >/dev/null 2>&1 || missing="$$missing libreoffice-calc-nogui"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	if [ -n "$$missing" ]; then $(APT_GET) update -qq && $(APT_GET) install -y -qq $$missing; fi

app: $(STAMP)
	$(VENV)/bin/streamlit run app.py --server.headless=true --server.port=$(PORT) --server.address=$(APP_HOST)

test: $(STAMP) system-packages
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/bench_engine.py
	$(PY) benchmarks/bench_irr.py
	$(PY) benchmarks/bench_batch.py
	$(PY) benchmarks/bench_simulator.py
	$(PY) benchmarks/bench_app.py
	$(PY) benchmarks/bench_cold.py
	$(PY) benchmarks/bench_startup.py
	$(PY) scripts/benchmarks_doc.py

lint: $(STAMP)
	$(VENV)/bin/ruff check econ tests benchmarks app.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
