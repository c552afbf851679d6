package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// readMessage reads the text of a2a send URL - from standard input: all of
// it, less one trailing newline (echo's, or an editor's).
func (e *env) readMessage() (string, error) {
	if f, ok := e.stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprintln(e.stderr, "a2a send: reading the message from standard input; end it with Ctrl-D")
		}
	}
	b, err := io.ReadAll(e.stdin)
	if err != nil {
		return "", fmt.Errorf("reading the message from standard input: %w", err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

// fileArg is one --file and its --file-type.
type fileArg struct {
	path      string
	mediaType string // "" to guess
}

// filesFlag is the repeatable --file.
type filesFlag []fileArg

func (f *filesFlag) String() string {
	if f == nil {
		return ""
	}
	paths := make([]string, len(*f))
	for i, a := range *f {
		paths[i] = a.path
	}
	return strings.Join(paths, ", ")
}

func (f *filesFlag) Set(v string) error {
	*f = append(*f, fileArg{path: v})
	return nil
}

// fileTypeFlag is --file-type: the media type of the --file before it.
type fileTypeFlag struct{ files *filesFlag }

func (t fileTypeFlag) String() string { return "" }

func (t fileTypeFlag) Set(v string) error {
	if t.files == nil || len(*t.files) == 0 {
		return errors.New("give it after the --file it is the type of")
	}
	last := &(*t.files)[len(*t.files)-1]
	if last.mediaType != "" {
		return fmt.Errorf("--file %s has a type already", last.path)
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil || !strings.Contains(mt, "/") {
		return errors.New("not a media type such as image/png")
	}
	last.mediaType = mime.FormatMediaType(mt, params)
	return nil
}

// guessMediaType is the media type of a file by its extension, else by
// its first 512 bytes (http.DetectContentType), without parameters.
func guessMediaType(path string, content []byte) string {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".diff" || ext == ".patch" {
		return "text/x-diff" // not in Go's table, and varied in the system's
	}
	mt := mime.TypeByExtension(ext)
	if mt == "" {
		mt = http.DetectContentType(content[:min(len(content), 512)])
	}
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	return mt
}

// fileError says why --file path cannot be read, naming the file.
func fileError(path string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("--file %s: %v", path, err)
}
