package sweep

import (
	"slices"
	"testing"
)

// Every fixed column is described, and the columns a summary table shows
// include the configuration's layout and cost: replicas, GPUs, $/h, $/Mtok,
// dp and ep.
func TestColumnInfosCoverColumns(t *testing.T) {
	docs := columnDocs()
	for _, c := range Columns() {
		if _, ok := docs[c]; !ok {
			t.Errorf("column %q has no ColumnInfo (add it to columnDocs)", c)
		}
	}
	for c := range docs {
		if !slices.Contains(Columns(), c) {
			t.Errorf("columnDocs describes %q, which is no column", c)
		}
	}
	shown := map[string]string{}
	var settings []string
	for _, ci := range ColumnInfos(Columns()) {
		if ci.Setting {
			settings = append(settings, ci.Name)
		}
		if ci.Label == "" || ci.Doc == "" {
			t.Errorf("column %q: empty label or doc", ci.Name)
		}
		if ci.Table {
			shown[ci.Name] = ci.Label
		}
	}
	if want := []string{"gpu", "tp", "dp", "ep", "max_num_seqs", "max_num_batched_tokens"}; !slices.Equal(settings, want) {
		t.Errorf("setting columns %v, want %v", settings, want)
	}
	for name, label := range map[string]string{"replicas": "replicas", "gpus_total": "GPUs", "cost_per_hour": "$/h", "cost_per_mtok": "$/Mtok", "dp": "dp", "ep": "ep"} {
		if shown[name] != label {
			t.Errorf("column %s: shown as %q, want %q", name, shown[name], label)
		}
	}
}

// A swept setting's column is shown, labelled by its key, documented by its
// help; an unknown column is named but not shown.
func TestColumnInfosSettingColumn(t *testing.T) {
	got := ColumnInfos([]string{"serving.max_num_seqs", "no_such_column"})
	if got[0].Name != "serving.max_num_seqs" || got[0].Label != "serving.max_num_seqs" || !got[0].Table || !got[0].Setting || got[0].Doc == "" {
		t.Errorf("setting column: %+v", got[0])
	}
	if got[1].Name != "no_such_column" || got[1].Table {
		t.Errorf("unknown column: %+v", got[1])
	}
}
