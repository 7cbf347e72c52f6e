package mediawiki

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// parseHeader reads <siteinfo> once: the base URL and the namespace names. A missing
// siteinfo leaves the defaults (English Wikipedia URLs, built-in namespace names); a malformed
// one is an error naming its line: read past, a German dump would be indexed as English,
// with English Wikipedia's URLs and namespace names.
func (r *scanner) parseHeader() error {
	if r.headerOK {
		return nil
	}
	r.headerOK = true
	h := r.header
	r.header = nil
	r.sawRoot = bytes.Contains(h, []byte("<mediawiki"))
	start := bytes.Index(h, []byte("<siteinfo"))
	end := bytes.Index(h, []byte("</siteinfo>"))
	if start < 0 || end < start {
		return nil
	}
	line := 1 + bytes.Count(h[:start], []byte("\n")) // the header is the input from its first line
	h, _ = repairXMLText(h[start : end+len("</siteinfo>")])
	var si struct {
		DBName     string `xml:"dbname"`
		Base       string `xml:"base"`
		Namespaces []struct {
			Key  int    `xml:"key,attr"`
			Name string `xml:",chardata"`
		} `xml:"namespaces>namespace"`
	}
	if err := xml.Unmarshal(h, &si); err != nil {
		if se, ok := err.(*xml.SyntaxError); ok {
			return fmt.Errorf("%s: <siteinfo> (line %d): XML syntax error on line %d: %s", r.file, line, line+se.Line-1, se.Msg)
		}
		return fmt.Errorf("%s: <siteinfo> (line %d): %w", r.file, line, err)
	}
	r.site.language = Language(si.DBName, si.Base)
	if k := strings.LastIndexByte(si.Base, '/'); k > len("https://") && strings.Contains(si.Base, "://") {
		r.site.base = si.Base[:k+1]
	}
	r.site.nsByName = map[string]int{}
	r.site.cleaner.FileNS = map[string]bool{}
	r.site.cleaner.CategoryNS = map[string]bool{}
	for _, ns := range si.Namespaces {
		name := strings.ToLower(strings.TrimSpace(ns.Name))
		if name == "" {
			continue
		}
		r.site.nsByName[name] = ns.Key
		switch ns.Key {
		case 6, -2:
			r.site.cleaner.FileNS[name] = true
		case 14:
			r.site.cleaner.CategoryNS[name] = true
		}
	}
	return nil
}
