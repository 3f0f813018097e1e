/*
Copyright 2018 The Kubernetes Authors.

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

// MIRROR of sigs.k8s.io/controller-runtime/pkg/log (v0.23.3, the version llm-d-router v0.10.0 requires),
// reduced to the context helpers plugins call. See gomirror/controller-runtime/PROVENANCE.md.

// Package log carries a logr.Logger in a context, as controller-runtime does.
package log

import (
	"context"

	"github.com/go-logr/logr"
)

// Log is the package-level logger used when a context carries none (a no-op until SetLogger).
var Log = logr.Discard()

// SetLogger sets the package-level logger.
func SetLogger(l logr.Logger) {
	Log = l
}

// FromContext returns the logger in ctx (or Log), with the given key/value pairs attached.
func FromContext(ctx context.Context, keysAndValues ...any) logr.Logger {
	l := Log
	if ctx != nil {
		if fromCtx, err := logr.FromContext(ctx); err == nil {
			l = fromCtx
		}
	}
	return l.WithValues(keysAndValues...)
}

// IntoContext returns a copy of ctx that carries the logger.
func IntoContext(ctx context.Context, l logr.Logger) context.Context {
	return logr.NewContext(ctx, l)
}
