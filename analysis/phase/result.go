package phase

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"strconv"
)

// Result is the outcome of Run: every k evaluated, the chosen clustering,
// its phases and the label of every interval. It marshals to JSON.
type Result struct {
	// Mode is "compat" or "default".
	Mode string `json:"mode"`
	// Intervals is the number of intervals clustered.
	Intervals int `json:"intervals"`
	// InputDim is the dimension of the input vectors (the largest block id).
	InputDim int32 `json:"input_dim"`
	// Dim is the dimension clustered: the projected dimension, or InputDim
	// without projection.
	Dim int `json:"dim"`
	// Projected tells whether the vectors were randomly projected.
	Projected bool `json:"projected"`
	// VLIWeights tells whether intervals were weighted by their total
	// count (-fixedLength off) rather than uniformly.
	VLIWeights bool `json:"vli_weights"`
	// MaxRuns is the most evaluations the k search could make
	// (⌊log2 MaxK⌋+3 for a binary search, the list length otherwise).
	MaxRuns int `json:"max_runs"`
	// Threshold is the BIC threshold used to choose k.
	Threshold float64 `json:"bic_threshold"`
	// Evaluated lists the clusterings in the order they were computed.
	Evaluated []Evaluation `json:"evaluated"`
	// Chosen is the index in Evaluated of the chosen clustering.
	Chosen int `json:"chosen"`
	// K is the chosen k. Phases may be fewer when clusters end up empty.
	K int `json:"k"`
	// Phases are the non-empty clusters of the chosen clustering, in
	// ascending cluster id.
	Phases []Phase `json:"phases"`
	// Coverage holds the largest phases covering Options.CoveragePct of the
	// weight, when it is below 1.
	Coverage *Coverage `json:"coverage,omitempty"`
	// Labels holds each interval's cluster id.
	Labels []int `json:"labels"`
	// Distances holds each interval's Euclidean distance to its cluster's
	// centre (in the clustered space).
	Distances []float64 `json:"distances"`
	// Hints describe the label sequence: end of initialisation, period of
	// the cyclic part, and the runs of each phase.
	Hints Hints `json:"hints"`
}

// Evaluation is the clustering of one k: each k-means trial, and the one
// kept (the best BIC).
type Evaluation struct {
	// K is the number of clusters asked for.
	K int `json:"k"`
	// BIC is the best trial's BIC.
	BIC Score `json:"bic"`
	// GuardedBIC (Default mode) is the best trial's BIC with its phases
	// of fewer than Options.MinPhaseSize intervals dissolved into the
	// nearest larger one. The k search and the k rule use it, so that a
	// k does not win by isolating stray intervals.
	GuardedBIC *Score `json:"guarded_bic,omitempty"`
	// BestTrial is the index in Trials of the trial kept.
	BestTrial int `json:"best_trial"`
	// Trials are the k-means runs, one per initialisation.
	Trials []Trial `json:"trials"`
}

// Trial is one k-means run from one initialisation.
type Trial struct {
	// Seed is the seed of its initialisation.
	Seed int64 `json:"seed"`
	// Iterations is the number of k-means updates, as SimPoint prints it
	// (updates before the one that changed nothing, when converged).
	Iterations int `json:"iterations"`
	// Converged is false when the iteration limit stopped k-means.
	Converged bool `json:"converged"`
	// BIC is the Bayesian information criterion score (higher is better).
	BIC Score `json:"bic"`
	// Distortion is the weighted sum of squared distances to the centres,
	// scaled to uniform weights.
	Distortion Score `json:"distortion"`
}

// Phase is one non-empty cluster of the chosen clustering.
type Phase struct {
	// ID is the cluster id, as in the labels.
	ID int `json:"id"`
	// Weight is the phase's share of the weight (of the intervals, or of
	// the instructions with VLI weights), normalised over the phases
	// reported with it.
	Weight float64 `json:"weight"`
	// Representative is the interval closest to the centre (the earliest
	// on ties): the simulation point. It is -1 in the rare case of a
	// cluster with weight but no interval labelled to it (possible only
	// when the iteration limit stopped k-means).
	Representative int `json:"representative"`
	// Distance is the representative's distance to the centre.
	Distance float64 `json:"distance"`
	// Size is the number of intervals labelled with the phase.
	Size int `json:"size"`
	// Variance is the weighted mean squared distance of the phase's
	// intervals to its centre (within-phase variance).
	Variance float64 `json:"variance"`
	// Centre is the cluster centre in the clustered space.
	Centre []float64 `json:"centre"`
}

// Coverage is the selection of the largest phases that cover a fraction
// of the weight (SimPoint's -coveragePct and its ".lpt" files).
type Coverage struct {
	// Pct is the fraction asked for.
	Pct float64 `json:"pct"`
	// Phases are the selected phases in ascending id, with weights
	// renormalised over the selection.
	Phases []Phase `json:"phases"`
}

// Score is a float64 that marshals to JSON even when it is not finite
// (as the strings "+Inf", "-Inf" and "NaN"): a BIC is +Inf when a
// clustering fits its data exactly.
type Score float64

// MarshalJSON implements json.Marshaler.
func (s Score) MarshalJSON() ([]byte, error) {
	f := float64(s)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *Score) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*s = Score(math.NaN())
		return nil
	case `"+Inf"`:
		*s = Score(math.Inf(1))
		return nil
	case `"-Inf"`:
		*s = Score(math.Inf(-1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*s = Score(f)
	return nil
}

// FormatG formats x the way C's printf("%g") and a default-precision C++
// ostream do: 6 significant digits, trailing zeros removed, an exponent
// below 1e-4 and from 1e6. SimPoint prints its weights, distances and
// scores this way.
func FormatG(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// WriteSimpoints writes SimPoint's .simpoints file: per phase, in
// ascending id, "<representative interval, 0-based> <phase id>".
func (r *Result) WriteSimpoints(w io.Writer) error { return writeSimpoints(w, r.Phases) }

// WriteWeights writes SimPoint's .weights file: per phase, in ascending
// id, "<weight> <phase id>" with the weight printed like %g.
func (r *Result) WriteWeights(w io.Writer) error { return writeWeights(w, r.Phases) }

// WriteLabels writes SimPoint's .labels file: per interval,
// "<phase id> <distance to its centre>" with the distance printed like %g.
func (r *Result) WriteLabels(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var buf []byte
	for i, l := range r.Labels {
		buf = strconv.AppendInt(buf[:0], int64(l), 10)
		buf = append(buf, ' ')
		buf = append(buf, FormatG(r.Distances[i])...)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

// WriteSimpoints writes the selection in SimPoint's .simpoints format
// (the ".lpt<pct>" file of -coveragePct).
func (c *Coverage) WriteSimpoints(w io.Writer) error { return writeSimpoints(w, c.Phases) }

// WriteWeights writes the selection in SimPoint's .weights format.
func (c *Coverage) WriteWeights(w io.Writer) error { return writeWeights(w, c.Phases) }

// Suffix returns the suffix SimPoint appends to the names of the files
// of the selection: ".lpt" and the fraction printed like %g (".lpt0.9").
func (c *Coverage) Suffix() string { return ".lpt" + FormatG(c.Pct) }

func writeSimpoints(w io.Writer, phases []Phase) error {
	bw := bufio.NewWriter(w)
	var buf []byte
	for _, p := range phases {
		buf = strconv.AppendInt(buf[:0], int64(p.Representative), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(p.ID), 10)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

func writeWeights(w io.Writer, phases []Phase) error {
	bw := bufio.NewWriter(w)
	var buf []byte
	for _, p := range phases {
		buf = append(buf[:0], FormatG(p.Weight)...)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(p.ID), 10)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}
