package hardware

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestProfileStatusRoundTrip(t *testing.T) {
	for _, s := range []ProfileStatus{StatusCalibrated, StatusDefaults, StatusBorrowed("h100"), {}} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var got ProfileStatus
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if got != s {
			t.Errorf("%s read back as %v, want %v", b, got, s)
		}
	}
	b, _ := json.Marshal(StatusBorrowed("h100"))
	if string(b) != `"borrowed:h100"` {
		t.Errorf("borrowed status writes %s", b)
	}
	if g, ok := StatusBorrowed("h100").Borrowed(); !ok || g != "h100" || !StatusBorrowed("h100").Calibrated() {
		t.Errorf("borrowed status: gpu %q ok %v", g, ok)
	}
	if StatusDefaults.Calibrated() || !StatusCalibrated.Calibrated() {
		t.Error("Calibrated wrong for calibrated/defaults")
	}
}

func TestProfileStatusParseErrors(t *testing.T) {
	for _, v := range []string{"borrowed:", "Calibrated", "default", "borrowed: h100", "x"} {
		_, err := ParseProfileStatus(v)
		var e *ProfileStatusError
		if !errors.As(err, &e) || e.Value != v {
			t.Errorf("%q: err %v", v, err)
		}
	}
}

func TestProfileStatusOfProfile(t *testing.T) {
	if s := DefaultProfile().Status(); s != StatusDefaults {
		t.Errorf("default profile: %v", s)
	}
	p := DefaultProfile()
	p.Calibrated = true
	if s := p.Status(); s != StatusCalibrated {
		t.Errorf("calibrated profile: %v", s)
	}
}
