package indexer

import "os"

// knownSums are the files a build has hashed for its generations' manifests, by identity:
// the same file on disk (os.SameFile), of the same size and modification time. A
// checkpoint's lexical segments are renamed into the next generation, where they keep their
// inode but not their name, and would otherwise be read again at every later checkpoint (the
// merged parts of a 40M build are gigabytes).
type knownSums []knownSum

type knownSum struct {
	info os.FileInfo
	sum  FileSum
}

// lookup returns the sum of the file info describes, if it is known.
func (k knownSums) lookup(info os.FileInfo) (FileSum, bool) {
	for _, e := range k {
		if e.sum.Size == info.Size() && e.info.ModTime().Equal(info.ModTime()) && os.SameFile(e.info, info) {
			return e.sum, true
		}
	}
	return FileSum{}, false
}
