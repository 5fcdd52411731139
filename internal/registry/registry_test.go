package registry

import "testing"

func TestLookup(t *testing.T) {
	tab := Table[int]{Kind: "process", Entries: []Entry[int]{{"poisson", 1}, {"constant", 2}, {"gamma", 3}}}
	for _, e := range tab.Entries {
		v, err := tab.Lookup(e.Name)
		if err != nil || v != e.Value {
			t.Fatalf("Lookup(%q) = %d, %v; want %d", e.Name, v, err, e.Value)
		}
	}
	_, err := tab.Lookup("bursty")
	if want := `unknown process "bursty" (want poisson, constant or gamma)`; err == nil || err.Error() != want {
		t.Fatalf("Lookup(bursty) error %v, want %s", err, want)
	}
	anon := Table[int]{Entries: tab.Entries[:2]}
	if _, err := anon.Lookup(""); err == nil || err.Error() != `unknown "" (want poisson or constant)` {
		t.Fatalf("Lookup(\"\") error %v", err)
	}
}

func TestWant(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"a", "b", "c", "d"}, "a, b, c or d"},
	} {
		var tab Table[struct{}]
		for _, n := range tc.names {
			tab.Entries = append(tab.Entries, Entry[struct{}]{Name: n})
		}
		if got := tab.Want(); got != tc.want {
			t.Errorf("Want(%v) = %q, want %q", tc.names, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	ok := Table[int]{Entries: []Entry[int]{{"a", 1}, {"b", 2}}}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	dup := Table[int]{Entries: []Entry[int]{{"a", 1}, {"b", 2}, {"a", 3}}}
	if err := dup.Check(); err == nil || err.Error() != `entry 2: "a" listed twice` {
		t.Fatalf("duplicate: %v", err)
	}
	empty := Table[int]{Entries: []Entry[int]{{"a", 1}, {"", 2}}}
	if err := empty.Check(); err == nil {
		t.Fatal("empty name accepted")
	}
}
