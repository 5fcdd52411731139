package plot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// pngDPI is the raster resolution of PNG output in dots per inch. An image of
// w inches by h inches is round(w*pngDPI) by round(h*pngDPI) pixels.
const pngDPI = 120

// format is an output image format.
type format string

const (
	formatSVG format = "svg"
	formatPNG format = "png"
)

// formatOf returns the output format implied by path's extension
// (case-insensitive) or an error naming the unsupported extension.
func formatOf(path string) (format, error) {
	ext := filepath.Ext(path)
	switch strings.ToLower(ext) {
	case ".svg":
		return formatSVG, nil
	case ".png":
		return formatPNG, nil
	case "":
		return "", fmt.Errorf("plot: %q: missing file extension (want .svg or .png)", path)
	default:
		return "", fmt.Errorf("plot: %q: unsupported file extension %q (want .svg or .png)", path, ext)
	}
}

// render draws onto a fresh canvas of size w by h in format f and returns the
// encoded image. Panics raised by the drawing library on degenerate input are
// turned into errors so that bad data never crashes the caller.
func render(f format, w, h vg.Length, drawFn func(dc draw.Canvas)) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("plot: rendering failed: %v", r)
		}
	}()
	var c vg.CanvasWriterTo
	switch f {
	case formatSVG:
		c = vgsvg.New(w, h)
	case formatPNG:
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))}
	default:
		return nil, fmt.Errorf("plot: unknown format %q", f)
	}
	drawFn(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plot: encoding %s: %w", f, err)
	}
	return buf.Bytes(), nil
}

// writeAtomic writes data to path by creating a temporary file in the same
// directory, writing and closing it, and renaming it over path. On any error
// the temporary file is removed and path is left untouched.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("plot: writing %q: %w", path, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = f.Close()
			}
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("plot: writing %q: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("plot: writing %q: %w", path, err)
	}
	closed = true
	if err = f.Close(); err != nil {
		return fmt.Errorf("plot: writing %q: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("plot: writing %q: %w", path, err)
	}
	return nil
}

// renderToFile renders an image of size w by h into path, choosing the format
// from path's extension, and writes it atomically.
func renderToFile(path string, w, h vg.Length, drawFn func(dc draw.Canvas)) error {
	f, err := formatOf(path)
	if err != nil {
		return err
	}
	data, err := render(f, w, h, drawFn)
	if err != nil {
		return fmt.Errorf("%w (file %q not written)", err, path)
	}
	return writeAtomic(path, data)
}
