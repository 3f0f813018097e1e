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

// Package agentidentity mirrors the registration surface of upstream's agent-identity plugin (PluginType,
// Parameters, PluginFactory): its Register call is the last line of v0.10.0's registerInTreePlugins(), the
// context of every promotion's registration hunk. Upstream it is a RequestHeaderProcessor that copies a session
// header into a request attribute; the mirror's InferenceRequest has no attributes, so the plugin here does nothing.
package agentidentity

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
)

const (
	// PluginType is the registered plugin type.
	PluginType = "agent-identity"
	// ClaudeCodeSessionHeader, OpenCodeSessionHeader, CodexSessionHeader and CodexSessionHeaderLegacy are the
	// built-in session headers, in priority order.
	ClaudeCodeSessionHeader  = "x-claude-code-session-id"
	OpenCodeSessionHeader    = "x-session-affinity"
	CodexSessionHeader       = "session-id"
	CodexSessionHeaderLegacy = "session_id"
)

var defaultPriorityHeaders = []string{
	ClaudeCodeSessionHeader,
	OpenCodeSessionHeader,
	CodexSessionHeader,
	CodexSessionHeaderLegacy,
}

// Parameters is the user-facing plugin configuration block.
type Parameters struct {
	// AdditionalSessionHeaders is prepended to the built-in default list.
	AdditionalSessionHeaders []string `json:"additionalSessionHeaders,omitempty"`
}

// PluginFactory is the factory function for the agent identity plugin.
func PluginFactory(name string, rawParameters *json.Decoder, _ plugin.Handle) (plugin.Plugin, error) {
	var params Parameters
	if rawParameters != nil {
		if err := rawParameters.Decode(&params); err != nil {
			return nil, fmt.Errorf("agent-identity: failed to decode parameters: %w", err)
		}
	}
	return &Plugin{
		typedName:       plugin.TypedName{Type: PluginType, Name: name},
		priorityHeaders: mergeHeaders(params.AdditionalSessionHeaders, defaultPriorityHeaders),
	}, nil
}

// mergeHeaders returns extras followed by defaults, lowercased.
func mergeHeaders(extras, defaults []string) []string {
	merged := make([]string, 0, len(extras)+len(defaults))
	for _, h := range extras {
		merged = append(merged, strings.ToLower(h))
	}
	for _, h := range defaults {
		merged = append(merged, strings.ToLower(h))
	}
	return merged
}

// Plugin is the agent-identity plugin (mirror: its header processing is absent).
type Plugin struct {
	typedName       plugin.TypedName
	priorityHeaders []string
}

// TypedName returns the type and name of the plugin instance.
func (p *Plugin) TypedName() plugin.TypedName {
	return p.typedName
}
