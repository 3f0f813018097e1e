/*
Copyright 2025 The Kubernetes Authors.
Copyright 2026 The llm-d Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// MIRROR of llm-d-router v0.10.0 (71f4f09) for offline compile/test; see gomirror/llm-d-router/README.md.

// Package server mirrors the one identifier of pkg/epp/server that cmd/epp/runner/runner.go's mirror uses; the
// real package (options, controller manager, ext-proc server runner) is absent. It exists so that the mirror's
// runner.go can import it under upstream's alias (runserver), the line a promotion's runner.go hunk has as context.
package server

const (
	// DefaultPoolNamespace is the pool namespace used when none is given (the CLI flag's default is empty).
	DefaultPoolNamespace = "default"
)
