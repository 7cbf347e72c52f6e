package wikitext

import (
	"strings"
)

// link renders the inside of a [[...]] link.
func (c *Cleaner) link(inner string, depth int, b *strings.Builder) {
	target, label, piped := strings.Cut(inner, "|")
	target = strings.TrimSpace(target)
	visible := strings.HasPrefix(target, ":") // [[:Category:X]] is a link, not a tag
	target = strings.TrimLeft(target, ":")
	if k := strings.IndexByte(target, ':'); k > 0 {
		prefix := strings.ToLower(strings.TrimSpace(target[:k]))
		if !visible && (c.isFileNS(prefix) || c.isCategoryNS(prefix) || isLangCode(prefix)) {
			return
		}
		if !piped && isInterwiki(prefix) {
			target = target[k+1:]
		}
	}
	switch {
	case piped && strings.TrimSpace(label) == "":
		b.WriteString(pipeTrick(target))
	case piped:
		if depth < maxDepth {
			c.inline(label, depth+1, b)
		}
	case depth < maxDepth:
		c.inline(strings.TrimPrefix(target, "#"), depth+1, b)
	}
}

// pipeTrick renders [[Target (disambiguation)|]] as "Target" and [[ns:Target|]] as "Target".
func pipeTrick(target string) string {
	if k := strings.IndexByte(target, ':'); k >= 0 {
		target = target[k+1:]
	}
	if k := strings.Index(target, " ("); k > 0 {
		target = target[:k]
	}
	if k := strings.IndexByte(target, ','); k > 0 {
		target = target[:k]
	}
	return strings.TrimSpace(target)
}

func (c *Cleaner) isFileNS(p string) bool {
	switch p {
	case "file", "image", "media", "файл", "картинка", "изображение", "datei", "bild", "fichier",
		"archivo", "imagen", "ficheiro", "imagem", "plik", "bestand":
		return true
	}
	return c.FileNS[p]
}

func (c *Cleaner) isCategoryNS(p string) bool {
	switch p {
	case "category", "категория", "kategorie", "catégorie", "categoría", "categoria", "kategoria",
		"categorie", "kategori":
		return true
	}
	return c.CategoryNS[p]
}

// isLangCode recognises interlanguage prefixes ("de", "zh-yue", "simple", "be-tarask"): the
// language editions of Wikipedia and the aliases MediaWiki's interwiki table maps to them. A
// list, not a shape: "[[CSI: Miami]]" and "[[Ion: a story]]" are links to articles whose titles
// hold a colon, and any two or three letters before one read as a language code dropped them.
func isLangCode(p string) bool {
	return langCodes[p]
}

// langCodes are the interlanguage prefixes of Wikipedia (meta.wikimedia.org's List of
// Wikipedias, closed editions included, as old dumps link to them), with the aliases
// MediaWiki's interwiki table accepts for some of them (last line: "zh-tw", "jp", "dk", ...).
var langCodes = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`
		aa ab ace ady af ak als alt am ami an ang ann anp ar arc ary arz as ast atj av avk awa ay
		az azb ba ban bar bat-smg bbc bcl bdr be be-tarask be-x-old bew bg bh bi bjn blk bm bn bo
		bpy br bs btm bug bxr ca cbk-zam cdo ce ceb ch cho chr chy ckb co cr crh cs csb cu cv cy
		da dag de dga din diq dsb dtp dty dv dz ee el eml en eo es et eu ext fa fat ff fi fiu-vro
		fj fo fon fr frp frr fur fy ga gag gan gcr gd gl glk gn gom gor got gpe gu guc gur guw gv
		ha hak haw he hi hif ho hr hsb ht hu hy hyw hz ia iba id ie ig igl ii ik ilo inh io is it
		iu ja jam jbo jv ka kaa kab kbd kbp kcg kg kge ki kj kk kl km kn knc ko koi kr krc ks ksh
		ku kus kv kw ky la lad lb lbe lez lfn lg li lij lld lmo ln lo lrc lt ltg lv mad mai
		map-bms mdf mg mh mhr mi min mk ml mn mni mnw mos mr mrj ms mt mus mwl my myv mzn na nah
		nap nds nds-nl ne new ng nia nl nn no nov nqo nr nrm nso nup nv ny oc olo om or os pa pag
		pam pap pcd pcm pdc pfl pi pih pl pms pnb pnt ps pt pwn qu rm rmy rn ro roa-rup roa-tara
		rsk ru rue rw sa sah sat sc scn sco sd se sg sh shi shn si simple sk skr sl sm smn sn so sq
		sr srn ss st stq su sv sw syl szl szy ta tay tcy tdd te tet tg th ti tig tk tl tly tn to
		tpi tr trv ts tt tum tw ty tyv udm ug uk ur uz ve vec vep vi vls vo wa war wo wuu xal xh
		xmf yi yo yue za zea zgh zh zh-classical zh-min-nan zh-yue zu
		nb lzh nan rup sgs vro
		mo tlh tokipona tp zh-tw zh-cn zh-hk zh-sg zh-mo zh-hans zh-hant jp dk cz epo minnan cmn
	`) {
		m[c] = true
	}
	return m
}()

func isInterwiki(p string) bool {
	switch p {
	case "w", "wikipedia", "wikt", "wiktionary", "s", "wikisource", "q", "wikiquote", "n",
		"wikinews", "b", "wikibooks", "v", "wikiversity", "voy", "wikivoyage", "commons", "meta",
		"species", "wikispecies", "d", "wikidata", "mw", "mediawikiwiki":
		return true
	}
	return false
}

// urlSchemes are the protocols MediaWiki accepts in external links.
var urlSchemes = [...]string{"http://", "https://", "ftp://", "ftps://", "//", "mailto:", "news:",
	"irc://", "ircs://", "gopher://", "telnet://", "nntp://", "worldwind://", "sftp://", "git://",
	"svn://", "urn:", "geo:", "tel:", "sip:", "xmpp:", "magnet:"}

// extLink renders "[http://x label]" as "label" and drops "[http://x]". s[i] is a lone '['.
// unclosedTo is where the last unclosed link's search for its ']' stopped (a newline or the end
// of s): a link opened before it is unclosed too, which it knows without searching again, so
// a line of unclosed links costs one scan, not one each.
func (c *Cleaner) extLink(s string, i, depth int, b *strings.Builder, unclosedTo *int) int {
	rest := s[i+1:]
	isURL := false
	for _, sc := range urlSchemes {
		if len(rest) >= len(sc) && strings.EqualFold(rest[:len(sc)], sc) {
			isURL = true
			break
		}
	}
	if !isURL {
		b.WriteByte('[')
		return i + 1
	}
	if i < *unclosedTo {
		return i + 1
	}
	end := strings.IndexAny(rest, "]\n")
	if end < 0 || rest[end] == '\n' {
		*unclosedTo = len(s)
		if end >= 0 {
			*unclosedTo = i + 1 + end
		}
		return i + 1 // unclosed: MediaWiki shows the bare URL, which the text keeps
	}
	if sp := strings.IndexAny(rest[:end], " \t"); sp >= 0 && depth < maxDepth {
		c.inline(strings.TrimSpace(rest[sp+1:end]), depth+1, b)
	}
	return i + 1 + end + 1
}
