package main

import (
	"encoding/csv"
	"os"
	"strconv"

	"github.com/roofsim/roofsim/traces"
)

// poolTrace is --out's request_pools.csv: for a disaggregated run, one row
// per completed request naming its prefill and decode instances and timing
// its KV transfer (traces.RequestPoolColumns). It is created at the first
// such request, so an aggregated run's directory is unchanged.
type poolTrace struct {
	f *os.File
	w *csv.Writer
}

// write adds r's row, creating the file in stage first.
func (p *poolTrace) write(stage *stagedDir, r *traces.RequestRecord) error {
	if p.f == nil {
		f, err := stage.create("request_pools.csv")
		if err != nil {
			return err
		}
		p.f, p.w = f, csv.NewWriter(f)
		if err := p.w.Write(append([]string{"id"}, traces.RequestPoolColumns()...)); err != nil {
			return err
		}
	}
	return p.w.Write(append([]string{strconv.FormatUint(r.ID, 10)}, r.Pool.Values()...))
}

// close flushes and closes the file, if any.
func (p *poolTrace) close() error {
	if p.f == nil {
		return nil
	}
	p.w.Flush()
	if err := p.w.Error(); err != nil {
		return err
	}
	err := p.f.Close()
	p.f = nil
	return err
}
