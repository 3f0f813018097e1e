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

package datalayer

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/types"
)

// EndpointMetadata describes an inference endpoint.
type EndpointMetadata struct {
	// ID is the endpoint's identity (named NamespacedName before #2147).
	ID   types.NamespacedName
	Name string
	// Address is the endpoint's IP address.
	Address string
	// NodeAddress is the IP of the node hosting the pod; empty outside Kubernetes.
	NodeAddress string
	Port        string
	// MetricsHost is "ip:port" of the metrics endpoint.
	MetricsHost string
	Labels      map[string]string
	// RankIndex is the endpoint's position in the pool's TargetPorts.
	RankIndex int
}

// String returns all fields, for logs.
func (epm *EndpointMetadata) String() string {
	if epm == nil {
		return ""
	}
	return fmt.Sprintf("%+v", *epm)
}

// Clone returns a deep copy, or nil for nil.
func (epm *EndpointMetadata) Clone() *EndpointMetadata {
	if epm == nil {
		return nil
	}
	labels := make(map[string]string, len(epm.Labels))
	maps.Copy(labels, epm.Labels)
	return &EndpointMetadata{
		ID:          types.NamespacedName{Namespace: epm.ID.Namespace, Name: epm.ID.Name},
		Name:        epm.Name,
		Address:     epm.Address,
		NodeAddress: epm.NodeAddress,
		Port:        epm.Port,
		MetricsHost: epm.MetricsHost,
		Labels:      labels,
		RankIndex:   epm.RankIndex,
	}
}
