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
	for _, typ := range []string{"queue-scorer", "kv-cache-utilization-scorer"} {
		factory, ok := fwkplugin.Registry[typ]
		if !ok {
			t.Fatalf("%s not registered", typ)
		}
		if got := fwkplugin.RegistryMetadata[typ].Stability; got != fwkplugin.StabilityStable {
			t.Errorf("%s stability = %q, want Stable", typ, got)
		}
		p, err := factory(typ, nil, utils.NewTestHandle(utils.NewTestContext(t)))
		if err != nil || p.TypedName().Type != typ {
			t.Errorf("factory(%s) = %v, %v", typ, p, err)
		}
	}
}
