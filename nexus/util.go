package nexus

import "strconv"

func fmtf(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
