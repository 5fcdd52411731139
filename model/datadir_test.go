package model

import (
	"github.com/roofsim/roofsim/internal/shareddata"

	"testing"
)

// dataDir is the measured data beside the repository (see shareddata).
func dataDir(t *testing.T) string { return shareddata.Path(t) }
