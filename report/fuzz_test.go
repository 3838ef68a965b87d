package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
)

// FuzzCollect: any bytes, as any kind of input file, give a report or an
// error, never a panic; a report renders.
func FuzzCollect(f *testing.F) {
	header := strings.Join(attack.Columns, ",") + "\n"
	f.Add(uint8(0), []byte(header+`"a b","a c",1,0,1,5,Successful,0,0.1,2,1,6`+"\n"))
	f.Add(uint8(0), []byte(header+`"a b c","a bc",1,0,1,5,Successful,0,0.1,3,1,6`+"\n"))
	f.Add(uint8(1), []byte(`{"epoch":1,"train_loss":0.5,"train_acc":0.7,"dev_acc":0.6}`+"\n"+`{"epoch":1,"train_loss":0.4}`+"\n"))
	f.Add(uint8(2), []byte(`{"cells":{"sst2":{"rar":{"pgd":{"0.1":{"attack":{"eps":0.1},"n":5,"clean_accuracy":0.8,"accuracy_under_attack":0.5}},"word":{"pwws":{"n":5,"accuracy_under_attack":10}}}}},"checks":[]}`))
	f.Add(uint8(2), []byte(`{"dataset":"imdb","clean_n":10,"cells":[{"defense":"a","column":"clean","accuracy":80,"n":10}]}`))
	f.Add(uint8(2), []byte(`{"dataset":"trec","attacks":["tf"],"values":{"base/sa":70,"base/aa/tf":40}}`))
	f.Add(uint8(2), []byte(`{"accuracy":{"spgd":80},"gap":{},"cells":{}}`))
	f.Add(uint8(2), []byte(`{"sts":{},"advsts":{"simcse":{"pwws/stsb":{"N":10,"ASR":50}}}}`))
	f.Add(uint8(3), []byte(`{"attack":{"eps":0.1},"method":"pgd","dataset":"sst2","n":5,"clean_accuracy":0.8,"accuracy_under_attack":0.4}`))
	f.Add(uint8(3), []byte(`{"recipe":"pwws","n":5,"original_accuracy":0.8,"accuracy_under_attack":0.2,"attack_success_rate":0.75,"out":"x.csv"}`))
	f.Add(uint8(3), []byte(`{"defense":"ftml","column":"pwws","accuracy":20,"n":30}`))
	names := []string{"r.csv", "m.log.jsonl", "table.json", "s.json"}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, names[int(kind)%len(names)])
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{path, dir} {
			r, err := Collect([]string{in}, Options{})
			if err != nil {
				continue
			}
			var b bytes.Buffer
			if err := r.WriteHTML(&b); err != nil {
				t.Fatalf("%s: collected but did not render: %v", in, err)
			}
		}
	})
}
