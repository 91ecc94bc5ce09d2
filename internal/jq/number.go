package jq

import (
	"strconv"
	"strings"
)

// jq 1.7 keeps a number literal as a decNumber and prints it with decNumber's
// to-scientific-string. Its context: emax 999999999, emin -999999999 and a
// precision so large that etiny, the smallest exponent a subnormal may have,
// is -1147483646; rounding is half-up. A value past emax is infinite to
// decNumber, and jq then prints DBL_MAX through its dtoa instead.
const (
	decEmax  = 999999999
	decEtiny = -1147483646
	// dtoaMax is DBL_MAX as jq's dtoa prints it. Read back by jq it is an
	// ordinary literal again, printed 1.7976931348623157E+308.
	dtoaMax = "1.7976931348623157e+308"
	// expLimit is where an absurd exponent saturates instead of overflowing
	// int64; it lies far beyond both ends of decNumber's range.
	expLimit = 1 << 40
)

// Decimal splits a valid JSON number literal into its sign, its coefficient
// digits and its exponent, so that its value is ±coef × 10^exp, as decNumber
// holds it: leading zeros are dropped ("0" for zero), trailing zeros are
// kept (1.50 is 150 × 10^-2). Absurd exponents saturate rather than overflow.
func Decimal(lit string) (neg bool, coef string, exp int64) {
	s := lit
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	mant, expPart := s, ""
	if k := strings.IndexAny(s, "eE"); k >= 0 {
		mant, expPart = s[:k], s[k+1:]
	}
	intPart, frac := mant, ""
	if k := strings.IndexByte(mant, '.'); k >= 0 {
		intPart, frac = mant[:k], mant[k+1:]
	}
	coef = strings.TrimLeft(intPart+frac, "0")
	if coef == "" {
		coef = "0"
	}
	expNeg := false
	if expPart != "" && (expPart[0] == '+' || expPart[0] == '-') {
		expNeg = expPart[0] == '-'
		expPart = expPart[1:]
	}
	for _, d := range expPart {
		if exp < expLimit {
			exp = exp*10 + int64(d-'0')
		}
	}
	if expNeg {
		exp = -exp
	}
	return neg, coef, exp - int64(len(frac))
}

// Number returns what jq 1.7 prints for the valid JSON number literal lit
// (jq -c .): 1e2 is 1E+2, 1.50 stays 1.50, 100e-2 is 1.00, 1e-7 is 1E-7, -0
// stays -0, 0e1000000000 is 0E+999999999, 1e-1147483647 rounds to
// 0E-1147483646 and 1e1000000000 is 1.7976931348623157e+308.
func Number(lit string) string {
	return string(appendNumber(nil, lit))
}

func appendNumber(b []byte, lit string) []byte {
	neg, coef, exp := Decimal(lit)
	if neg {
		b = append(b, '-')
	}
	if coef == "0" {
		// A zero only has its exponent clamped; it never overflows.
		return appendScientific(b, coef, min(max(exp, decEtiny), decEmax))
	}
	if exp < decEtiny {
		coef, exp = roundHalfUp(coef, decEtiny-exp), decEtiny
	}
	if exp+int64(len(coef))-1 > decEmax {
		return append(b, dtoaMax...)
	}
	return appendScientific(b, coef, exp)
}

// roundHalfUp drops the last k digits of coef, rounding half up, and
// returns the digits left ("0" when none are).
func roundHalfUp(coef string, k int64) string {
	if k > int64(len(coef)) {
		return "0"
	}
	keep, dropped := coef[:int64(len(coef))-k], coef[int64(len(coef))-k:]
	if keep == "" {
		keep = "0"
	}
	if dropped == "" || dropped[0] < '5' {
		return keep
	}
	digits := []byte(keep)
	for i := len(digits) - 1; i >= 0; i-- {
		if digits[i] < '9' {
			digits[i]++
			return string(digits)
		}
		digits[i] = '0'
	}
	return "1" + string(digits)
}

// appendScientific is decNumber's to-scientific-string of coef × 10^exp: the
// plain form when the exponent is not positive and the value is not below
// 1E-6 once adjusted, else one digit, the rest after a point, and E±n.
func appendScientific(b []byte, coef string, exp int64) []byte {
	adjusted := exp + int64(len(coef)) - 1
	switch {
	case exp == 0:
		return append(b, coef...)
	case exp < 0 && adjusted >= -6:
		point := int64(len(coef)) + exp // digits before the point
		if point > 0 {
			b = append(b, coef[:point]...)
			b = append(b, '.')
			return append(b, coef[point:]...)
		}
		b = append(b, "0."...)
		for ; point < 0; point++ {
			b = append(b, '0')
		}
		return append(b, coef...)
	}
	b = append(b, coef[0])
	if len(coef) > 1 {
		b = append(b, '.')
		b = append(b, coef[1:]...)
	}
	b = append(b, 'E')
	if adjusted >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, adjusted, 10)
}
