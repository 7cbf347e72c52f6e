package timex

import (
	"encoding/json"
	"fmt"
	"time"
)

// timeQANow is a fixed "now" for tests over TimeQA (none of its questions are relative).
var timeQANow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type timeQAPage struct {
	paras     []string
	questions []timeQAQuestion
}

type timeQAQuestion struct {
	text string
	para int
}

// decodeTimeQA reads the TimeQA human-annotated format: a list of pages, each with paras and
// questions [text, [{para, ...}, ...]]; only the first gold paragraph is kept.
func decodeTimeQA(data []byte) ([]timeQAPage, error) {
	var raw []struct {
		Paras     []string            `json:"paras"`
		Questions [][]json.RawMessage `json:"questions"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	var pages []timeQAPage
	for i, r := range raw {
		p := timeQAPage{paras: r.Paras}
		for j, q := range r.Questions {
			var text string
			var golds []struct {
				Para int `json:"para"`
			}
			if len(q) != 2 || json.Unmarshal(q[0], &text) != nil || json.Unmarshal(q[1], &golds) != nil || len(golds) == 0 {
				return nil, fmt.Errorf("page %d question %d: unexpected shape", i, j)
			}
			p.questions = append(p.questions, timeQAQuestion{text: text, para: golds[0].Para})
		}
		pages = append(pages, p)
	}
	return pages, nil
}
