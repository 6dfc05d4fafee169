package langdetect

import (
	"math"
	"math/bits"
)

// pyRandom is CPython's random.Random: MT19937 (Matsumoto and Nishimura),
// seeded from an integer as random.seed does, with the draws langdetect
// makes (choice, gauss) computed as CPython 3.11 computes them.
type pyRandom struct {
	mt   [624]uint32
	i    int
	next *float64 // gauss_next
}

// newPyRandom returns random.Random(seed) for a seed below 2³².
func newPyRandom(seed uint32) *pyRandom {
	r := &pyRandom{}
	r.initByArray([]uint32{seed})
	return r
}

func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.i = 624
}

// initByArray is init_by_array, which random.seed uses with the seed's
// 32-bit words.
func (r *pyRandom) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(624, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := 623; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

func (r *pyRandom) uint32() uint32 {
	if r.i >= 624 {
		for k := range 624 {
			y := r.mt[k]&0x80000000 | r.mt[(k+1)%624]&0x7fffffff
			v := r.mt[(k+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.i = 0
	}
	y := r.mt[r.i]
	r.i++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// random is random.random(): 53 random bits in [0, 1).
func (r *pyRandom) random() float64 {
	a, b := r.uint32()>>5, r.uint32()>>6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}

// randbelow is random._randbelow_with_getrandbits(n), for 0 < n < 2³²,
// which random.choice uses.
func (r *pyRandom) randbelow(n int) int {
	k := bits.Len(uint(n))
	for {
		v := int(r.uint32() >> (32 - k))
		if v < n {
			return v
		}
	}
}

// gauss is random.gauss(0, 1): Box–Muller, keeping the second value for
// the next call.
func (r *pyRandom) gauss() float64 {
	if z := r.next; z != nil {
		r.next = nil
		return *z
	}
	x2pi := r.random() * (2 * math.Pi)
	g2rad := math.Sqrt(-2.0 * math.Log(1.0-r.random()))
	next := math.Sin(x2pi) * g2rad
	r.next = &next
	return math.Cos(x2pi) * g2rad
}
