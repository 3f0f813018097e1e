package plugin

import (
	"encoding/json"
	"testing"
)

func TestStrictDecoder(t *testing.T) {
	if StrictDecoder(nil) != nil {
		t.Fatal("StrictDecoder(nil) must be nil")
	}
	var params struct {
		Threshold int `json:"threshold"`
	}
	if err := StrictDecoder(json.RawMessage(`{"threshold": 3}`)).Decode(&params); err != nil || params.Threshold != 3 {
		t.Fatalf("decode = %v, %+v", err, params)
	}
	if err := StrictDecoder(json.RawMessage(`{"treshold": 3}`)).Decode(&params); err == nil {
		t.Fatal("unknown field must be rejected")
	}
}

func TestTypedNameString(t *testing.T) {
	if got := (TypedName{Type: "queue-scorer", Name: "q"}).String(); got != "q/queue-scorer" {
		t.Fatalf("String() = %q", got)
	}
}
