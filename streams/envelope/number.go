package envelope

import (
	"math/big"
	"strings"
)

// canonicalNumber rewrites a JSON number as sign, significant digits and a
// decimal exponent ("-12e-1" for -1.20), so two spellings of the same decimal
// value compare equal as strings. It works on the text rather than through
// float64 (which rounds above 2^53) or big.Rat (which would expand "1e999999999"
// into a billion-digit integer). The input is a valid JSON number, as produced
// by encoding/json with UseNumber.
func canonicalNumber(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")

	exp := new(big.Int)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		// SetString accepts the optional "+" or "-" JSON allows after e.
		if _, ok := exp.SetString(s[i+1:], 10); !ok {
			return "invalid:" + s // unreachable for valid JSON; never equals a number
		}
		s = s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	digits := intPart + frac
	exp.Sub(exp, big.NewInt(int64(len(frac))))

	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0" // 0, -0, 0.00 and 0e5 are all zero
	}
	trimmed := strings.TrimRight(digits, "0")
	exp.Add(exp, big.NewInt(int64(len(digits)-len(trimmed))))

	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + exp.String()
}
