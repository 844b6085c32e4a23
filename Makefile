# Oficina. `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
PKGS ?= ./...
TEST_TIMEOUT ?= 8m

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  make %-10s %s\n", $$1, $$2}'

.PHONY: pg
pg: ## start the local PostgreSQL cluster when nothing answers on 127.0.0.1:5432
	@ops/scripts/pg-up.sh

.PHONY: build
build: ## build the oficina binary into ./bin/oficina (the docs' `oficina …` commands: events tail, admin, receive)
	$(GO) build -o bin/oficina ./cmd/oficina

# run starts the built binary, not `go run`: interrupted, `go run` exits 1
# even when the program shut down cleanly, and make then reports an error.
.PHONY: run
run: pg build ## run everything in one process (embedded NATS, migrations, demo data, its API key); OFICINA_* variables pass through
	./bin/oficina dev --seed

# The contract checks (docs/contract.md) run Node.js tools pinned in ops/proving/contract.
CONTRACT := ops/proving/contract

.PHONY: test
test: pg node-tools ## run every test (real PostgreSQL, embedded JetStream, real HTTP, the contract checks); prints the contract counts
	@set -uo pipefail; report=$$(mktemp -d); trap 'rm -rf "$$report"' EXIT; \
	OFICINA_CONTRACT_REPORT=$$report $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS); rc=$$?; \
	echo; cat "$$report"/*.txt 2>/dev/null || true; exit $$rc

.PHONY: contract
contract: pg node-tools ## the contract checks alone: linter, generated client, answers of the API tests
	@set -uo pipefail; report=$$(mktemp -d); trap 'rm -rf "$$report"' EXIT; \
	OFICINA_CONTRACT_REPORT=$$report $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./$(CONTRACT)/... ./http/... ./dispatch/...; rc=$$?; \
	echo; cat "$$report"/*.txt 2>/dev/null || true; exit $$rc

.PHONY: node-tools
node-tools: ## install the pinned Node.js tools (npm ci in ops/proving/contract) when absent or older than the lockfile
	@set -euo pipefail; installed=$(CONTRACT)/node_modules/.package-lock.json; \
	if ! command -v npm >/dev/null 2>&1; then \
	  if [ -n "$${CI:-}" ]; then echo "node-tools: npm not found; CI needs Node.js >= 20.19 and npm" >&2; exit 1; fi; \
	  echo "node-tools: npm not found: the linter and generated-client checks will be skipped"; \
	elif [ ! -f $$installed ] || [ $(CONTRACT)/package-lock.json -nt $$installed ] || [ $(CONTRACT)/package.json -nt $$installed ]; then \
	  echo "cd $(CONTRACT) && npm ci"; (cd $(CONTRACT) && npm ci --no-audit --no-fund); \
	fi

.PHONY: test-race
test-race: pg ## every test under the race detector
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

.PHONY: bench
bench: pg ## quiet ceilings first, then every scenario, medians of 3 (BENCH_SECONDS per run, default 10; ~25 min); writes var/bench/latest.json
	$(GO) run ./cmd/oficina bench

.PHONY: bench-table
bench-table: ## write docs/performance.md's table (and docs/performance.json) from var/bench/latest.json
	$(GO) run ./cmd/oficina bench -table

.PHONY: chaos
chaos: pg ## kill -9 and restart every part under load; nothing lost (CHAOS_DURATION, default 3m; CHAOS_SEED)
	CHAOS_DURATION=$${CHAOS_DURATION:-3m} $(GO) test -count=1 -timeout 30m -run TestChaosNothingLost -v ./ops/proving/chaos

.PHONY: fuzz
fuzz: pg ## run every fuzz target for FUZZTIME each (default 10s)
	@ops/scripts/fuzz.sh

.PHONY: lint
lint: ## gofmt, go vet and staticcheck (pinned in go.mod as a tool: 0 findings)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

.PHONY: generate
generate: ## regenerate error constants and docs/errors.md from the catalogue, the OpenAPI document and its Go client
	$(GO) generate ./...
	$(MAKE) openapi

.PHONY: openapi
openapi: ## write docs/openapi.json from the routes, and the Go client generated from it (http/apiclient)
	$(GO) run ./cmd/oficina openapi > docs/openapi.json
	$(GO) generate ./http/apiclient

.PHONY: portal-screenshots
portal-screenshots: pg ## drive the portal in headless Chromium and write its screenshots to docs/portal (docs/portal.md)
	OFICINA_PORTAL_SCREENSHOTS=$(CURDIR)/docs/portal $(GO) test -count=1 -run TestPortalInARealBrowser ./http/portal

.PHONY: hostile
hostile: pg ## hostile input against a fresh `oficina dev` on spare ports (database oficina_hostile)
	@set -euo pipefail; dir=$$(mktemp -d); pid=; \
	trap 'if [ -n "$$pid" ]; then kill $$pid 2>/dev/null || true; wait $$pid 2>/dev/null || true; fi; rm -rf $$dir' EXIT; \
	$(GO) build -o $$dir/oficina ./cmd/oficina; \
	export OFICINA_ADMIN_TOKEN=hostile-$$(od -An -N24 -tx1 /dev/urandom | tr -d " \n") OFICINA_DATA_DIR=$$dir; \
	DATABASE_URL=$${HOSTILE_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/oficina_hostile?sslmode=disable} \
	OFICINA_HTTP_ADDR=127.0.0.1:0 OFICINA_ADMIN_ADDR=127.0.0.1:0 OFICINA_NATS_PORT=-1 OFICINA_LOG_LEVEL=warn \
	OFICINA_ALLOW_PRIVATE_DESTINATIONS=127.0.0.1/32 $$dir/oficina dev >$$dir/out 2>$$dir/log & pid=$$!; \
	for _ in $$(seq 1 120); do grep -q '^admin API' $$dir/out && break; kill -0 $$pid 2>/dev/null || { tail -n 40 $$dir/log; exit 1; }; sleep 0.5; done; \
	pub=$$(sed -n 's#^public API  *\(http://[^/ ]*\)/public/v1.*#\1#p' $$dir/out); \
	adm=$$(sed -n 's#^admin API  *\(http://[^/ ]*\)/admin/v1.*#\1#p' $$dir/out); \
	echo "hostile: oficina dev at $$pub (admin $$adm)"; \
	$$dir/oficina hostile -url $$pub -admin-url $$adm || { echo "server log (last 40 lines):"; tail -n 40 $$dir/log; exit 1; }

.PHONY: docs-ui
docs-ui: ## refresh the embedded /docs viewer from the npm registry (pin in http/docsui/docsui.go)
	@set -euo pipefail; v=$$(sed -n 's/.*PinnedRedoc *= *"\(.*\)"/\1/p' http/docsui/docsui.go); dir=$$(mktemp -d); \
	trap 'rm -rf $$dir' EXIT; (cd $$dir && npm pack --silent $$v >/dev/null && tar xzf *.tgz); \
	cp $$dir/package/bundles/redoc.standalone.js $$dir/package/bundles/redoc.standalone.js.LICENSE.txt http/docsui/assets/; \
	cp $$dir/package/LICENSE http/docsui/assets/REDOC-LICENSE; \
	echo "$$v: sha256 $$(sha256sum http/docsui/assets/redoc.standalone.js | cut -d' ' -f1) (set PinnedRedocSHA256)"
