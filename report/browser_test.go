package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium finds Debian's Chromium (CI installs it), or skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("Chromium is not installed (apt-get install chromium): the report is not checked in a browser")
	return ""
}

// chartState is what the page says of one chart div after drawing.
type chartState struct {
	ID     string `json:"id"`
	Series int    `json:"series"` // series in the ECharts instance's option
	Inked  int    `json:"inked"`  // canvas pixels drawn (not transparent)
}

// TestReportInBrowser opens a report in headless Chromium, as a reader
// would from disk: no console error, no exception, no request beyond the
// file itself, and every chart drawn (an ECharts instance with series on
// a canvas with ink). TEXTARMOR_REPORT_PAGE opens that page instead of
// one made from fixtures; TEXTARMOR_REPORT_SCREENSHOT keeps the screenshot
// (PNG) there.
func TestReportInBrowser(t *testing.T) {
	exe := chromium(t)
	page := os.Getenv("TEXTARMOR_REPORT_PAGE")
	if page == "" {
		dir := t.TempDir()
		writeAll(t, filepath.Join(dir, "in"))
		r, err := Collect([]string{filepath.Join(dir, "in")}, Options{Title: "fixture report"})
		if err != nil {
			t.Fatal(err)
		}
		page = filepath.Join(dir, "report.html")
		if err := r.WriteFile(page); err != nil {
			t.Fatal(err)
		}
	}
	page, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	shot := os.Getenv("TEXTARMOR_REPORT_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "report.png")
	}

	// The flags a closed network needs (no background fetches, no QUIC),
	// as root (no sandbox), with a fresh profile.
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 1600))
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var problems []string
	note := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	url := "file://" + filepath.ToSlash(page)
	err = chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				note("console.%s: %s", ev.Type, strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			note("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg)
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
				note("log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; u != url && !strings.HasPrefix(u, "data:") {
				note("request for %s: the page is not self-contained", u)
			}
		}
	})
	if err != nil {
		t.Fatalf("browser: %v", err)
	}

	// chromedp has the runtime, log and network events on from the start.
	err = chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1600), chromedp.Navigate(url))
	var states []chartState
	if err == nil {
		// ECharts draws in animation frames: wait until every chart has ink.
		states, err = chromedp.Run(ctx, chromedp.Poll[[]chartState](`(() => {
			const out = [];
			for (const d of document.querySelectorAll("div.chart")) {
				const inst = echarts.getInstanceByDom(d);
				const c = d.querySelector("canvas");
				let inked = 0;
				if (c && c.width > 0 && c.height > 0) {
					const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
					for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) inked++;
				}
				out.push({id: d.id, series: inst ? inst.getOption().series.length : 0, inked: inked});
			}
			return out.length > 0 && out.every(s => s.inked > 0) ? out : false;
		})()`, chromedp.WithPollingTimeout(time.Minute)))
	}
	var png []byte
	if err == nil {
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
		if err != nil && strings.Contains(err.Error(), "too large") {
			// Past Chromium's texture limit (about 16,000 px tall): the top.
			t.Logf("full-page screenshot: %v; taking the first screen", err)
			png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes); %d charts drawn", shot, len(png), len(states))
	for _, s := range states {
		if s.Series == 0 || s.Inked < 1000 {
			t.Errorf("chart %s: %d series, %d pixels drawn", s.ID, s.Series, s.Inked)
		}
	}
	if os.Getenv("TEXTARMOR_REPORT_PAGE") == "" && len(states) != 12 {
		t.Errorf("%d charts on the fixture page, want 12", len(states))
	}
}
