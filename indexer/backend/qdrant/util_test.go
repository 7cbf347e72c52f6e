package qdrant

import "time"

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func unixUTC(s int64) time.Time { return time.Unix(s, 0).UTC() }
