package chat

// contentOf returns a labelled stage's value read for its content (a closing offer or a grade
// on the value's lines left out), or the value as parsed when nothing is left.
func contentOf(value string) string {
	if c, _, err := readContent(value, nil, false); err == nil {
		return c
	}
	return value
}

// parseLabeledContent reads a stage's "Label: value" output as ParseLabeled does, from the
// output as written or, failing that, from its content (a generic model's preamble, quotes or
// another label around the value left out); labels are the labels that may stand for label.
func parseLabeledContent(out, label string, labels func(string) bool) (string, error) {
	v, err := ParseLabeled(out, label)
	if err == nil {
		return contentOf(v), nil
	}
	c, _, cerr := readContent(out, labels, false)
	if cerr != nil {
		return "", err
	}
	if v, err2 := ParseLabeled(c, label); err2 == nil {
		return v, nil
	}
	return "", err
}

// parseClarified reads MPC's clarifier output.
func parseClarified(out string) (string, error) {
	return parseLabeledContent(out, "clarified", clarifiedLabel)
}

// parseMemory reads MPC's memory processor output: its "Memory:" line, after the reasoning.
func parseMemory(out string) (string, error) {
	return parseLabeledContent(out, "memory", func(l string) bool { return lastWordIn(l, "memory") })
}

// parseKnowledgeContent reads MSDP's knowledge output: the first line of its content, then as
// ParseKnowledge reads it.
func parseKnowledgeContent(out string) (string, error) {
	c, _, err := readContent(out, knowledgeLabel, true)
	if err != nil {
		return ParseKnowledge(out)
	}
	return ParseKnowledge(c)
}
