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
	"bytes"
	"encoding/json"
)

// FactoryFunc instantiates a plugin named name from its config parameters.
// parameters is a strict decoder (DisallowUnknownFields) over the raw
// parameters, or nil when the config gives none.
type FactoryFunc func(name string, parameters *json.Decoder, handle Handle) (Plugin, error)

// ConfigParserFunc parses the parameters of a plugin that depends on other plugins.
type ConfigParserFunc func(parameters *json.Decoder, handle Handle) (any, error)

// StrictDecoder returns a DisallowUnknownFields decoder over raw, or nil when raw is empty.
func StrictDecoder(raw json.RawMessage) *json.Decoder {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec
}

// Register records the factory and stability level of a plugin type.
func Register(pluginType string, stability StabilityLevel, factory FactoryFunc) {
	Registry[pluginType] = factory
	RegistryMetadata[pluginType] = PluginMetadata{Type: pluginType, Stability: stability}
}

// RegisterAsDefaultProducer registers a plugin type and makes it the default producer of key.
func RegisterAsDefaultProducer(pluginType string, stability StabilityLevel, factory FactoryFunc, key DataKey) {
	Register(pluginType, stability, factory)
	DefaultProducerRegistry[key.String()] = pluginType
}

// RegisterWithPluginDependencies registers a plugin type whose parameters reference other plugins.
func RegisterWithPluginDependencies(pluginType string, stability StabilityLevel, factory FactoryFunc, parser ConfigParserFunc) {
	Register(pluginType, stability, factory)
	PluginsWithPluginDependencies[pluginType] = parser
}

// Registry maps a plugin type to its factory.
var Registry = map[string]FactoryFunc{}

// RegistryMetadata maps a plugin type to its stability metadata.
var RegistryMetadata = map[string]PluginMetadata{}

// DefaultProducerRegistry maps a serialized data key to its default producer's type.
var DefaultProducerRegistry = map[string]string{}

// PluginsWithPluginDependencies maps a plugin type to the parser of its dependencies.
var PluginsWithPluginDependencies = map[string]ConfigParserFunc{}
