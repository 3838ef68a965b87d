package experiments

import (
	"strings"
	"testing"
	"time"
)

func TestSpeedOptionsRefused(t *testing.T) {
	if _, err := SpeedCNNBiLSTM(SpeedOptions{}); err == nil {
		t.Error("SpeedCNNBiLSTM ran without a minimum time")
	}
	for _, o := range []SpeedOptions{{MinTime: time.Second, Len: 1}, {MinTime: time.Second, Len: 513}, {Len: 64}} {
		if _, err := SpeedTransformer(o); err == nil {
			t.Errorf("SpeedTransformer(%+v) ran", o)
		}
	}
}

// TestSpeedTransformerRows: the GEMM peak row comes first at 100%, then
// the encoder's forward and training rows, each with a positive speed.
func TestSpeedTransformerRows(t *testing.T) {
	if testing.Short() {
		t.Skip("times a 1024³ GEMM and a small encoder")
	}
	rows, err := SpeedTransformer(SpeedOptions{MinTime: time.Nanosecond, Len: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sgemm 1024³", "MiniLM-L6 forward (batch 1, len 4)", "MiniLM-L6 forward (batch 32, len 4)", "MiniLM-L6 train step (batch 32, len 4, AdamW)"}
	if len(rows) != len(want) || rows[0].PeakPct != 100 {
		t.Fatalf("rows %+v", rows)
	}
	for i, r := range rows {
		if r.Name != want[i] || r.Seconds <= 0 || r.GFLOPs <= 0 || (i > 0 && !strings.HasSuffix(r.ThruUnit, "/s")) {
			t.Errorf("row %d: %+v, want %q with positive speeds", i, r, want[i])
		}
	}
}
