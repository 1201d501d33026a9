package probe

import (
	"errors"
	"fmt"
	"math"
)

// The formula chain of Strube 2011, §4.9, equations (4.3)–(4.7), and the rule of
// three of §5.3. Times are in any one unit (the probe uses seconds).

// Noise is equation (4.3): the slowdown of the instrumented reference run,
// ETRef / ETuninstRef.
func Noise(etRef, etUninstRef float64) float64 { return etRef / etUninstRef }

// TimeUnitValue is equation (4.4): how much of the full (instrumented)
// reference run one unit of phase time is worth, ETRef·Weight / TPhaseRef.
// With ETRef 120 s, Weight 0.5 and TPhaseRef 3 s it is 20.
func TimeUnitValue(etRef, weight, tPhaseRef float64) float64 { return etRef * weight / tPhaseRef }

// PhasePredicted is equation (4.5): the phase's share of the predicted run,
// TimeUnitValue · TProbed.
func PhasePredicted(timeUnitValue, tProbed float64) float64 { return timeUnitValue * tProbed }

// PhaseTerm is one phase's inputs to equation (4.7).
type PhaseTerm struct {
	// Weight is the phase's share of the reference run.
	Weight float64 `json:"weight"`
	// TPhaseRef is the time of the phase's representative interval on the
	// reference machine (instrumented).
	TPhaseRef float64 `json:"t_phase_ref"`
	// TProbed is the time of the same interval on the target.
	TProbed float64 `json:"t_probed"`
}

// ETPredicted is equation (4.6): the sum of the phases' predictions divided
// by the noise. It is the same number as equation (4.7),
// (Σ ETRef·Weight_i/TPhaseRef_i·TProbed_i)·ETuninstRef/ETRef.
func ETPredicted(etRef, etUninstRef float64, phases []PhaseTerm) (float64, error) {
	if err := checkRef(etRef, etUninstRef); err != nil {
		return 0, err
	}
	sum := 0.0
	for i, p := range phases {
		if err := p.check(); err != nil {
			return 0, fmt.Errorf("phase %d: %w", i, err)
		}
		sum += PhasePredicted(TimeUnitValue(etRef, p.Weight, p.TPhaseRef), p.TProbed)
	}
	return sum / Noise(etRef, etUninstRef), nil
}

// RuleOfThree extrapolates a prediction made from phases whose weights sum
// to keptWeight to the whole run (§5.3): predicted / keptWeight.
func RuleOfThree(predicted, keptWeight float64) (float64, error) {
	if !(keptWeight > 0) || keptWeight > 1+1e-9 || math.IsInf(keptWeight, 0) {
		return 0, fmt.Errorf("kept weight %g: want a value in (0, 1]", keptWeight)
	}
	return predicted / keptWeight, nil
}

func checkRef(etRef, etUninstRef float64) error {
	if !(etRef > 0) || math.IsInf(etRef, 0) {
		return fmt.Errorf("ETRef %g: want a positive time", etRef)
	}
	if !(etUninstRef > 0) || math.IsInf(etUninstRef, 0) {
		return fmt.Errorf("ETuninstRef %g: want a positive time", etUninstRef)
	}
	return nil
}

func (p PhaseTerm) check() error {
	switch {
	case !(p.Weight >= 0) || p.Weight > 1+1e-9:
		return fmt.Errorf("weight %g: want a value in [0, 1]", p.Weight)
	case !(p.TPhaseRef > 0) || math.IsInf(p.TPhaseRef, 0):
		return fmt.Errorf("TPhaseRef %g: want a positive time", p.TPhaseRef)
	case !(p.TProbed >= 0) || math.IsInf(p.TProbed, 0):
		return fmt.Errorf("TProbed %g: want a non-negative time", p.TProbed)
	}
	return nil
}

// errNoPhases is returned when a prediction has no phase to work from.
var errNoPhases = errors.New("no phase was measured")
