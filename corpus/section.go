package corpus

import "strings"

// sectionPath tracks where a reader is in a document's headings, the same way for wikitext and
// HTML: a section is named by its heading path ("History > Early life"), and a reference-like
// heading (wkDroppedSection) drops its section and every subsection under it.
type sectionPath struct {
	path   [7]string // heading names by level 1..6
	name   string    // current section name: the heading path joined with " > "
	dropAt int       // level of the dropped heading being skipped; 0 when none
}

// enter starts the section of a heading at level (1..6).
func (s *sectionPath) enter(level int, name string) {
	if s.dropAt > 0 && level > s.dropAt {
		return
	}
	s.dropAt = 0
	if wkDroppedSection(name) {
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
	s.name = strings.Join(parts, " > ")
}
