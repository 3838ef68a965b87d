package metrics

import "testing"

func TestReportJSONWith(t *testing.T) {
	rep, err := Classification([]int{0, 1, 1}, []int{0, 1, 0}, []string{"neg", "pos"})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := rep.JSONWith(map[string]any{"split": "test"})
	if err != nil {
		t.Fatal(err)
	}
	if obj["split"] != "test" || obj["accuracy"] != rep.Accuracy || obj["n"] != float64(3) {
		t.Errorf("JSON object %v", obj)
	}
}
