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

// Package prefix is the prefix-cache-scorer: the fraction of the prompt's blocks an endpoint holds.
package prefix

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"sigs.k8s.io/controller-runtime/pkg/log"

	logutil "github.com/llm-d/llm-d-router/pkg/common/observability/logging"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	fwksched "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
	attrprefix "github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/datalayer/attribute/prefix"
)

// Config is the prefix-cache-scorer's configuration.
type Config struct {
	PrefixMatchInfoProducerName string  `json:"prefixMatchInfoProducerName,omitempty"`
	MatchLengthWeight           float64 `json:"matchLengthWeight,omitempty"`
	MatchLengthScaleTokens      int     `json:"matchLengthScaleTokens,omitempty"`
}

// Plugin scores endpoints by their prefix-cache match.
type Plugin struct {
	typedName              plugin.TypedName
	prefixMatchDataKey     plugin.DataKey
	matchLengthWeight      float64
	matchLengthScaleTokens int
}

var _ fwksched.Scorer = &Plugin{}

const (
	// PrefixCacheScorerPluginType is the plugin type.
	PrefixCacheScorerPluginType   = "prefix-cache-scorer"
	defaultMatchLengthWeight      = 0.0
	defaultMatchLengthScaleTokens = 8192
)

// PrefixCachePluginFactory builds the scorer from its configuration.
func PrefixCachePluginFactory(name string, decoder *json.Decoder, handle plugin.Handle) (plugin.Plugin, error) {
	cfg := Config{MatchLengthWeight: defaultMatchLengthWeight, MatchLengthScaleTokens: defaultMatchLengthScaleTokens}
	if decoder != nil {
		if err := decoder.Decode(&cfg); err != nil {
			return nil, fmt.Errorf("failed to decode prefix cache scorer parameters: %w", err)
		}
	}
	var ctx context.Context
	if handle != nil {
		ctx = handle.Context()
	}
	p, err := New(ctx, name, cfg.PrefixMatchInfoProducerName)
	if err != nil {
		return nil, err
	}
	if cfg.MatchLengthWeight < 0.0 || cfg.MatchLengthWeight > 1.0 {
		return nil, fmt.Errorf("matchLengthWeight must be between 0.0 and 1.0, got %f", cfg.MatchLengthWeight)
	}
	p.matchLengthWeight = cfg.MatchLengthWeight
	if p.matchLengthWeight > 0.0 && cfg.MatchLengthScaleTokens <= 0 {
		return nil, fmt.Errorf("matchLengthScaleTokens must be greater than 0 when matchLengthWeight is greater than 0, got %d", cfg.MatchLengthScaleTokens)
	}
	p.matchLengthScaleTokens = cfg.MatchLengthScaleTokens
	return p, nil
}

// New returns the scorer reading the match produced by producerName (default producer when empty).
func New(_ context.Context, name string, producerName string) (*Plugin, error) {
	return &Plugin{
		typedName:          plugin.TypedName{Type: PrefixCacheScorerPluginType, Name: name},
		prefixMatchDataKey: attrprefix.PrefixCacheMatchInfoDataKey.WithNonEmptyProducerName(producerName),
	}, nil
}

// TypedName returns the type and name of this plugin instance.
func (p *Plugin) TypedName() plugin.TypedName { return p.typedName }

// Category is Affinity.
func (p *Plugin) Category() fwksched.ScorerCategory { return fwksched.Affinity }

// Produces returns nothing: the scorer only reads the match.
func (p *Plugin) Produces() map[plugin.DataKey]any { return map[plugin.DataKey]any{} }

// Consumes declares the PrefixCacheMatchInfo attribute as required.
func (p *Plugin) Consumes() plugin.DataDependencies {
	return plugin.DataDependencies{
		Required: map[plugin.DataKey]any{p.prefixMatchDataKey: attrprefix.PrefixCacheMatchInfo{}},
	}
}

// Score is matchBlocks / totalBlocks per endpoint (0 when the attribute is missing or empty).
func (p *Plugin) Score(ctx context.Context, _ *fwksched.InferenceRequest, endpoints []fwksched.Endpoint) map[fwksched.Endpoint]float64 {
	scores := make(map[fwksched.Endpoint]float64, len(endpoints))
	logger := log.FromContext(ctx)
	for _, endpoint := range endpoints {
		scores[endpoint] = 0.0
		info, ok := endpoint.Get(p.prefixMatchDataKey.String())
		if !ok {
			logger.V(logutil.DEFAULT).Error(nil, "PrefixCacheMatchInfo not found for endpoint, assigning score 0", "endpoint", endpoint)
			continue
		}
		match, ok := info.(*attrprefix.PrefixCacheMatchInfo)
		if !ok || match.TotalBlocks() == 0 {
			continue
		}
		ratio := float64(match.MatchBlocks()) / float64(match.TotalBlocks())
		length := 0.0
		if p.matchLengthWeight > 0.0 && match.BlockSizeTokens() > 0 {
			n := math.Min(1.0, float64(match.MatchBlocks())*float64(match.BlockSizeTokens())/float64(p.matchLengthScaleTokens))
			length = n * n
		}
		scores[endpoint] += p.matchLengthWeight*length + (1.0-p.matchLengthWeight)*ratio
	}
	return scores
}
