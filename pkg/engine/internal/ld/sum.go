package ld

// value is a long double held as a double while it is one (the common case,
// and much faster), in x from the first operation that made it wider.
type value struct {
	f    float64
	x    Float
	wide bool // x holds the value
}

// widen moves the value to x, if it is not there yet.
func (v *value) widen() {
	if !v.wide {
		v.x, v.wide = FromFloat64(v.f), true
	}
}

// Value returns the value.
func (v value) Value() Float {
	if v.wide {
		return v.x
	}
	return FromFloat64(v.f)
}

// Sum is a long double that values are added to, as repeated long double
// additions: a double while every addition so far was exact in double (the
// common case of dates a few digits long, and much faster), a long double
// from the first that was not. The zero value is +0; Value returns the sum.
type Sum struct {
	value
}

// AddFloat64 adds the double v.
func (s *Sum) AddFloat64(v float64) {
	if !s.wide {
		r, exact := exactSum(s.f, v)
		if exact {
			s.f = r
			return
		}
		s.widen()
	}
	s.x = Add(s.x, FromFloat64(v))
}

// Add adds the long double v.
func (s *Sum) Add(v Float) {
	if d, ok := v.Exact(); ok {
		s.AddFloat64(d)
		return
	}
	s.widen()
	s.x = Add(s.x, v)
}

// Float64 returns the sum rounded to a double.
func (s Sum) Float64() float64 {
	if s.wide {
		return s.x.Float64()
	}
	return s.f
}

// exactSum returns a + b and whether it is exact (and finite).
func exactSum(a, b float64) (float64, bool) {
	r := a + b
	bb := r - a
	return r, (a-(r-bb))+(b-bb) == 0 && r-r == 0
}

// Max is the greatest of long doubles: a double while they all are (the
// common case, and much faster). The zero value is +0; Value returns the
// greatest value.
type Max struct {
	value
}

// UpdateFloat64 takes the double v into account.
func (m *Max) UpdateFloat64(v float64) {
	if !m.wide {
		if v > m.f {
			m.f = v
		}
		return
	}
	if x := FromFloat64(v); x.Cmp(m.x) > 0 {
		m.x = x
	}
}

// Update takes the long double v into account.
func (m *Max) Update(v Float) {
	if d, ok := v.Exact(); ok {
		m.UpdateFloat64(d)
		return
	}
	m.widen()
	if v.Cmp(m.x) > 0 {
		m.x = v
	}
}
