/*
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

// Package utils holds the helpers upstream plugin unit tests use.
package utils

import (
	"context"
	"testing"

	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
)

// NewTestContext returns a context carrying a logr test logger that writes through t.
func NewTestContext(t *testing.T) context.Context {
	t.Helper()
	return log.IntoContext(context.Background(), testr.New(t))
}

type testHandle struct {
	ctx context.Context
	plugin.HandlePlugins
}

func (h *testHandle) Context() context.Context { return h.ctx }

func (h *testHandle) PodList() []types.NamespacedName { return []types.NamespacedName{} }

type testHandlePlugins struct {
	plugins map[string]plugin.Plugin
}

func (h *testHandlePlugins) Plugin(name string) plugin.Plugin { return h.plugins[name] }

func (h *testHandlePlugins) AddPlugin(name string, p plugin.Plugin) { h.plugins[name] = p }

func (h *testHandlePlugins) GetAllPlugins() []plugin.Plugin {
	result := make([]plugin.Plugin, 0, len(h.plugins))
	for _, p := range h.plugins {
		result = append(result, p)
	}
	return result
}

func (h *testHandlePlugins) GetAllPluginsWithNames() map[string]plugin.Plugin { return h.plugins }

// NewTestHandle returns a plugin.Handle with no plugins and an empty pod list.
func NewTestHandle(ctx context.Context) plugin.Handle {
	return &testHandle{ctx: ctx, HandlePlugins: &testHandlePlugins{plugins: map[string]plugin.Plugin{}}}
}
