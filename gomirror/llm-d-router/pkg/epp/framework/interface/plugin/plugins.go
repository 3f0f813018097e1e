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

// Plugin is embedded by every extension-point interface.
type Plugin interface {
	// TypedName returns the type and name tuple of this plugin instance.
	TypedName() TypedName
}

// DataDependencies lists the data keys a consumer needs (Required) or can use (Optional),
// each mapped to a zero value of the data's type.
type DataDependencies struct {
	Required map[DataKey]any
	Optional map[DataKey]any
}

// ConsumerPlugin is implemented by plugins that read data produced by other plugins.
type ConsumerPlugin interface {
	Plugin
	Consumes() DataDependencies
}

// ProducerPlugin is implemented by plugins that publish data for other plugins.
type ProducerPlugin interface {
	Plugin
	Produces() map[DataKey]any
}

// ReadinessChecker is implemented by plugins that must be ready before the EPP serves traffic.
type ReadinessChecker interface {
	CheckReady() error
}
