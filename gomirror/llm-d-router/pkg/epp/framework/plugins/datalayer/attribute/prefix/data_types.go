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

// Package prefix holds the per-endpoint prefix-cache match attribute prefix producers write.
package prefix

import (
	"maps"

	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	approxprefixconstants "github.com/llm-d/llm-d-router/pkg/epp/framework/plugins/requestcontrol/dataproducer/approximateprefix/constants"
)

// PrefixCacheMatchInfoDataKey is the attribute key of PrefixCacheMatchInfo (default producer:
// approx-prefix-cache-producer).
var PrefixCacheMatchInfoDataKey = plugin.NewDataKey("PrefixCacheMatchInfoDataKey", approxprefixconstants.ApproxPrefixCachePluginType)

// SpeculativeTierKey is the CachedBlocksByTier key for speculative index entries.
const SpeculativeTierKey = "speculative"

// PrefixCacheMatchInfo is how much of the current request's prompt an endpoint holds, in blocks.
type PrefixCacheMatchInfo struct {
	matchBlocks        int
	totalBlocks        int
	blockSizeTokens    int
	cachedBlockCount   int
	cachedBlocksByTier map[string]int
	mm                 *MMMatchInfo
}

// MMMatchInfo attributes a block match to multimodal content.
type MMMatchInfo struct {
	MatchBlocks int
}

// NewPrefixCacheMatchInfo returns the match of matchBlocks out of totalBlocks blocks.
func NewPrefixCacheMatchInfo(matchBlocks, totalBlocks, blockSizeTokens int) *PrefixCacheMatchInfo {
	return &PrefixCacheMatchInfo{
		matchBlocks:      matchBlocks,
		totalBlocks:      totalBlocks,
		blockSizeTokens:  blockSizeTokens,
		cachedBlockCount: matchBlocks,
	}
}

// WithCachedBlockCount sets the unweighted contiguous cached-block count.
func (p *PrefixCacheMatchInfo) WithCachedBlockCount(cachedBlockCount int) *PrefixCacheMatchInfo {
	p.cachedBlockCount = cachedBlockCount
	return p
}

// WithMM attaches multimodal match tracking.
func (p *PrefixCacheMatchInfo) WithMM(mm MMMatchInfo) *PrefixCacheMatchInfo {
	p.mm = &mm
	return p
}

// MatchBlocks is the matched prefix length in blocks.
func (p *PrefixCacheMatchInfo) MatchBlocks() int { return p.matchBlocks }

// TotalBlocks is the request's prompt length in blocks.
func (p *PrefixCacheMatchInfo) TotalBlocks() int { return p.totalBlocks }

// BlockSizeTokens is the block length in tokens.
func (p *PrefixCacheMatchInfo) BlockSizeTokens() int { return p.blockSizeTokens }

// MM returns the multimodal match, nil for text-only requests.
func (p *PrefixCacheMatchInfo) MM() *MMMatchInfo { return p.mm }

// CachedBlockCount is the unweighted count of contiguous cached prefix blocks.
func (p *PrefixCacheMatchInfo) CachedBlockCount() int { return p.cachedBlockCount }

// WithCachedBlocksByTier sets the per-tier cached-block counts (takes ownership of the map).
func (p *PrefixCacheMatchInfo) WithCachedBlocksByTier(cachedBlocksByTier map[string]int) *PrefixCacheMatchInfo {
	p.cachedBlocksByTier = cachedBlocksByTier
	return p
}

// CachedBlocksByTier returns the per-tier cached-block counts; nil when the producer has none.
func (p *PrefixCacheMatchInfo) CachedBlocksByTier() map[string]int { return p.cachedBlocksByTier }

// Clone implements fwkdl.Cloneable.
func (p *PrefixCacheMatchInfo) Clone() fwkdl.Cloneable {
	clone := &PrefixCacheMatchInfo{
		matchBlocks:        p.matchBlocks,
		totalBlocks:        p.totalBlocks,
		blockSizeTokens:    p.blockSizeTokens,
		cachedBlockCount:   p.cachedBlockCount,
		cachedBlocksByTier: maps.Clone(p.cachedBlocksByTier),
	}
	if p.mm != nil {
		mm := *p.mm
		clone.mm = &mm
	}
	return clone
}
