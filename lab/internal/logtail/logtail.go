// Package logtail returns the last lines of a log, for error messages that show why a
// process failed.
package logtail

import (
	"bufio"
	"os"
	"strings"
)

// maxLine bounds a line in the output: a process can log a whole manifest on one line.
const maxLine = 500

// File returns the last n lines of the file at path, or "" when it cannot be read.
func File(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		lines = append(lines, cut(s.Text()))
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// Lines returns the last n lines of s.
func Lines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i := range lines {
		lines[i] = cut(lines[i])
	}
	return strings.Join(lines, "\n")
}

// Indent prefixes every line of s with prefix.
func Indent(s, prefix string) string {
	if s == "" {
		return ""
	}
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func cut(line string) string {
	if len(line) > maxLine {
		return line[:maxLine] + "..."
	}
	return line
}
