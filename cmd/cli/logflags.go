package cli

import (
	"flag"
	"io"
	"log/slog"
)

// logFlags are --log-level and --log-format, the same for every command that logs.
type logFlags struct {
	level, format string
}

// register adds the flags to fs; defLevel is the command's default level ("info" for serve,
// whose info lines are its access log; "warn" for batch commands, where progress has its own
// line).
func (l *logFlags) register(fs *flag.FlagSet, defLevel string) {
	fs.StringVar(&l.level, "log-level", defLevel, "log `level`: debug, info, warn or error")
	fs.StringVar(&l.format, "log-format", "text", "log `format`: text (key=value) or json (one object a line)")
}

// logger validates the flags and returns the logger they describe, writing to w.
func (l *logFlags) logger(fs *flag.FlagSet, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, usageErr(fs, "--log-level %q: want debug, info, warn or error", l.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch l.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageErr(fs, "--log-format %q: want text or json", l.format)
}
