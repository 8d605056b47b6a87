# The two set-up commands of the README: `make demo` (the main job) and
# `make test` (what CI runs). Both install what they need first.
GO ?= go
# pipefail: `go test -json | testsummary` fails when go test fails.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
BIN := bin/ndb

.PHONY: deps build demo test dap-e2e mcp-e2e gguf-e2e vsce-package bench

deps:
	./scripts/install-deps.sh

build: deps
	$(GO) build -o $(BIN) ./cmd/ndb

# The main job: debug the example program with pdb's commands, on the real
# engine (the tracer) and on the embedded neural model, side by side.
demo: build
	./scripts/demo.sh $(BIN)

# Vet, a pure-Go (no cgo) build, every test (summed up by scripts/testsummary:
# failures, each skipped test with its reason, counts), then `ndb dap` driven by
# @vscode/debugadapter-testsupport (npm) on the real and model engines, ndb mcp
# driven by the TypeScript MCP SDK client (npm) over stdio and HTTP, the
# embedded model exported to GGUF and checked in llama.cpp (node-llama-cpp, npm),
# and the VS Code extension packaged with vsce (out/vsix/, an artifact).
test: deps
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...
	$(GO) test -count=1 -timeout 45m -json ./... | $(GO) run ./scripts/testsummary
	GO=$(GO) ./scripts/dap-e2e.sh
	GO=$(GO) ./scripts/mcp-e2e.sh
	GO=$(GO) ./scripts/gguf-e2e.sh
	./scripts/vsce-package.sh

# The DAP end-to-end test alone (docs/dap.md, Tests).
dap-e2e: deps
	GO=$(GO) ./scripts/dap-e2e.sh

# ndb mcp driven by the official TypeScript SDK client (npm), stdio and HTTP (docs/mcp.md).
mcp-e2e: deps
	GO=$(GO) ./scripts/mcp-e2e.sh

# The GGUF round trip in llama.cpp alone (docs/interop.md).
gguf-e2e: deps
	GO=$(GO) ./scripts/gguf-e2e.sh

# The VS Code extension, tested and packaged: out/vsix/ndb-debug-*.vsix (docs/dap.md).
vsce-package:
	./scripts/vsce-package.sh

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x ./tracer/ ./model/nn/
