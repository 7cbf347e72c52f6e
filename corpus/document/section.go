package document

import "strings"

// SectionPath tracks where a reader is in a document's headings, the same way for wikitext and
// HTML: a section is named by its heading path ("History > Early life"), and a reference-like
// heading (DroppedSection) drops its section and every subsection under it. Embed it in a
// section writer and call Enter at every heading.
type SectionPath struct {
	path   [7]string // heading names by level 1..6
	Name   string    // current section name: the heading path joined with " > "
	dropAt int       // level of the dropped heading being skipped; 0 when none
}

// Dropping reports whether the current section is dropped (its text is to be skipped).
func (s *SectionPath) Dropping() bool { return s.dropAt > 0 }

// Enter starts the section of a heading at level (1..6).
func (s *SectionPath) Enter(level int, name string) {
	if s.dropAt > 0 && level > s.dropAt {
		return
	}
	s.dropAt = 0
	if DroppedSection(name) {
		s.dropAt = level
		return
	}
	s.path[level] = name
	for k := level + 1; k < len(s.path); k++ {
		s.path[k] = ""
	}
	var parts []string
	for _, p := range s.path[1 : level+1] {
		if p != "" {
			parts = append(parts, p)
		}
	}
	s.Name = strings.Join(parts, " > ")
}

// DroppedSection reports whether a heading names a section that holds only references and
// links ("References", "See also", "External links", and their translations).
func DroppedSection(name string) bool {
	switch strings.ToLower(name) {
	case "references", "notes", "footnotes", "citations", "sources", "see also", "external links",
		"further reading", "notes and references", "references and notes", "bibliography",
		"works cited", "reference", "external link", "related articles", "other websites",
		"notes and citations", "sources and references", "references and further reading",
		"източници", "бележки", "външни препратки", "вижте също", "литература",
		"einzelnachweise", "weblinks", "siehe auch", "références", "liens externes", "voir aussi",
		"referencias", "enlaces externos", "véase también":
		return true
	}
	return false
}
