package sim

// TokenID is one prompt or output token (int32 since 2026-06-29; earlier copies use plain int).
type TokenID = int32

// Request is a request as routing, admission and scheduling policies see it. Only the fields policies
// read are mirrored; lifecycle bookkeeping (progress, step indices, ITL lists) is omitted.
type Request struct {
	ID           string
	InputTokens  []TokenID
	OutputTokens []TokenID // oracle knowledge (INV-9): policies must never read it
	MaxOutputLen int       // client max_tokens; 0 = no budget

	ArrivalTime int64   // µs ticks
	Priority    float64 // vLLM convention at HEAD: lower = more urgent

	TenantID        string
	SLOClass        string // critical, standard, sheddable, batch, background, or empty
	SessionID       string
	RoundIndex      int
	TextTokenCount  int
	ImageTokenCount int
	AudioTokenCount int
	VideoTokenCount int
	ReasonRatio     float64
	ClientID        string
	PrefixGroup     string
	PrefixLength    int
	Streaming       bool

	AssignedInstance    string
	Model               string
	Adapter             string
	Deadline            int64 // µs; 0 = none
	SLOTargetUs         int64 // µs; 0 = none
	IsDecodeSubRequest  bool
	GatewayEnqueueTime  int64
	GatewayDispatchTime int64
}

// InputLen is the prompt length in tokens.
func (req *Request) InputLen() int64 {
	return int64(len(req.InputTokens))
}

// FullInputTokens returns the prompt tokens the prefix index hashes.
func (req *Request) FullInputTokens() []TokenID {
	return req.InputTokens
}
