package search

import "fmt"

// FusionError is a hybrid fusion setting CheckFusion refused. Field is the setting's JSON
// name ("fusion", "alpha", "rrf_k"), so that the request parser can point at it.
type FusionError struct {
	Field string
	Msg   string
}

func (e *FusionError) Error() string { return e.Field + ": " + e.Msg }

// CheckFusion is the one validation of hybrid fusion settings, as Options and a Request hold
// them and as rerank/request parses them: fusion "" (keep the index's or the default), rrf
// or convex; alpha 0 (keep) or a weight in (0,1]; rrfK 0 (keep) or positive. A NaN alpha is
// refused: it would make every fused score NaN.
func CheckFusion(f Fusion, alpha float64, rrfK int) error {
	switch f {
	case "", FusionRRF, FusionConvex:
	default:
		return &FusionError{"fusion", fmt.Sprintf("%q: want rrf or convex", string(f))}
	}
	if alpha != 0 && !(alpha > 0 && alpha <= 1) {
		return &FusionError{"alpha", fmt.Sprintf("%v: want a weight in (0,1]", alpha)}
	}
	if rrfK < 0 {
		return &FusionError{"rrf_k", fmt.Sprintf("%d is negative", rrfK)}
	}
	return nil
}
