// Package examples embeds the example workloads, so a program such as
// `sim serve` can offer them without the source tree.
package examples

import "embed"

// FS holds the example workload files (*.yaml) and the replay trace.
//
//go:embed *.yaml *.csv
var FS embed.FS
