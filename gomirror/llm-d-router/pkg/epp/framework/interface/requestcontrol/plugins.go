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

import (
	"context"

	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	fwksched "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
)

// Extension points of the request-control layer, in the order the director runs them.
const (
	RequestHeaderExtensionPoint     = "RequestHeader"
	ScreenerExtensionPoint          = "Screener"
	AdmissionExtensionPoint         = "Admission"
	DataProducerExtensionPoint      = "DataProducer"
	PreRequestExtensionPoint        = "PreRequest"
	ResponseReceivedExtensionPoint  = "ResponseReceived"
	ResponseStreamingExtensionPoint = "ResponseStreaming"
	ResponseCompleteExtensionPoint  = "ResponseComplete"
)

// RequestHeaderProcessor runs after the InferenceRequest is built, before admission.
type RequestHeaderProcessor interface {
	plugin.Plugin
	RequestHeader(ctx context.Context, request *fwksched.InferenceRequest) error
}

// Screener pre-filters located endpoints; the framework intersects all screeners' results.
type Screener interface {
	plugin.Plugin
	Screen(ctx context.Context, request *fwksched.InferenceRequest, endpoints []fwksched.Endpoint) []fwksched.Endpoint
}

// DataProducer produces per-request data before admission and scheduling.
type DataProducer interface {
	plugin.ProducerPlugin
	Produce(ctx context.Context, request *fwksched.InferenceRequest, pods []fwksched.Endpoint) error
}

// Admitter decides whether a request is admitted. A non-nil error rejects it;
// every admitter must admit. Return a pkg/common/error.Error (e.g. Code
// ResourceExhausted) so the director maps the rejection to an HTTP status.
type Admitter interface {
	plugin.Plugin
	Admit(ctx context.Context, request *fwksched.InferenceRequest, pods []fwksched.Endpoint) error
}

// PreRequest runs after scheduling, before the request is sent to the picked endpoint.
type PreRequest interface {
	plugin.Plugin
	PreRequest(ctx context.Context, request *fwksched.InferenceRequest, schedulingResult *fwksched.SchedulingResult) error
}

// ResponseHeaderProcessor runs when the response headers arrive.
type ResponseHeaderProcessor interface {
	plugin.Plugin
	ResponseHeader(ctx context.Context, request *fwksched.InferenceRequest, response *Response, targetEndpoint *datalayer.EndpointMetadata)
}

// ResponseBodyProcessor runs per response chunk (once for non-streaming responses).
type ResponseBodyProcessor interface {
	plugin.Plugin
	ResponseBody(ctx context.Context, request *fwksched.InferenceRequest, response *Response, targetEndpoint *datalayer.EndpointMetadata)
}
