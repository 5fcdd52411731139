package serve

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDocShots regenerates the screenshots of docs/web.md and the README
// from a --data directory holding sweep.parquet and serving.json (see
// docs/web.md for the commands that make them):
//
//	ROOFSIM_DOCSHOT_DATA=DIR ROOFSIM_DOCSHOT_OUT=docs go test -run TestDocShots ./serve
//
// It is skipped unless both variables are set.
func TestDocShots(t *testing.T) {
	data, out := os.Getenv("ROOFSIM_DOCSHOT_DATA"), os.Getenv("ROOFSIM_DOCSHOT_OUT")
	if data == "" || out == "" || findChromium() == "" {
		t.Skip("set ROOFSIM_DOCSHOT_DATA and ROOFSIM_DOCSHOT_OUT (and install Chromium) to regenerate the docs' screenshots")
	}
	_, ts := newTestServer(t, Options{DataDir: data})
	actx, cancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(findChromium()), chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900))
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	wait := func(e string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](e, chromedp.WithPollingTimeout(60*time.Second))
	}
	shot := func(name string) {
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	do := func(a ...chromedp.Action[chromedp.Void]) {
		if err := chromedp.Do(ctx, a...); err != nil {
			t.Fatal(err)
		}
	}
	do(chromedp.Navigate(ts.URL+"/#roofline"), wait(`state.roof !== null`),
		chromedp.Click(chromedp.CSS(`.preset[data-m="2048"]`)), chromedp.Click(chromedp.CSS(`#sc-all`)), chromedp.Click(chromedp.CSS(`#sc-run`)),
		wait(`state.spot.length >= 7`))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](hoverJS)); err != nil {
		t.Fatal(err)
	}
	do(wait(`!document.getElementById("rf-tip").hidden`))
	shot("web-roofline.png")
	do(chromedp.SetValue(chromedp.CSS(`#rf-gpu`), "h200"), chromedp.Click(chromedp.CSS(`#sc-example`)), wait(`state.spot.some(p => p.measured)`))
	shot("web-spotcheck-h200.png")
	do(chromedp.Navigate(ts.URL+"/#simulate"), wait(`document.querySelectorAll("#sim-example option").length > 0`),
		chromedp.SetValue(chromedp.CSS(`#sim-max`), "2000"), chromedp.Click(chromedp.CSS(`#sim-run`)),
		wait(`state.runs.length === 1 && state.runs[0].state === "done"`),
		chromedp.SetValue(chromedp.CSS(`#sim-rate`), "30"), chromedp.Click(chromedp.CSS(`#sim-run`)),
		wait(`state.runs.length === 2 && state.runs[1].state === "done"`))
	shot("web-simulate.png")
	do(chromedp.Navigate(ts.URL+"/#sweep"), wait(`document.querySelectorAll("#sw-data option").length > 1`),
		chromedp.SetValue(chromedp.CSS(`#sw-data`), "sweep.parquet"), chromedp.Click(chromedp.CSS(`#sw-load`)),
		wait(`document.querySelectorAll("#sw-table tbody tr").length > 0`))
	shot("web-sweep.png")
	do(chromedp.Navigate(ts.URL+"/#validation"), wait(`document.querySelectorAll("#va-data option").length > 1`),
		chromedp.SetValue(chromedp.CSS(`#va-data`), "serving.json"), chromedp.Click(chromedp.CSS(`#va-load`)),
		wait(`document.querySelectorAll("#va-out table").length > 0`))
	shot("web-validation.png")
}
