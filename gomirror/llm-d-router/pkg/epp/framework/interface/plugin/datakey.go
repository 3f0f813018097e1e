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

// DataKey identifies a piece of data exchanged between a producer and its consumers.
type DataKey struct {
	dataType     string
	producerName string
}

// NewDataKey creates a DataKey whose producer is defaultProducerName until overridden.
func NewDataKey(dataType, defaultProducerName string) DataKey {
	return DataKey{dataType: dataType, producerName: defaultProducerName}
}

// WithNonEmptyProducerName returns a copy of the key naming producer name, unless name is empty.
func (dk DataKey) WithNonEmptyProducerName(name string) DataKey {
	if name != "" {
		dk.producerName = name
	}
	return dk
}

// String serializes the key as "dataType/producerName".
// (Upstream formats it with fmt.Sprintf; the same string concatenated, because the promotion harness
// calls it for every endpoint of thousands of sampled states.)
func (dk DataKey) String() string {
	return dk.dataType + "/" + dk.producerName
}
