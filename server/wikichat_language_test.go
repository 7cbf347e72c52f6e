package server

import (
	"slices"
	"testing"
)

// TestWikiChatLanguageCodes: WikiChat's language filters (2.1's search_filters, 2.0's
// "languages") compare codes as /v1 and search do, through langanalysis.Normalize: case,
// region and script do not count, so "en-US" and "EN" are the "en" of an English index, on a
// single-language index (where the server resolves the filter itself) and on a
// multilingual one (where it must not mistake two spellings of a code for two languages).
func TestWikiChatLanguageCodes(t *testing.T) {
	filter := func(op, v string) string {
		return `{"field_name":"language","filter_type":"` + op + `","field_value":"` + v + `"}`
	}
	body := func(filters ...string) string {
		b := `{"query":"malaria","num_blocks":3,"search_filters":[`
		for i, f := range filters {
			if i > 0 {
				b += ","
			}
			b += f
		}
		return b + `]}`
	}
	tests := []struct {
		name   string
		lang   string // the index's language; "" multilingual
		v20    bool   // decode as WikiChat 2.0 (/v2/search)
		body   string
		none   bool
		langs  []string // the Languages passed to search (multilingual)
		except []string // the ExcludeLanguages passed to search (multilingual)
	}{
		{"eq en-US on en", "en", false, body(filter("eq", "en-US")), false, nil, nil},
		{"eq EN on en", "en", false, body(filter("eq", "EN")), false, nil, nil},
		{"eq en_GB on en", "en", false, body(filter("eq", "en_GB")), false, nil, nil},
		{"eq fa on en", "en", false, body(filter("eq", "fa")), true, nil, nil},
		{"ne en-US on en", "en", false, body(filter("ne", "en-US")), true, nil, nil},
		{"ne EN on en", "en", false, body(filter("ne", "EN")), true, nil, nil},
		{"ne fa on en", "en", false, body(filter("ne", "fa")), false, nil, nil},
		{"eq en on an index of en-US", "en-US", false, body(filter("eq", "en")), false, nil, nil},
		{"2.0 languages en-US on en", "en", true, `{"query":"malaria","num_blocks":3,"languages":["en-US"]}`, false, nil, nil},
		{"2.0 languages fa on en", "en", true, `{"query":"malaria","num_blocks":3,"languages":"fa"}`, true, nil, nil},
		{"multilingual eq de-DE", "", false, body(filter("eq", "de-DE")), false, []string{"de"}, nil},
		{"multilingual eq de then DE", "", false, body(filter("eq", "de"), filter("eq", "DE")), false, []string{"de"}, nil},
		{"multilingual eq de then fr", "", false, body(filter("eq", "de"), filter("eq", "fr")), true, []string{"fr"}, nil},
		{"multilingual ne FR", "", false, body(filter("ne", "FR")), false, nil, []string{"fr"}},
		{"multilingual 2.0 languages and filter", "", true,
			`{"query":"malaria","num_blocks":3,"languages":["DE","fr"],"search_filters":[` + filter("eq", "de-AT") + `]}`,
			false, []string{"de"}, nil},
		{"multilingual 2.0 languages and other filter", "", true,
			`{"query":"malaria","num_blocks":3,"languages":["fr"],"search_filters":[` + filter("eq", "de") + `]}`,
			true, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var o Options
			o.SetDefaults()
			o.Language = tc.lang
			decode := decodeWikiChatRequest
			if tc.v20 {
				decode = decodeWikiChatV20
			}
			req, err := decode([]byte(tc.body), o)
			if err != nil {
				t.Fatal(err)
			}
			f := req.qs[0].Filters
			if f.None != tc.none {
				t.Errorf("None %v, want %v (filters %+v)", f.None, tc.none, f)
			}
			if !tc.none && (!slices.Equal(f.Languages, tc.langs) || !slices.Equal(f.ExcludeLanguages, tc.except)) {
				t.Errorf("languages %q except %q, want %q except %q", f.Languages, f.ExcludeLanguages, tc.langs, tc.except)
			}
		})
	}
}
