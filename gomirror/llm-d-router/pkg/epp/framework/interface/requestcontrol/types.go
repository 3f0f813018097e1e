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

package requestcontrol

// Response carries what response plugins see (mirror: the identifying and stream fields only).
type Response struct {
	// RequestID is the Envoy-generated request id.
	RequestID string
	// Headers are the response headers; nil during body processing.
	Headers map[string]string
	// StartOfStream marks the call carrying the first chunk.
	StartOfStream bool
	// EndOfStream marks the final call for the request.
	EndOfStream bool
}
