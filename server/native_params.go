package server

import (
	"fmt"
	"math"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/kairos-rag/kairos/rerank"
	"github.com/kairos-rag/kairos/rerank/request"
)

// GET /v1/search takes one query as URL parameters (curl, a browser's address bar, a client
// that cannot send a body): the fields of QueryRequest by their JSON names, the filters' at
// the top level (date_from, date_to, source, language, block_type), and q for text. A list
// (rerank, source, language, block_type) repeats its parameter. The request is the POST
// body's type and goes through its validator, so both forms refuse and default alike.

// searchParam is where one URL parameter goes in a QueryRequest: the index path of its field.
type searchParam struct {
	index []int
	typ   reflect.Type
}

// searchParams maps every parameter name to its field, built once from QueryRequest's JSON
// names, so that a field added to the request is a parameter too.
var searchParams = func() map[string]searchParam {
	out := map[string]searchParam{}
	qt := reflect.TypeFor[QueryRequest]()
	for _, f := range reflect.VisibleFields(qt) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		if f.Type == reflect.TypeFor[FilterRequest]() {
			for _, ff := range reflect.VisibleFields(f.Type) {
				fname, _, _ := strings.Cut(ff.Tag.Get("json"), ",")
				if fname != "" && fname != "-" && ff.IsExported() {
					out[fname] = searchParam{index: append(append([]int(nil), f.Index...), ff.Index...), typ: ff.Type}
				}
			}
			continue
		}
		out[name] = searchParam{index: f.Index, typ: f.Type}
	}
	out["q"] = out["text"]
	return out
}()

// queryParams are the URL's query parameters, or a 400 naming what is malformed: url.Query
// skips a pair with a bad escape or a ';', and a filter so skipped would widen the search.
func queryParams(u *url.URL) (url.Values, error) {
	v, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, badRequest("malformed query string: %v", err)
	}
	return v, nil
}

// decodeSearchParams parses and validates the parameters of GET /v1/search into one query,
// as decodeSearchRequest does a POST body.
func decodeSearchParams(v url.Values, l limits) ([]rerank.Query, error) {
	qr, err := searchParamsRequest(v)
	if err != nil {
		return nil, err
	}
	if qr.IsZero() {
		return nil, badRequest(`missing the query: GET /v1/search?q=TEXT (or text=TEXT), with any field of POST /v1/search's query as a parameter`)
	}
	q, err := l.query("", qr)
	if err != nil {
		return nil, err
	}
	return []rerank.Query{q}, nil
}

// searchParamsRequest fills a QueryRequest from URL parameters, refusing unknown, repeated
// and malformed ones by name.
func searchParamsRequest(v url.Values) (QueryRequest, error) {
	var qr QueryRequest
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names) // the first bad parameter reported is always the same one
	if v.Has("q") && v.Has("text") {
		return qr, badRequest(`parameters "q" and "text" are the same field: give one`)
	}
	rv := reflect.ValueOf(&qr).Elem()
	for _, name := range names {
		p, ok := searchParams[name]
		if !ok {
			msg := fmt.Sprintf("unknown parameter %q", name)
			if s := request.SuggestField(QueryRequest{}, name); searchParams[s].typ != nil {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return qr, badRequest("%s", msg)
		}
		if err := setParam(rv.FieldByIndex(p.index), p.typ, name, v[name]); err != nil {
			return qr, err
		}
	}
	return qr, nil
}

// setParam sets field f of type t from the values of parameter name.
func setParam(f reflect.Value, t reflect.Type, name string, vals []string) error {
	if t == reflect.TypeFor[request.List]() {
		f.Set(reflect.ValueOf(request.List(vals)))
		return nil
	}
	if len(vals) != 1 {
		return badRequest("parameter %q is given %d times: want it once", name, len(vals))
	}
	s := vals[0]
	elem := t
	if t.Kind() == reflect.Pointer {
		elem = t.Elem()
	}
	val := reflect.New(elem).Elem()
	switch elem.Kind() {
	case reflect.String:
		val.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return badRequest("parameter %q: want true or false, got %q", name, s)
		}
		val.SetBool(b)
	case reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return badRequest("parameter %q: want an integer, got %q", name, s)
		}
		val.SetInt(int64(n))
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return badRequest("parameter %q: want a number, got %q", name, s)
		}
		val.SetFloat(x)
	default:
		return fmt.Errorf("parameter %q: field of type %s has no URL form", name, t) // a field added without one: a 500 a test catches
	}
	if t.Kind() == reflect.Pointer {
		p := reflect.New(elem)
		p.Elem().Set(val)
		f.Set(p)
		return nil
	}
	f.Set(val)
	return nil
}
