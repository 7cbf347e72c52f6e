package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kairos-rag/kairos/corpus"
	"github.com/kairos-rag/kairos/indexer"
)

// prepareUpdate readies `kairos index --update` of the index at loc. Without --model, a dense
// index's encoder is found as search finds it (findIndexModel: the folder the index records, or
// the models cache), since new and changed documents need it. An input whose new documents
// would get a source the index does not have (its file name, when --source is not given) is
// named, with the flag that files them under an existing one: documents an update replaces
// keep their source, new ones take their input's. Notes go to w; nil prints none.
func prepareUpdate(ctx context.Context, loc indexer.Location, m *modelFlags, inputs []string, source string, w io.Writer) indexModel {
	found := m.findIndexModel(ctx, loc)
	if w == nil {
		return found
	}
	if found.dir != "" {
		fmt.Fprintf(w, "kairos: %s\n", found.note)
	}
	if source != "" {
		return found
	}
	man, err := liveManifest(ctx, loc)
	if err != nil || len(man.Sources) == 0 {
		return found // the update reports a missing or unreadable index
	}
	have := slices.Sorted(maps.Keys(man.Sources))
	for _, in := range inputs {
		if src := corpus.DefaultSource(in); man.Sources[src] == 0 {
			fmt.Fprintf(w, "kairos: note: new documents of %s go under source %q, which the index does not have (it has %s); "+
				"documents it replaces keep theirs; --source %s files the new ones under the same\n",
				in, src, strings.Join(have, ", "), shellQuote(have[0]))
		}
	}
	return found
}

// needsModel adds to the error of an update that needed the index's encoder why none was
// found without --model.
func needsModel(err error, found indexModel) string {
	if !found.dense || found.dir != "" || !strings.Contains(err.Error(), "(--model)") {
		return ""
	}
	return "; without it none was found: " + found.note
}
