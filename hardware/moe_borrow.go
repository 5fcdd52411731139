package hardware

import (
	"fmt"
	"path"
	"slices"
)

// resolveFusedMoEFrom gives every profile of gpus (default and
// per-release) that names a donor in FusedMoEFrom the donor's FusedMoE and
// its moe provenance stage, and clears FusedMoEFrom: the built-in catalog's
// alternative to copying a fit into the files of GPUs without MoE kernel
// tables. The donor must be another catalog GPU whose default profile is
// calibrated and holds a fused_moe fit of its own (no chains). dir is the
// profile directory, for messages.
func resolveFusedMoEFrom(gpus []GPU, dir string) error {
	borrows := map[string]bool{}
	for i := range gpus {
		for _, p := range profilesOf(&gpus[i]) {
			if p.FusedMoEFrom != "" {
				borrows[gpus[i].Name] = true
			}
		}
	}
	for i := range gpus {
		g := &gpus[i]
		for _, p := range profilesOf(g) {
			if p.FusedMoEFrom == "" {
				continue
			}
			d := find(gpus, p.FusedMoEFrom)
			if d == nil || d.Name == g.Name || borrows[d.Name] || d.Profile == nil || !d.Profile.Calibrated || len(d.Profile.FusedMoE) == 0 {
				return fmt.Errorf("%s: %w", path.Join(dir, g.Name), &FieldError{GPU: g.Name, Path: "fused_moe_from",
					Reason: fmt.Sprintf("%q is not another catalog GPU with a calibrated fused_moe fit of its own", p.FusedMoEFrom)})
			}
			// Only the per-format curves: a shape entry carries the tile
			// configuration the engine runs on the donor's device.
			p.FusedMoE, _ = d.Profile.FusedMoE.SplitShapes()
			if st, ok := d.Profile.Provenance.Stage(StageMoE); ok {
				st.Data = slices.Clone(st.Data)
				st.Note = fmt.Sprintf("%s's fit (fused_moe_from: %s; no moe table for this GPU)", d.Name, d.Name)
				p.Provenance = p.Provenance.withOrdered(st)
			}
			p.FusedMoEFrom = ""
		}
	}
	return nil
}

// profilesOf lists g's default profile (when set) and its per-release ones.
func profilesOf(g *GPU) []*Profile {
	var ps []*Profile
	if g.Profile != nil {
		ps = append(ps, g.Profile)
	}
	for _, r := range g.Releases {
		ps = append(ps, r.Profile)
	}
	return ps
}

// withOrdered is With, but s goes before the first stage of a kind later in
// StageKinds order (else last); the other stages keep their order.
func (p Provenance) withOrdered(s Stage) Provenance {
	out := p.Without(s.Stage)
	order := func(k StageKind) int { return slices.Index(StageKinds(), k) }
	i := slices.IndexFunc(out, func(st Stage) bool { return order(st.Stage) > order(s.Stage) })
	if i < 0 {
		return append(out, s)
	}
	return slices.Insert(out, i, s)
}
