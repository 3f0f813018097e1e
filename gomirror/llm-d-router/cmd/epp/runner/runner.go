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

// Package runner mirrors the part of cmd/epp/runner that plugin promotions edit: the import block and
// registerInTreePlugins, where every in-tree plugin type is registered (the queue/kv-cache scorer and agent-identity
// lines are upstream's v0.10.0 lines, at Beta/Alpha as upstream registers them). A promotion's registration is
// compiled here; the upstream patch's runner.go hunk is cut against v0.10.0's own runner.go (gomirror/upstream/).
package runner

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/log"

	fwkplugin "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/requestcontrol/requestheader/agentidentity"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/scheduling/scorer/kvcacheutilization"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/scheduling/scorer/queuedepth"
	"github.com/llm-d/llm-d-router/pkg/epp/scheduling"
	runserver "github.com/llm-d/llm-d-router/pkg/epp/server"
	"github.com/llm-d/llm-d-router/version"
)

var (
	setupLog = log.Log.WithName("setup")
)

// Runner starts the EPP (mirror: it only registers plugins).
type Runner struct {
	schedulerConfig *scheduling.SchedulerConfig
}

// NewRunner returns a Runner.
func NewRunner() *Runner {
	return &Runner{}
}

// WithSchedulerConfig sets the scheduler configuration.
func (r *Runner) WithSchedulerConfig(schedulerConfig *scheduling.SchedulerConfig) *Runner {
	r.schedulerConfig = schedulerConfig
	return r
}

// Run registers the in-tree plugins; upstream then starts the EPP servers.
func (r *Runner) Run(_ context.Context) error {
	setupLog.Info("epp build", "commit-sha", version.CommitSHA, "build-ref", version.BuildRef, "pool-namespace", resolvePoolNamespace(""))
	r.registerInTreePlugins()
	return nil
}

// resolvePoolNamespace returns the pool namespace: the given one, else the default (upstream also reads $NAMESPACE).
func resolvePoolNamespace(poolNamespace string) string {
	if poolNamespace != "" {
		return poolNamespace
	}
	return runserver.DefaultPoolNamespace
}

// registerInTreePlugins registers the factory functions of all known plugins
func (r *Runner) registerInTreePlugins() {
	// scheduling & profile handler plugins
	// Beta
	fwkplugin.Register(kvcacheutilization.KvCacheUtilizationScorerType, fwkplugin.StabilityBeta, kvcacheutilization.KvCacheUtilizationScorerFactory)
	fwkplugin.Register(queuedepth.QueueScorerType, fwkplugin.StabilityBeta, queuedepth.QueueScorerFactory)

	// register request header processor plugins
	// Alpha
	fwkplugin.Register(agentidentity.PluginType, fwkplugin.StabilityAlpha, agentidentity.PluginFactory)
}
