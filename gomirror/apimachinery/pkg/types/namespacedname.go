/*
Copyright 2015 The Kubernetes Authors.

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

// Package types mirrors the one type of k8s.io/apimachinery/pkg/types that
// llm-d-router plugins use: NamespacedName, the identity of an endpoint.
package types

// Separator is the character NamespacedName.String puts between namespace and name.
const Separator = '/'

// NamespacedName comprises a resource name, with a mandatory namespace,
// rendered as "<namespace>/<name>".
type NamespacedName struct {
	Namespace string
	Name      string
}

// String returns the general purpose string representation.
func (n NamespacedName) String() string {
	return n.Namespace + string(Separator) + n.Name
}
