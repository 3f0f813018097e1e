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

package plugin

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Handle gives plugins the EPP context and access to the other plugin instances.
type Handle interface {
	// Context returns a context the plugins can use.
	Context() context.Context

	HandlePlugins

	// PodList lists the endpoints' names; nil when no pod source is configured.
	PodList() []types.NamespacedName
}

// HandlePlugins works with the instantiated plugins.
type HandlePlugins interface {
	// Plugin returns the named plugin instance, or nil.
	Plugin(name string) Plugin
	// AddPlugin adds a plugin instance under name.
	AddPlugin(name string, plugin Plugin)
	// GetAllPlugins returns every plugin instance.
	GetAllPlugins() []Plugin
	// GetAllPluginsWithNames returns every plugin instance by name.
	GetAllPluginsWithNames() map[string]Plugin
}

// PodListFunc lists the endpoints' names.
type PodListFunc func() []types.NamespacedName

// HandleOption configures a handle built by NewEppHandle.
type HandleOption func(*eppHandle)

type eppHandle struct {
	ctx context.Context
	HandlePlugins
	podList PodListFunc
}

func (h *eppHandle) Context() context.Context { return h.ctx }

func (h *eppHandle) PodList() []types.NamespacedName {
	if h.podList == nil {
		return nil
	}
	return h.podList()
}

type eppHandlePlugins struct {
	plugins map[string]Plugin
}

func (h *eppHandlePlugins) Plugin(name string) Plugin { return h.plugins[name] }

func (h *eppHandlePlugins) AddPlugin(name string, plugin Plugin) { h.plugins[name] = plugin }

func (h *eppHandlePlugins) GetAllPlugins() []Plugin {
	result := make([]Plugin, 0, len(h.plugins))
	for _, p := range h.plugins {
		result = append(result, p)
	}
	return result
}

func (h *eppHandlePlugins) GetAllPluginsWithNames() map[string]Plugin { return h.plugins }

// NewEppHandle builds a Handle; podList may be nil.
func NewEppHandle(ctx context.Context, podList PodListFunc, opts ...HandleOption) Handle {
	h := &eppHandle{
		ctx:           ctx,
		HandlePlugins: &eppHandlePlugins{plugins: map[string]Plugin{}},
		podList:       podList,
	}
	for _, opt := range opts {
		opt(h)
	}
	return h
}

// PluginByType returns the plugin instance called name, checked to be a P.
func PluginByType[P Plugin](handlePlugins HandlePlugins, name string) (P, error) {
	var zero P
	raw := handlePlugins.Plugin(name)
	if raw == nil {
		return zero, fmt.Errorf("there is no plugin with the name '%s' defined", name)
	}
	p, ok := raw.(P)
	if !ok {
		return zero, fmt.Errorf("the plugin with the name '%s' is not an instance of %T", name, zero)
	}
	return p, nil
}
