package types

import "testing"

func TestNamespacedNameString(t *testing.T) {
	got := NamespacedName{Namespace: "ns", Name: "pod-a"}.String()
	if got != "ns/pod-a" {
		t.Fatalf("String() = %q, want %q", got, "ns/pod-a")
	}
}
