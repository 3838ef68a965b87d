package report_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/report"
)

// A folder with an attack's results file and a training log, as
// `textarmor attack --out` and `textarmor train` write them, becomes one
// HTML page.
func ExampleCollect() {
	dir, err := os.MkdirTemp("", "report-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	rows := strings.Join(attack.Columns, ",") + "\n" +
		`"a gripping film","a riveting film",1,0,1,12,Successful,0,0.05,3,1,14` + "\n" +
		`"a dull plot","a dull plot",0,0,0,30,Failed,1,0.09,3,0,33` + "\n"
	logLines := `{"epoch":1,"train_loss":0.61,"train_acc":0.70,"dev_acc":0.78}` + "\n" +
		`{"epoch":2,"train_loss":0.35,"train_acc":0.86,"dev_acc":0.81}` + "\n"
	for name, text := range map[string]string{"pwws.csv": rows, "cnn.log.jsonl": logLines} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}

	r, err := report.Collect([]string{dir}, report.Options{Title: "CNN on SST-2"})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.WriteFile(filepath.Join(dir, "report.html")); err != nil {
		log.Fatal(err)
	}
	for _, s := range r.Sources {
		fmt.Printf("%s: %s\n", filepath.Base(s.Path), s.Kind)
	}
	s := r.Attacks[0].Summary
	fmt.Printf("accuracy %.0f%% → %.0f%% under attack; example 0: %q → %q\n", 100*s.OriginalAccuracy, 100*s.AccuracyUnderAttack,
		r.Attacks[0].Examples[0].Original[1].Text, r.Attacks[0].Examples[0].Perturbed[1].Text)
	n, _ := r.NumCharts()
	fmt.Println(n, "charts")
	// Output:
	// cnn.log.jsonl: training log
	// pwws.csv: attack results CSV
	// accuracy 100% → 50% under attack; example 0: "gripping" → "riveting"
	// 5 charts
}
