// Package plot renders roofsim's charts to SVG or PNG files.
//
// It is data in, image out: callers pass plain structs of numbers and labels and
// the package imports nothing else from the project. Three entry points exist:
//
//   - WriteRoofline: a log-log roofline (arithmetic intensity in FLOP/byte against
//     performance in FLOP/s) with one memory-bandwidth slope, one compute roof per
//     precision, a marked ridge point per roof and labelled operator points.
//   - WriteXY: a generic line and/or scatter chart with optional log axes, used for
//     Pareto fronts and request-rate-versus-latency curves.
//   - WritePanels: several XY charts tiled into one image.
//
// The output format is chosen by the file extension (.svg or .png). Every writer
// validates its input before touching the file system, renders the whole image in
// memory, then writes a temporary file in the destination directory and renames it
// over the destination, so a failure never leaves a partial file behind.
//
// Reading order: write.go (formats and atomic writes), style.go (fonts, colours),
// ticks.go (axis tick labels), legend.go, roofline.go, annotate.go (label
// placement), xy.go, panels.go.
package plot
