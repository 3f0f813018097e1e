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

// Package runner mirrors the part of cmd/epp/runner that plugin promotions edit:
// registerInTreePlugins, where every in-tree plugin type is registered.
package runner

import (
	"context"

	fwkplugin "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/scheduling/scorer/kvcacheutilization"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/scheduling/scorer/queuedepth"
)

// Runner starts the EPP (mirror: it only registers plugins).
type Runner struct{}

// NewRunner returns a Runner.
func NewRunner() *Runner {
	return &Runner{}
}

// Run registers the in-tree plugins; upstream then starts the EPP servers.
func (r *Runner) Run(_ context.Context) error {
	r.registerInTreePlugins()
	return nil
}

// registerInTreePlugins registers the factory functions of all known plugins.
func (r *Runner) registerInTreePlugins() {
	fwkplugin.Register(kvcacheutilization.KvCacheUtilizationScorerType, fwkplugin.StabilityStable, kvcacheutilization.KvCacheUtilizationScorerFactory)
	fwkplugin.Register(queuedepth.QueueScorerType, fwkplugin.StabilityStable, queuedepth.QueueScorerFactory)
}
