package dist

// Discrete chooses one of a few outcomes with given weights (YCSB's
// DiscreteGenerator). Outcomes are indices into the weights given to
// NewDiscrete, in order.
type Discrete struct {
	p []float64 // weights normalised to sum 1
}

// NewDiscrete returns a chooser over len(weights) outcomes. Weights need not
// sum to 1; they are normalised as YCSB does. At least one must be positive.
func NewDiscrete(weights []float64) *Discrete {
	var sum float64
	for _, w := range weights {
		sum += w
	}
	d := &Discrete{p: make([]float64, len(weights))}
	for i, w := range weights {
		d.p[i] = w / sum
	}
	return d
}

// Next returns the index of the chosen outcome. Outcomes of weight 0 are
// never chosen.
func (d *Discrete) Next(r *Rand) int {
	v := r.Float64()
	last := 0
	for i, p := range d.p {
		if p <= 0 {
			continue
		}
		if v < p {
			return i
		}
		v -= p
		last = i
	}
	// Rounding left v just above the last weight (YCSB asserts here).
	return last
}
