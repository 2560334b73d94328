package dist

// Uniform draws integers uniformly from [lb, ub] (YCSB's
// UniformLongGenerator).
type Uniform struct {
	lb, n int64
}

// NewUniform returns a Uniform over [lb, ub]; ub must not be below lb.
func NewUniform(lb, ub int64) *Uniform { return &Uniform{lb: lb, n: ub - lb + 1} }

// Next returns the next value in [lb, ub].
func (u *Uniform) Next(r *Rand) int64 { return u.lb + r.Int64N(u.n) }

// Constant always returns the same value (YCSB's ConstantIntegerGenerator).
type Constant int64

// Next returns the constant.
func (c Constant) Next(*Rand) int64 { return int64(c) }
