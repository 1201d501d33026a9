package probe

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestThesisExample is docs/paper-oracles.md §4: ETRef 120 s, TPhaseRef 3 s, weight
// 0.5 give a time unit value of 20.
func TestThesisExample(t *testing.T) {
	if got := TimeUnitValue(120, 0.5, 3); !near(got, 20) {
		t.Fatalf("TimeUnitValue(120, 0.5, 3) = %g, want 20", got)
	}
}

// TestFullExample is docs/paper-oracles.md §4's table: ETuninstRef 100, ETRef 120,
// three phases, prediction 52.5; and the rule of three keeping phases 1–2.
func TestFullExample(t *testing.T) {
	if got := Noise(120, 100); !near(got, 1.2) {
		t.Fatalf("Noise = %g, want 1.2", got)
	}
	phases := []PhaseTerm{{0.5, 3, 1.5}, {0.3, 2, 1.0}, {0.2, 4, 2.5}}
	wantTUV := []float64{20, 18, 6}
	wantPP := []float64{30, 18, 15}
	for i, p := range phases {
		tuv := TimeUnitValue(120, p.Weight, p.TPhaseRef)
		if !near(tuv, wantTUV[i]) {
			t.Errorf("phase %d: TimeUnitValue %g, want %g", i+1, tuv, wantTUV[i])
		}
		if pp := PhasePredicted(tuv, p.TProbed); !near(pp, wantPP[i]) {
			t.Errorf("phase %d: PhasePredicted %g, want %g", i+1, pp, wantPP[i])
		}
	}
	got, err := ETPredicted(120, 100, phases)
	if err != nil || !near(got, 52.5) {
		t.Fatalf("ETPredicted = %g, %v; want 52.5", got, err)
	}
	// Eq. (4.7) written out.
	sum := 0.0
	for _, p := range phases {
		sum += 120 * p.Weight / p.TPhaseRef * p.TProbed
	}
	if eq47 := sum * 100 / 120; !near(eq47, got) {
		t.Fatalf("eq. 4.7 gives %g, eq. 4.6 %g", eq47, got)
	}
	partial, err := ETPredicted(120, 100, phases[:2])
	if err != nil || !near(partial, 40) {
		t.Fatalf("partial prediction = %g, %v; want 40", partial, err)
	}
	full, err := RuleOfThree(partial, 0.8)
	if err != nil || !near(full, 50) {
		t.Fatalf("rule of three = %g, %v; want 50", full, err)
	}
}

// TestIdentity: TProbed = TPhaseRef and weights summing to 1 predict
// ETuninstRef.
func TestIdentityPrediction(t *testing.T) {
	got, err := ETPredicted(120, 100, []PhaseTerm{{0.5, 3, 3}, {0.3, 2, 2}, {0.2, 4, 4}})
	if err != nil || !near(got, 100) {
		t.Fatalf("ETPredicted = %g, %v; want 100", got, err)
	}
}

func TestFormulaErrors(t *testing.T) {
	for _, c := range []struct {
		name        string
		ref, uninst float64
		p           PhaseTerm
	}{
		{"zero ETRef", 0, 100, PhaseTerm{0.5, 3, 1}},
		{"NaN ETuninstRef", 120, math.NaN(), PhaseTerm{0.5, 3, 1}},
		{"weight above 1", 120, 100, PhaseTerm{1.5, 3, 1}},
		{"zero TPhaseRef", 120, 100, PhaseTerm{0.5, 0, 1}},
		{"negative TProbed", 120, 100, PhaseTerm{0.5, 3, -1}},
	} {
		if _, err := ETPredicted(c.ref, c.uninst, []PhaseTerm{c.p}); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := RuleOfThree(10, 0); err == nil {
		t.Error("rule of three with weight 0: no error")
	}
}

// TestPredictManifest runs the full example through Predict, which also
// applies the rule of three for a dropped phase.
func TestPredictManifest(t *testing.T) {
	m := &Manifest{ETRef: 120, ETUninstRef: 100, TotalBlocks: 1000, Phases: []Phase{
		{ID: 0, TimeShare: 0.5, TPhaseRef: 3, Blocks: 10},
		{ID: 1, TimeShare: 0.3, TPhaseRef: 2, Blocks: 10},
		{ID: 2, TimeShare: 0.2, TPhaseRef: 4, Blocks: 10},
	}}
	p, err := Predict(m, map[int]float64{0: 1.5, 1: 1.0, 2: 2.5}, TimeWeights)
	if err != nil || !near(p.Predicted, 52.5) || !near(p.Covered, 1) || !near(p.Represented, 0.03) {
		t.Fatalf("Predict = %+v, %v; want 52.5 covering 1, representing 0.03", p, err)
	}
	p, err = Predict(m, map[int]float64{0: 1.5, 1: 1.0}, TimeWeights)
	if err != nil || !near(p.Predicted, 50) || !near(p.Partial, 40) || !near(p.Covered, 0.8) || p.Phases[2].Status != "dropped" {
		t.Fatalf("Predict without phase 3 = %+v, %v; want 50 from 40 covering 0.8", p, err)
	}
	if _, err := Predict(m, nil, TimeWeights); err == nil {
		t.Fatal("Predict with no phase: no error")
	}
}
