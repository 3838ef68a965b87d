package main

import "fmt"

// journalPath names the journal of an attack CSV for these settings; the
// method and label mode are in the name so that ig and lime (or all and
// gold) runs on one CSV keep separate journals.
func (e *explainFlags) journalPath(csvPath string) string {
	return fmt.Sprintf("%s.explain-%s-%s.jsonl", csvPath, e.method, e.labelMode())
}
