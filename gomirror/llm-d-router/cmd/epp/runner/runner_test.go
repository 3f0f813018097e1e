package runner

import (
	"testing"

	fwkplugin "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	"github.com/llm-d/llm-d-router/test/utils"
)

func TestRegisterInTreePlugins(t *testing.T) {
	if err := NewRunner().Run(utils.NewTestContext(t)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// The stability levels llm-d-router v0.10.0 registers them at (cmd/epp/runner/runner.go:624-625, 726).
	for typ, want := range map[string]fwkplugin.StabilityLevel{
		"queue-scorer":                fwkplugin.StabilityBeta,
		"kv-cache-utilization-scorer": fwkplugin.StabilityBeta,
		"agent-identity":              fwkplugin.StabilityAlpha,
	} {
		factory, ok := fwkplugin.Registry[typ]
		if !ok {
			t.Fatalf("%s not registered", typ)
		}
		if got := fwkplugin.RegistryMetadata[typ].Stability; got != want {
			t.Errorf("%s stability = %q, want %q", typ, got, want)
		}
		p, err := factory(typ, nil, utils.NewTestHandle(utils.NewTestContext(t)))
		if err != nil || p.TypedName().Type != typ {
			t.Errorf("factory(%s) = %v, %v", typ, p, err)
		}
	}
}
