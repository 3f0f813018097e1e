package requestcontrol_test

import (
	"context"
	"testing"

	k8stypes "k8s.io/apimachinery/pkg/types"

	errcommon "github.com/llm-d/llm-d-router/pkg/common/error"
	fwkdl "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/datalayer"
	fwkplugin "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/plugin"
	"github.com/llm-d/llm-d-router/pkg/epp/framework/interface/requestcontrol"
	fwksched "github.com/llm-d/llm-d-router/pkg/epp/framework/interface/scheduling"
	"github.com/llm-d/llm-d-router/test/utils"
)

// sheddingAdmitter rejects sheddable requests when any endpoint queue exceeds limit.
type sheddingAdmitter struct {
	typedName fwkplugin.TypedName
	limit     int
}

var _ requestcontrol.Admitter = &sheddingAdmitter{}

func (a *sheddingAdmitter) TypedName() fwkplugin.TypedName { return a.typedName }

func (a *sheddingAdmitter) Admit(_ context.Context, request *fwksched.InferenceRequest, pods []fwksched.Endpoint) error {
	if request == nil || request.Objectives.Priority >= 0 {
		return nil
	}
	for _, pod := range pods {
		if m := pod.GetMetrics(); m != nil && m.WaitingQueueSize > a.limit {
			return errcommon.Error{Code: errcommon.ResourceExhausted, Msg: "saturated"}
		}
	}
	return nil
}

func TestAdmitterShape(t *testing.T) {
	a := &sheddingAdmitter{typedName: fwkplugin.TypedName{Type: "shedding-admitter", Name: "s"}, limit: 3}
	pods := []fwksched.Endpoint{fwksched.NewEndpoint(&fwkdl.EndpointMetadata{ID: k8stypes.NamespacedName{Name: "pod-a"}}, &fwkdl.Metrics{WaitingQueueSize: 5}, nil)}
	ctx := utils.NewTestContext(t)
	if err := a.Admit(ctx, &fwksched.InferenceRequest{RequestID: "r1", Objectives: fwksched.RequestObjectives{Priority: 0}}, pods); err != nil {
		t.Fatalf("protected request rejected: %v", err)
	}
	err := a.Admit(ctx, &fwksched.InferenceRequest{RequestID: "r2", Objectives: fwksched.RequestObjectives{Priority: -1}}, pods)
	if errcommon.CanonicalCode(err) != errcommon.ResourceExhausted {
		t.Fatalf("sheddable request: got %v, want ResourceExhausted", err)
	}
}
