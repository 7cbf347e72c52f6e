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
		{"a war that was a conflict", "Reasoning: The evidence states the Korean War was a conflict fought 1950–53, which matches the claim.\nVerdict: SUPPORTS", Supports, false},
		{"False Bay", "Reasoning: The evidence says False Bay is on the coast of South Africa, as the claim states.\nVerdict: SUPPORTS", Supports, false},
		{"The Wrong Trousers", "Reasoning: The evidence says The Wrong Trousers won an Oscar in 1994, which is what the claim says.\nVerdict: SUPPORTS", Supports, false},
		{"false teeth", "Reasoning: The evidence says George Washington wore false teeth, exactly as claimed.\nVerdict: SUPPORTS", Supports, false},
		{"spelling differs", "Reasoning: The evidence says British spelling differs from American spelling, which is the claim.\nVerdict: SUPPORTS", Supports, false},
		{"a dialect which differs", "Reasoning: The evidence calls Swiss German a dialect which differs from Standard German; the claim says the same.\nVerdict: SUPPORTS", Supports, false},
		{"inconsistent quoted", "Reasoning: The evidence says early accounts of the battle were inconsistent, and the claim says so too.\nVerdict: SUPPORTS", Supports, false},
		{"proof by contradiction", "Reasoning: The evidence says Euclid proved it by contradiction, as the claim states.\nVerdict: SUPPORTS", Supports, false},
		{"a false flag", "Reasoning: The evidence says it was a false flag operation, as the claim says.\nVerdict: SUPPORTS", Supports, false},
		{"contradicted earlier treaties", "Reasoning: The evidence says the 1919 treaty contradicted earlier treaties that France signed, which the claim states.\nVerdict: SUPPORTS", Supports, false},
		{"is clearly wrong", "Reasoning: The claim is clearly wrong about the year.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"which is false", "Reasoning: The claim says 1850, which is false; the evidence says 1922.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"the two differ", "Reasoning: The claim and the evidence differ on the year.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"contradicted by", "Reasoning: The claim is contradicted by the evidence, which says 1922.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"there is a contradiction", "Reasoning: There is a contradiction: the evidence says 1922.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"it is wrong", "Reasoning: The evidence says 1922, so it is wrong.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"reasoning after the label", "Verdict: SUPPORTS\nReasoning: The claim says Napoleon in 1850, so the claim is false.", NotEnoughInfo, true},
		{"reasoning between labels", "Verdict: SUPPORTS\nThe evidence says nothing about 1850.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"only partially supports", "Reasoning: The evidence only partially supports the claim.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"says nothing about", "Reasoning: The evidence says nothing about McCollum.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"is silent on", "Reasoning: The passage is silent on the year.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"a preliminary verdict that disagrees", "Preliminary verdict: REFUTES\nReasoning: On a second look it fits.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"fully supports", "Reasoning: The evidence fully supports the claim.\nVerdict: SUPPORTS", Supports, false},
		{"agreeing reasoning after the label", "Verdict: SUPPORTS\nReasoning: The evidence gives 1922 and McCollum, as the claim does.", Supports, false},
		{"my verdict", "Reasoning: The evidence names McCollum and 1922.\nMy verdict: SUPPORTS", Supports, false},
		{"supports only part", "Reasoning: The evidence supports only part of the claim: the year.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"supports the claim only in part", "Reasoning: The evidence supports the claim only in part.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"a hedge between labels", "Verdict: SUPPORTS\nHmm, the evidence gives 1923, not 1922.\nVerdict: SUPPORTS", NotEnoughInfo, true},
		{"a jury's verdict quoted", "Reasoning: The evidence says:\n- The jury's verdict: not guilty on all counts (1995).\nThe claim says he was acquitted in 1995, which matches.\nVerdict: SUPPORTS", Supports, false},
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
