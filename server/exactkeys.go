package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// exactKeys refuses what encoding/json lets through in a request body: a field named in
// another case than the API's ({"TEXT":"a"} read as "text", and {"text":"a","Text":"b"}
// searched "b") and a key repeated in one object (the last one won). root is the type the
// body is decoded into; under a type that decodes itself (json.Unmarshaler) or a map, only
// repeats are refused. Malformed JSON is left to the decoder, which names where.
func exactKeys(body []byte, root reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	err := walkKeys(dec, root, "", 0)
	if _, ok := err.(*apiError); ok {
		return err
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// maxKeyDepth bounds the nesting walkKeys follows: no request nests deeper than a few levels,
// and each level holds a longer path: a megabyte of "[" took gigabytes before the bound.
const maxKeyDepth = 32

// walkKeys reads one JSON value from dec, checking its objects' keys against t (nil: not
// known). path is where the value is, for the error ("queries[1].filters"); depth is its
// nesting.
func walkKeys(dec *json.Decoder, t reflect.Type, path string, depth int) error {
	if depth > maxKeyDepth {
		return badRequest("JSON nested deeper than %d levels at %s: no request field nests so deep", maxKeyDepth, path)
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (reflect.PointerTo(t).Implements(unmarshalerType) || t.Kind() == reflect.Interface) {
		t = nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	at := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			if seen[key] {
				return badRequest("field %q appears twice in one object: give it once", at(key))
			}
			seen[key] = true
			var child reflect.Type
			switch {
			case t == nil:
			case t.Kind() == reflect.Map:
				child = t.Elem()
			case t.Kind() == reflect.Struct:
				if f, ok := jsonField(t, key); ok {
					child = f.Type
				} else if name := caseVariant(t, key); name != "" {
					return badRequest("field %q: field names are lower case as the API spells them: did you mean %q?", at(key), name)
				}
			}
			if err := walkKeys(dec, child, at(key), depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token() // '}'
		return err
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, elem, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	return nil
}

// caseVariant is the JSON name of struct t's field that name spells in another case, or "".
func caseVariant(t reflect.Type, name string) string {
	for _, f := range reflect.VisibleFields(t) {
		if n, ok := jsonName(f); ok && strings.EqualFold(n, name) {
			return n
		}
	}
	return ""
}
