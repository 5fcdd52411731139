// Package layers holds the module's import layering as a test: every
// package has a layer, and a package imports only packages of lower layers,
// so data and control flow one way (DESIGN.md: workload -> sim -> traces ->
// output; cmd/sim and serve are adapters on top). It has no code; read
// layers_test.go for the table.
package layers
