package experiments

import (
	"os"
	"path/filepath"
	"slices"
)

func baseName(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Base(path)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

func joinPath(elem ...string) string { return filepath.Join(elem...) }
