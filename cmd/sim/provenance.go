package main

import (
	"fmt"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/shareddata"
)

// dataDir is the shared data directory ($ROOFSIM_DATA, else the shared/data
// above the working directory) that profiles record data paths relative to;
// "" when there is none (paths are then recorded as given).
func dataDir() string {
	d, err := shareddata.Find()
	if err != nil {
		return ""
	}
	return d
}

// dataFiles hashes each of files (streaming them) and records it with its
// row count rows[i], its path relative to the shared data directory where
// possible.
func dataFiles(files []string, rows []int) ([]hardware.DataFile, error) {
	dir := dataDir()
	out := make([]hardware.DataFile, len(files))
	for i, f := range files {
		d, err := hardware.NewDataFile(f, dir, rows[i])
		if err != nil {
			return nil, fmt.Errorf("checksum of %s: %w", f, err)
		}
		out[i] = d
	}
	return out, nil
}
