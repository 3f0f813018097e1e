package sim

import (
	"container/list"
	"hash/fnv"
	"strconv"
)

// defaultLRUCapacity is how many block hashes the router-side index keeps per instance.
const defaultLRUCapacity = 10000

// PrefixCacheIndex is BLIS's router-side prefix index: per instance, an LRU of prompt block hashes.
// A block's hash covers every token up to the end of that block, so a match is always a prefix.
type PrefixCacheIndex struct {
	blockSize int
	capacity  int
	lru       map[string]*list.List
	entries   map[string]map[string]*list.Element
}

// NewPrefixCacheIndex returns an empty index.
func NewPrefixCacheIndex(blockSize, capacity int) *PrefixCacheIndex {
	return &PrefixCacheIndex{
		blockSize: max(blockSize, 1),
		capacity:  capacity,
		lru:       map[string]*list.List{},
		entries:   map[string]map[string]*list.Element{},
	}
}

// ComputeBlockHashes hashes every full block of the prompt (a partial last block is not hashed).
func (idx *PrefixCacheIndex) ComputeBlockHashes(tokens []TokenID) []string {
	n := len(tokens) / idx.blockSize
	hashes := make([]string, 0, n)
	h := fnv.New64a()
	buf := make([]byte, 0, 8*idx.blockSize)
	for b := 0; b < n; b++ {
		buf = buf[:0]
		for _, t := range tokens[b*idx.blockSize : (b+1)*idx.blockSize] {
			buf = strconv.AppendInt(buf, int64(t), 10)
			buf = append(buf, ',')
		}
		_, _ = h.Write(buf)
		hashes = append(hashes, strconv.FormatUint(h.Sum64(), 16))
	}
	return hashes
}

// MatchLength counts the consecutive hashes, from the first, the instance holds.
func (idx *PrefixCacheIndex) MatchLength(hashes []string, instance string) int {
	held := idx.entries[instance]
	n := 0
	for _, hash := range hashes {
		if _, ok := held[hash]; !ok {
			break
		}
		n++
	}
	return n
}

// RecordBlocks marks the hashes as cached on the instance, evicting the least recently used.
func (idx *PrefixCacheIndex) RecordBlocks(hashes []string, instance string) {
	if idx.lru[instance] == nil {
		idx.lru[instance] = list.New()
		idx.entries[instance] = map[string]*list.Element{}
	}
	order, held := idx.lru[instance], idx.entries[instance]
	for _, hash := range hashes {
		if el, ok := held[hash]; ok {
			order.MoveToFront(el)
			continue
		}
		held[hash] = order.PushFront(hash)
		if order.Len() > idx.capacity {
			last := order.Back()
			order.Remove(last)
			delete(held, last.Value.(string))
		}
	}
}

// newPrefixAffinityScorer scores the fraction of the request's blocks each instance holds; a prompt
// shorter than one block scores 0 everywhere. The observer records where the request went.
func newPrefixAffinityScorer(blockSize int) (scorerFunc, observerFunc) {
	return newPrefixAffinityScorerWithIndex(NewPrefixCacheIndex(blockSize, defaultLRUCapacity))
}

func newPrefixAffinityScorerWithIndex(idx *PrefixCacheIndex) (scorerFunc, observerFunc) {
	scorer := func(req *Request, snapshots []RoutingSnapshot) map[string]float64 {
		scores := make(map[string]float64, len(snapshots))
		if req == nil {
			return scores
		}
		hashes := idx.ComputeBlockHashes(req.FullInputTokens())
		for _, s := range snapshots {
			if len(hashes) == 0 {
				scores[s.ID] = 0
				continue
			}
			scores[s.ID] = float64(idx.MatchLength(hashes, s.ID)) / float64(len(hashes))
		}
		return scores
	}
	observer := func(req *Request, target string) {
		if req != nil {
			idx.RecordBlocks(idx.ComputeBlockHashes(req.FullInputTokens()), target)
		}
	}
	return scorer, observer
}

// newPrecisePrefixCacheScorer is the min-max of each instance's cached block count for the request;
// all equal (including no hit anywhere) scores 1 everywhere.
func newPrecisePrefixCacheScorer(cacheFn cacheQueryFn) (scorerFunc, observerFunc) {
	scorer := func(req *Request, snapshots []RoutingSnapshot) map[string]float64 {
		scores := make(map[string]float64, len(snapshots))
		counts := make(map[string]int, len(snapshots))
		lo, hi := -1, -1
		for _, s := range snapshots {
			n := 0
			if fn := cacheFn[s.ID]; fn != nil && req != nil {
				n = fn(req.FullInputTokens())
			}
			counts[s.ID] = n
			if lo < 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
		for _, s := range snapshots {
			if hi == lo {
				scores[s.ID] = 1
				continue
			}
			scores[s.ID] = float64(counts[s.ID]-lo) / float64(hi-lo)
		}
		return scores
	}
	return scorer, nil
}

func init() {
	scorerFactories["prefix-affinity"] = func(blockSize int, _ cacheQueryFn) (scorerFunc, observerFunc) {
		return newPrefixAffinityScorer(blockSize)
	}
	scorerFactories["precise-prefix-cache"] = func(_ int, cacheFn cacheQueryFn) (scorerFunc, observerFunc) {
		return newPrecisePrefixCacheScorer(cacheFn)
	}
}
