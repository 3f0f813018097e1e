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

// Package error is the EPP's error type: an Error's Code maps to the HTTP status
// returned to the client (the mirror omits the Envoy response builder).
// Import it as errcommon "github.com/llm-d/llm-d-router/pkg/common/error".
package error

import "fmt"

// Error is an error returned by the EPP; Code is one of the constants below.
type Error struct {
	Code string
	Msg  string
	// Headers are set on the error response.
	Headers map[string]string
}

// Canonical error codes.
const (
	Unknown            = "Unknown"
	BadRequest         = "BadRequest"
	Unauthorized       = "Unauthorized"
	Forbidden          = "Forbidden"
	NotFound           = "NotFound"
	PreconditionFailed = "PreconditionFailed"
	Internal           = "Internal"
	ServiceUnavailable = "ServiceUnavailable"
	ModelServerError   = "ModelServerError"
	ResourceExhausted  = "ResourceExhausted"
)

// Error returns "inference error: <code> - <msg>".
func (e Error) Error() string {
	return fmt.Sprintf("inference error: %s - %s", e.Code, e.Msg)
}

// CanonicalCode returns err's Code, or Unknown when err is not an Error.
func CanonicalCode(err error) string {
	if e, ok := err.(Error); ok {
		return e.Code
	}
	return Unknown
}
