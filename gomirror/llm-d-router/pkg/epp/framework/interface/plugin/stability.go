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

// StabilityLevel is the maturity a plugin type is registered with.
type StabilityLevel string

const (
	// StabilityAlpha marks an experimental plugin; the EPP refuses it unless
	// started with --allow-experimental-plugins.
	StabilityAlpha StabilityLevel = "Alpha"
	// StabilityBeta marks a feature-complete plugin under the deprecation policy.
	StabilityBeta StabilityLevel = "Beta"
	// StabilityStable marks a production plugin with backwards-compatibility guarantees.
	StabilityStable StabilityLevel = "Stable"
)

// PluginMetadata records the stability and lifecycle of a registered plugin type.
type PluginMetadata struct {
	Type               string
	Stability          StabilityLevel
	Deprecated         bool
	DeprecatedIn       string
	ScheduledRemovalIn string
	ReplacementType    string
}
