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

// Package concurrency holds the per-endpoint in-flight load attribute inflight-load-producer writes.
package concurrency

import (
	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	inflightloadconstants "github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/requestcontrol/dataproducer/inflightload/constants"
)

// InFlightLoadDataKey carries the per-endpoint in-flight load, written at the start of every
// scheduling cycle: requests and tokens this EPP dispatched to the endpoint and not yet completed.
var InFlightLoadDataKey = plugin.NewDataKey("InFlightLoadDataKey", inflightloadconstants.InFlightLoadProducerType)

// UncachedRequestTokensDataKey carries the projected impact of the current request on an endpoint.
var UncachedRequestTokensDataKey = plugin.NewDataKey("UncachedRequestTokensDataKey", inflightloadconstants.InFlightLoadProducerType)

// InFlightLoad is an endpoint's real-time load as tracked by the EPP (PreRequest to end of stream).
type InFlightLoad struct {
	Tokens   int64
	Requests int64
}

// Clone returns an independent copy.
func (l *InFlightLoad) Clone() fwkdl.Cloneable {
	if l == nil {
		return nil
	}
	cp := *l
	return &cp
}

// UncachedRequestTokens is the work the current request would add to an endpoint.
type UncachedRequestTokens struct {
	Tokens int64
}

// Clone returns an independent copy.
func (u *UncachedRequestTokens) Clone() fwkdl.Cloneable {
	if u == nil {
		return nil
	}
	cp := *u
	return &cp
}
