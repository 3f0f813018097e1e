package error

import (
	"errors"
	"testing"
)

func TestCanonicalCode(t *testing.T) {
	err := error(Error{Code: ResourceExhausted, Msg: "saturated"})
	if got := CanonicalCode(err); got != ResourceExhausted {
		t.Fatalf("CanonicalCode = %q", got)
	}
	if got := err.Error(); got != "inference error: ResourceExhausted - saturated" {
		t.Fatalf("Error() = %q", got)
	}
	if got := CanonicalCode(errors.New("x")); got != Unknown {
		t.Fatalf("CanonicalCode(other) = %q", got)
	}
}
