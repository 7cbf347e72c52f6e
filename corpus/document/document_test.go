package document

import (
	"maps"
	"testing"
)

func TestSectionPath(t *testing.T) {
	type heading struct {
		level int
		name  string
	}
	tests := []struct {
		name     string
		headings []heading
		want     string
		dropping bool
	}{
		{"lead", nil, "", false},
		{"nested", []heading{{2, "History"}, {3, "Early life"}}, "History > Early life", false},
		{"sibling resets children", []heading{{2, "A"}, {3, "B"}, {2, "C"}}, "C", false},
		{"skipped level", []heading{{2, "A"}, {4, "C"}}, "A > C", false},
		{"dropped", []heading{{2, "A"}, {2, "References"}}, "A", true},
		{"subsection of dropped", []heading{{2, "See also"}, {3, "Sub"}}, "", true},
		{"after dropped", []heading{{2, "External links"}, {3, "Sub"}, {2, "Works"}}, "Works", false},
		{"translated", []heading{{2, "Einzelnachweise"}}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p SectionPath
			for _, h := range tt.headings {
				p.Enter(h.level, h.name)
			}
			if p.Name != tt.want || p.Dropping() != tt.dropping {
				t.Errorf("name %q dropping %v, want %q %v", p.Name, p.Dropping(), tt.want, tt.dropping)
			}
		})
	}
}

func TestReadStatsCloneOwnsItsMaps(t *testing.T) {
	s := ReadStats{Documents: 2, Skipped: map[string]int{SkipRedirect: 1},
		Languages: map[string]int{"en": 2}, Columns: map[string]string{"question": "Q"}}
	c := s.Clone()
	s.Skipped[SkipRedirect]++
	s.Languages["en"]++
	s.Columns["question"] = "X"
	if c.Documents != 2 || c.Skipped[SkipRedirect] != 1 || c.Languages["en"] != 2 || c.Columns["question"] != "Q" {
		t.Errorf("clone changed with the original: %+v", c)
	}
	empty := ReadStats{}.Clone()
	if empty.Skipped == nil || empty.Languages != nil || empty.Columns != nil {
		t.Errorf("clone of zero stats: %+v", empty)
	}
	if !maps.Equal(c.Skipped, map[string]int{SkipRedirect: 1}) {
		t.Errorf("skipped %v", c.Skipped)
	}
}
