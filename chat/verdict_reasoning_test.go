package chat

import "testing"

// A SUPPORTS label whose reasoning argues the other way is not a verdict (issue 24); reasoning
// that argues for the claim, including "does not contradict", keeps it.
func TestParseVerdictReasoningAgainstLabel(t *testing.T) {
	tests := []struct {
		name, out string
		want      Verdict
		wantErr   bool
	}{
		{"does not support", "Reasoning: The evidence does not support the claim; it names McCollum.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"doesn't mention", "Reasoning: The article doesn't mention 1850 at all.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"contradicts", "Reasoning: The passage says 1922, which contradicts the claim.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"no evidence", "Reasoning: There is no evidence about Napoleon here.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"not enough information", "Reasoning: Not enough information to decide.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"not stated", "Reasoning: The year is not stated in the evidence.\n\nVerdict: **SUPPORTS**", NotEnoughInfo, true},
		{"fails to confirm", "Reasoning: The evidence fails to confirm who discovered it.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"does not match", "Reasoning: The evidence says 1922, which does not match the claim's 1850.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"doesn't match", "Reasoning: The year doesn't match.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"is wrong", "Reasoning: The claim's year is wrong; the evidence says 1922.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"is incorrect", "Reasoning: The discoverer named in the claim is incorrect.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"is false", "Reasoning: According to the evidence the claim is false.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"inconsistent", "Reasoning: The claim is inconsistent with the evidence.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"differs", "Reasoning: The date in the evidence differs from the claim.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"conflicts", "Reasoning: The evidence conflicts with the claim.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"contradicting", "Reasoning: The evidence names McCollum, contradicting the claim.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"agreeing reasoning", "Reasoning: The evidence says it was identified in 1922 by McCollum, which matches the claim.\nVerdict: SUPPORTS", Supports, false},
		{"does not contradict", "Reasoning: The evidence states the date directly and does not contradict any part of the claim.\nVerdict: SUPPORTS", Supports, false},
		{"no contradiction", "Reasoning: Both say 1922; no contradiction.\nVerdict: SUPPORTS", Supports, false},
		{"a contradiction after a negated verb", "Reasoning: The evidence does not mention the year and contradicts the name.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"matches", "Reasoning: The year and the name match the evidence exactly.\nVerdict: SUPPORTS", Supports, false},
		{"is not wrong", "Reasoning: The claim is not wrong: the evidence says 1922 as well.\nVerdict: SUPPORTS", Supports, false},
		{"nothing inconsistent", "Reasoning: Nothing in the evidence is inconsistent with the claim.\nVerdict: SUPPORTS", Supports, false},
		{"refutes keeps its reasoning", "Reasoning: The evidence does not support this; it says 1922.\nVerdict: REFUTES", Refutes, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _, err := ParseVerdict(tt.out)
			if v != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("ParseVerdict = %s, %v; want %s, error %v", v, err, tt.want, tt.wantErr)
			}
		})
	}
}
