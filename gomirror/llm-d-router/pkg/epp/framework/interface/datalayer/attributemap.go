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

import "sync"

// Cloneable values can be stored in an AttributeMap.
type Cloneable interface {
	Clone() Cloneable
}

// AttributeMap holds per-endpoint attributes produced by data-producer plugins.
// At v0.10.0 keys are strings (a DataKey's String()); main after v0.10.0 keys by DataKey (#2190).
type AttributeMap interface {
	Put(string, Cloneable)
	Get(string) (Cloneable, bool)
	Keys() []string
	Clone() AttributeMap
}

// Attributes is a goroutine-safe AttributeMap.
type Attributes struct {
	data sync.Map
}

// NewAttributes returns an empty AttributeMap.
func NewAttributes() AttributeMap {
	return &Attributes{}
}

// Put adds or replaces the attribute stored under key; nil values are ignored.
func (a *Attributes) Put(key string, value Cloneable) {
	if value != nil {
		a.data.Store(key, value)
	}
}

// Get returns a clone of the attribute stored under key.
func (a *Attributes) Get(key string) (Cloneable, bool) {
	val, ok := a.data.Load(key)
	if !ok {
		return nil, false
	}
	if c, ok := val.(Cloneable); ok {
		return c.Clone(), true
	}
	return nil, false
}

// Keys returns every key, in no particular order.
func (a *Attributes) Keys() []string {
	var keys []string
	a.data.Range(func(key, _ any) bool {
		if k, ok := key.(string); ok {
			keys = append(keys, k)
		}
		return true
	})
	return keys
}

// Clone returns a copy holding the same attributes.
func (a *Attributes) Clone() AttributeMap {
	clone := NewAttributes()
	a.data.Range(func(key, value any) bool {
		k, kok := key.(string)
		v, vok := value.(Cloneable)
		if kok && vok {
			clone.Put(k, v)
		}
		return true
	})
	return clone
}
