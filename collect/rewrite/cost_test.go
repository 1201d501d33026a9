package rewrite

import "testing"

// TestMeasureCosts: the measured costs are those of real recording on
// this machine: positive, below a microsecond an event (the recorder's
// hot path is tens of nanoseconds; a microsecond would mean the
// measurement timed something else), and MeasureCosts checked that the
// repeats were dropped.
func TestMeasureCosts(t *testing.T) {
	rec, drop, err := MeasureCosts()
	if err != nil {
		t.Fatal(err)
	}
	if !(rec > 0 && rec < 1000) || !(drop > 0 && drop < 1000) {
		t.Fatalf("record %.1f ns, drop %.1f ns an event", rec, drop)
	}
	t.Logf("record %.1f ns, drop %.1f ns an event", rec, drop)
}
