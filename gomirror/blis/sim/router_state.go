package sim

// RouterState is the cluster view handed to routing and admission policies.
type RouterState struct {
	Snapshots        []RoutingSnapshot // routable instances
	LoadingSnapshots []RoutingSnapshot // loading instances: configuration fields only
	Clock            int64             // simulation clock, µs
	SelectedInstance string            // set by PD deciders; empty inside Route
}
