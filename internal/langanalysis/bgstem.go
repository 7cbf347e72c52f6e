package langanalysis

// stemBulgarian is a light stemmer for Bulgarian: it strips the definite article and the
// plural and the gender endings of nouns and adjectives, so that "град", "градът",
// "градове" and "градовете" share a stem. The rules are those of Nakov's BulStem light
// stemmer as Lucene's BulgarianStemmer applies them ("Building an Inflectional Stemmer for
// Bulgarian", 2003), written from the rules; w is lower case. Words under four letters are
// left as they are.
func stemBulgarian(w []rune) []rune {
	n := len(w)
	if n < 4 {
		return w
	}
	if n > 5 && hasSuffix(w, n, "ища") {
		return w[:n-3]
	}
	n = bgArticle(w, n)
	n = bgPlural(w, n)
	if n > 3 {
		if hasSuffix(w, n, "я") {
			n--
		}
		if hasSuffix(w, n, "а") || hasSuffix(w, n, "о") || hasSuffix(w, n, "е") {
			n--
		}
	}
	if n > 4 && hasSuffix(w, n, "ен") { // "-ен" -> "-н": the vowel drops in other forms
		w[n-2] = 'н'
		n--
	}
	if n > 5 && w[n-2] == 'ъ' { // "-ъX" -> "-X", the same vowel alternation
		w[n-2] = w[n-1]
		n--
	}
	return w[:n]
}

// bgArticle strips a definite article ("-ът", "-ят", "-та", "-то", "-те", "-ия", "-ият").
func bgArticle(w []rune, n int) int {
	if n > 6 && hasSuffix(w, n, "ият") {
		return n - 3
	}
	if n > 5 {
		for _, s := range []string{"ът", "то", "те", "та", "ия"} {
			if hasSuffix(w, n, s) {
				return n - 2
			}
		}
	}
	if n > 4 && hasSuffix(w, n, "ят") {
		return n - 2
	}
	return n
}

// bgPlural strips a plural ending, undoing the consonant changes it causes ("-ци" <- "-к",
// "-зи" <- "-г", "-си" <- "-х").
func bgPlural(w []rune, n int) int {
	if n > 6 {
		switch {
		case hasSuffix(w, n, "овци"):
			return n - 3 // keeps the "о"
		case hasSuffix(w, n, "ове"):
			return n - 3
		case hasSuffix(w, n, "еве"):
			w[n-3] = 'й'
			return n - 2
		}
	}
	if n > 5 {
		switch {
		case hasSuffix(w, n, "ища"):
			return n - 3
		case hasSuffix(w, n, "та"):
			return n - 2
		case hasSuffix(w, n, "ци"):
			w[n-2] = 'к'
			return n - 1
		case hasSuffix(w, n, "зи"):
			w[n-2] = 'г'
			return n - 1
		case w[n-3] == 'е' && w[n-1] == 'и':
			w[n-3] = 'я' // "-е.и" <- "-я.": the vowel alternates in the plural
			return n - 1
		}
	}
	if n > 4 {
		if hasSuffix(w, n, "си") {
			w[n-2] = 'х'
			return n - 1
		}
		if hasSuffix(w, n, "и") {
			return n - 1
		}
	}
	return n
}

// hasSuffix reports whether w[:n] ends with s.
func hasSuffix(w []rune, n int, s string) bool {
	r := []rune(s)
	if len(r) > n {
		return false
	}
	for i := range r {
		if w[n-len(r)+i] != r[i] {
			return false
		}
	}
	return true
}
