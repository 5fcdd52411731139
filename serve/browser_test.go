package serve

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

const hoverJS = `(() => { const u = state.charts["rf-chart"]; const p = state.spot.find(s => s.status === "ok" && s.precision === "int8");
	const r = u.over.getBoundingClientRect();
	u.over.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + u.valToPos(p.ai, "x"), clientY: r.top + u.valToPos(p.predicted_flops, "y"), bubbles: true}));
	return true; })()`

// findChromium returns a Chromium binary, or "" when none is installed.
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// TestBrowser drives the page in headless Chromium: every page loads
// without console errors, a spot check over all precisions draws a point
// per supported precision, a small simulation draws its CDFs, and the
// sweep and validation pages render files from --data. Screenshots go to
// $ROOFSIM_SCREENSHOTS (default: a temporary directory).
func TestBrowser(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium installed; CI must have it (apt-get install chromium)")
		}
		t.Skip("no Chromium installed (apt-get install chromium); skipping the browser test")
	}
	shots := os.Getenv("ROOFSIM_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	data := t.TempDir()
	writeSweepFiles(t, data)
	writeGridSweepFile(t, data)
	writePDSweepFile(t, data)
	report := `{"bench_requests_per_client": 8, "rows": [` +
		`{"model": "llama-3.1-70b", "gpu": "h100_sxm", "tp": 2, "measured_ttft_ms": 120, "predicted_ttft_ms": 131, "measured_tpot_ms": 20, "predicted_tpot_ms": 19},` +
		`{"model": "llama-3.1-70b", "gpu": "h200_sxm", "tp": 4, "measured_ttft_ms": 80, "predicted_ttft_ms": 75, "measured_tpot_ms": 12, "predicted_tpot_ms": 13}],` +
		`"ttft": {"n": 2, "median_ape_pct": 8.2, "p90_ape_pct": 9.2}}`
	if err := os.WriteFile(filepath.Join(data, "serving.json"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	agent, _ := fakeAgent(t, 5e-5, AgentProtocol)
	_, ts := newTestServer(t, Options{DataDir: data, MaxRequests: 2000, MeasureURL: agent.URL})
	_, failTS := newTestServer(t, Options{MaxRequests: 2000, SimTimeout: time.Millisecond})

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first action starts the browser; it runs without a timeout (a
	// timeout there would bound the browser's life), the rest with one.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var consoleErrs []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				consoleErrs = append(consoleErrs, m.String()+" "+m.URL)
				mu.Unlock()
			}
		}
	}()
	tctx, tcancel := context.WithTimeout(ctx, 90*time.Second)
	defer tcancel()
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wait := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
	}
	eval := func(expr string) int {
		t.Helper()
		v, err := chromedp.Run(tctx, chromedp.Evaluate[int](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	shot := func(name string) {
		t.Helper()
		buf, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		p := filepath.Join(shots, name)
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %s", p)
	}
	start := time.Now()
	step("roofline page",
		chromedp.Navigate(ts.URL+"/#roofline"),
		wait(`state.roof !== null && document.querySelector("#rf-chart canvas") !== null`))
	// Kernel Spot Check over every precision.
	step("spot check",
		chromedp.Click(chromedp.CSS(`.preset[data-m="2048"]`)),
		chromedp.Click(chromedp.CSS(`#sc-all`)),
		chromedp.Click(chromedp.CSS(`#sc-run`)),
		wait(`+document.getElementById("rf-chart").dataset.spotPoints >= 5`))
	// Hovering a circle shows its numbers.
	if _, err := chromedp.Run(tctx, chromedp.Evaluate[bool](hoverJS)); err != nil {
		t.Fatal(err)
	}
	step("hover", wait(`!document.getElementById("rf-tip").hidden && document.getElementById("rf-tip").textContent.includes("AI")`))
	tip, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("rf-tip").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"int8", "AI", "attainable", "predicted", "bandwidth", "bound"} {
		if !strings.Contains(tip, want) {
			t.Errorf("tooltip %q lacks %q", tip, want)
		}
	}
	// The log axes label every decade (0.01 to 100 k FLOP/B); the model's
	// two phases are labelled.
	rfXTicks := eval(`document.getElementById("rf-chart").dataset.xTicks.split("|").length`)
	rfYTicks := eval(`document.getElementById("rf-chart").dataset.yTicks.split("|").length`)
	rfLabels := eval(`+document.getElementById("rf-chart").dataset.pointLabels`)
	spotPoints := eval(`+document.getElementById("rf-chart").dataset.spotPoints`)
	okRows := eval(`document.querySelectorAll('#sc-table tbody tr[data-status="ok"]').length`)
	shot("web-roofline.png")
	// The same spot check measured on the (fake) agent: filled points too.
	step("measured spot check",
		chromedp.Click(chromedp.CSS(`#sc-clear`)),
		chromedp.Click(chromedp.CSS(`#sc-measure`)),
		chromedp.Click(chromedp.CSS(`#sc-run`)),
		wait(`state.spot.filter(p => p.measured && p.measured.status === "ok").length >= 5`))
	measuredPoints := eval(`+document.getElementById("rf-chart").dataset.spotPoints`)
	if measuredPoints < 10 {
		t.Errorf("measured spot check drew %d points, want 5 hollow + 5 filled", measuredPoints)
	}
	step("measured example",
		chromedp.Click(chromedp.CSS(`#sc-measure`)),
		chromedp.Click(chromedp.CSS(`#sc-example`)),
		wait(`state.spot.some(p => p.measured && p.measured.status === "ok")`))
	shot("web-spotcheck-h200-measured.png")
	step("example shape filter",
		chromedp.SetValue(chromedp.CSS(`#sc-shape`), "2048×4096×4096"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("sc-shape").dispatchEvent(new Event("change"))`),
		wait(`state.spot.length === 5`))
	if n := eval(`+document.getElementById("rf-chart").dataset.spotPoints`); n != 10 {
		t.Errorf("one example shape drew %d points, want 5 predicted + 5 measured", n)
	}
	// A small simulation, with two fields of the form generated from
	// GET /api/settings set: tp and replicas.
	step("simulation",
		chromedp.Navigate(ts.URL+"/#simulate"),
		wait(`document.querySelectorAll("#sim-example option").length > 0 && document.getElementById("sim-set-tp") !== null`),
		chromedp.SetValue(chromedp.CSS(`#sim-max`), "300"),
		chromedp.SetValue(chromedp.CSS(`#sim-set-tp`), "2"),
		chromedp.SetValue(chromedp.CSS(`#sim-set-replicas`), "2"),
		chromedp.Click(chromedp.CSS(`#sim-run`)),
		wait(`state.charts["sim-cdf-ttft"] !== undefined && state.runs.length > 0 && state.runs[0].state === "done"`))
	generated := eval(`document.querySelectorAll("#sim-settings [data-key]").length`)
	genApplied := eval(`state.runs[0].label.includes("tp2×2") && state.runs[0].result.replicas === 2 ? 1 : 0`)
	cdfPoints := eval(`state.charts["sim-cdf-ttft"].data[1].filter(v => v !== null).length`)
	// Every summary figure is a number: a key the page reads that the
	// result lacks shows as "–".
	kpis := eval(`document.querySelectorAll("#sim-summary .kpi .v").length`)
	profileTiles := eval(`[...document.querySelectorAll("#sim-summary .kpi .k")].filter(e => e.textContent === "GPU profile").length`)
	blankKPIs := eval(`[...document.querySelectorAll("#sim-summary .kpi .v")].filter(e => e.textContent.includes("–")).length`)
	// A tile for every metric flagged for one, and no other keyed tile.
	var tileKeys []string
	for _, m := range traces.ResultScalars() {
		if m.Tile != "" {
			tileKeys = append(tileKeys, strconv.Quote(m.Key))
		}
	}
	tilesShown := eval(`[` + strings.Join(tileKeys, ",") + `].filter(k => document.querySelector('#sim-summary .kpi[data-key="' + k + '"]')).length`)
	keyedTiles := eval(`document.querySelectorAll("#sim-summary .kpi[data-key]").length`)
	shot("web-simulate.png")
	// A disaggregated simulation (1 prefill + 2 decode instances, set in
	// the generated form) shows its pools and the KV transfer time.
	step("disaggregated simulation",
		chromedp.SetValue(chromedp.CSS(`#sim-set-replicas`), "1"),
		chromedp.SetValue(chromedp.CSS(`#sim-set-disaggregation-prefill-replicas`), "1"),
		chromedp.SetValue(chromedp.CSS(`#sim-set-disaggregation-decode-replicas`), "2"),
		chromedp.Click(chromedp.CSS(`#sim-run`)),
		wait(`state.runs.length === 2 && state.runs[1].state === "done"`))
	poolRows := eval(`document.querySelectorAll("#sim-summary table.pools tr[data-pool]").length`)
	kvTiles := eval(`document.querySelectorAll('#sim-summary .kpi[data-key="kv_transfer"]').length`)
	pdApplied := eval(`state.runs[1].result.pools.decode.replicas === 2 && state.runs[1].result.replicas === 3 ? 1 : 0`)
	// Two runs shown: two colours, each run drawn in its own in every chart
	// and named once in the run legend; the step split bar names each part.
	runColours := eval(`new Set(state.runs.filter(r => r.show).map(r => r.color)).size`)
	wrongColour := eval(`Object.values(state.charts).map(u => u.root.parentElement.spec).filter(sp => sp).flatMap(sp => sp.lines || []).filter(l => l.run !== undefined && state.runs.find(r => r.id === l.run).color !== l.color).length`)
	runLines := eval(`Object.values(state.charts).map(u => u.root.parentElement.spec).filter(sp => sp).flatMap(sp => sp.lines || []).filter(l => l.run !== undefined).length`)
	runLegend := eval(`document.querySelectorAll("#sim-run-legend [data-run]").length`)
	splitParts := eval(`document.querySelectorAll("#sim-split-bar .bar [data-part]").length`)
	splitLegend := eval(`[...document.querySelectorAll("#sim-split-bar .legend [data-part]")].filter(e => /\d%/.test(e.textContent)).length`)
	shot("web-simulate-two-runs.png")
	// Sweep and validation from --data.
	step("sweep",
		chromedp.Navigate(ts.URL+"/#sweep"),
		wait(`document.querySelectorAll("#sw-data option").length > 1`),
		chromedp.SetValue(chromedp.CSS(`#sw-data`), "sweep.parquet"),
		chromedp.Click(chromedp.CSS(`#sw-load`)),
		wait(`document.querySelectorAll("#sw-table tbody tr").length > 0`))
	sweepRows := eval(`document.querySelectorAll("#sw-table tbody tr").length`)
	recRows := eval(`document.querySelectorAll("#sw-table tbody tr.rec").length`)
	// The Pareto chart: a label per point, no two overlapping, all inside
	// the plot; log axes with at least three tick labels each; the TPOT
	// bound drawn as a line and the SLO and target rate in a note.
	swPoints := eval(`+document.getElementById("sw-chart").dataset.drawnPoints`)
	swLabels := eval(`+document.getElementById("sw-chart").dataset.pointLabels`)
	swOverlaps := eval(`(() => { const b = document.getElementById("sw-chart").labelBoxes; let n = 0;
		for (let i = 0; i < b.length; i++) { if (b[i].x < 0 || b[i].y < 0 || b[i].x + b[i].w > b[i].pw || b[i].y + b[i].h > b[i].ph) n++;
			for (let j = 0; j < i; j++) if (b[i].x < b[j].x + b[j].w && b[j].x < b[i].x + b[i].w && b[i].y < b[j].y + b[j].h && b[j].y < b[i].y + b[i].h) n++; }
		return n; })()`)
	// A dense cluster: 3 labels that must be drawn and 40 optional ones;
	// every must-label is drawn, and no two labels overlap.
	eval(`(() => { const el = document.createElement("div"); el.id = "dense-test"; el.style.width = "600px"; document.body.appendChild(el);
		const pts = []; for (let i = 0; i < 40; i++) pts.push({x: 10 + (i % 8) * 0.2, y: 100 + Math.floor(i / 8) * 0.5, color: "#a8b3c4", label: "#" + i + " h100 tp1", labelOptional: true});
		for (let i = 0; i < 3; i++) pts.push({x: 12 + i, y: 105 + i, color: "#2b6cb0", label: "front " + i, labelPriority: 1});
		chart(el, {xlog: true, ylog: true, points: pts, height: 300, legend: false, xrange: [9, 16], yrange: [95, 112]}); return 1; })()`)
	step("dense labels drawn", wait(`document.getElementById("dense-test").labelBoxes !== undefined`))
	dense, err := chromedp.Run(tctx, chromedp.Evaluate[string](`(() => { const el = document.getElementById("dense-test");
		const b = el.labelBoxes; let bad = 0;
		for (let i = 0; i < b.length; i++) for (let j = 0; j < i; j++) if (b[i].x < b[j].x + b[j].w && b[j].x < b[i].x + b[i].w && b[i].y < b[j].y + b[j].h && b[j].y < b[i].y + b[i].h) bad++;
		const front = b.filter(x => x.text.startsWith("front")).length;
		el.remove(); delete state.charts["dense-test"];
		return bad + " overlaps, " + front + " front, " + b.length + " labels"; })()`))
	if err != nil {
		t.Fatal(err)
	}
	swXTicks := eval(`document.getElementById("sw-chart").dataset.xTicks.split("|").length`)
	swYTicks := eval(`document.getElementById("sw-chart").dataset.yTicks.split("|").length`)
	swSLO := eval(`document.getElementById("sw-chart").dataset.refLines === "TPOT p99 SLO 50 ms → 20 tok/s/user" ? 1 : 0`)
	swNote := eval(`document.getElementById("sw-chart").dataset.note.includes("TTFT p99 ≤ 500 ms") && document.getElementById("sw-chart").dataset.note.includes("target 40 req/s") ? 1 : 0`)
	// The table's columns are the server's: every column_info entry marked
	// for a table that has a value, under its label, and no other.
	wantHeads, err := chromedp.Run(tctx, chromedp.Evaluate[string](`state.sweep.res.column_info.filter(c => c.table && (!c.sparse || state.sweep.res.rows.some(r => r[c.name] !== null))).map(c => c.name + "=" + c.label).join(",")`))
	if err != nil {
		t.Fatal(err)
	}
	heads, err := chromedp.Run(tctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#sw-table th")].map(th => th.dataset.k + "=" + th.firstChild.textContent).join(",")`))
	if err != nil {
		t.Fatal(err)
	}
	costHeads := eval(`["replicas=replicas", "gpus_total=GPUs", "cost_per_hour=$/h", "cost_per_mtok=$/Mtok", "dp=dp", "ep=ep"].filter(w => [...document.querySelectorAll("#sw-table th")].some(th => th.dataset.k + "=" + th.firstChild.textContent === w)).length`)
	shot("web-sweep.png")
	// A sweep over dp, ep and a --grid key: a column for each; the grid
	// builder turns a setting picked from the generated list into --grid.
	step("grid sweep",
		chromedp.SetValue(chromedp.CSS(`#sw-data`), "grid.csv"),
		chromedp.Click(chromedp.CSS(`#sw-load`)),
		wait(`state.sweep.res.source === "grid.csv" && document.querySelectorAll("#sw-table tbody tr").length === 2`),
		chromedp.SetValue(chromedp.CSS(`#sw-key`), "serving.max_num_seqs"),
		chromedp.SetValue(chromedp.CSS(`#sw-values`), "64, 256"),
		chromedp.Click(chromedp.CSS(`#sw-add`)),
		wait(`document.getElementById("sw-cmd").textContent.includes("--grid serving.max_num_seqs=64,256")`))
	profileHead := eval(`document.querySelector('#sw-table th[data-k="profile_status"]') ? 1 : 0`)
	gridHeads := eval(`["dp", "ep", "weights"].filter(k => document.querySelector('#sw-table th[data-k="' + k + '"]')).length`)
	shot("web-sweep-grid.png")
	// Aggregated and disaggregated rows of one sweep, side by side.
	step("disaggregated sweep",
		chromedp.SetValue(chromedp.CSS(`#sw-data`), "pd.csv"),
		chromedp.Click(chromedp.CSS(`#sw-load`)),
		wait(`state.sweep.res.source === "pd.csv" && document.querySelectorAll("#sw-table tbody tr").length === 3`))
	layouts := eval(`[...document.querySelectorAll("#sw-table tbody tr")].map(tr => tr.children[[...document.querySelectorAll("#sw-table th")].findIndex(th => th.dataset.k === "layout")].textContent).join(",") === "agg,1P1D,2P1D" ? 1 : 0`)
	step("validation",
		chromedp.Navigate(ts.URL+"/#validation"),
		wait(`document.querySelectorAll("#va-data option").length > 1`),
		chromedp.SetValue(chromedp.CSS(`#va-data`), "serving.json"),
		chromedp.Click(chromedp.CSS(`#va-load`)),
		wait(`document.querySelectorAll("#va-out table").length > 0`))
	vaTables := eval(`document.querySelectorAll("#va-out table").length`)
	shot("web-validation.png")
	// A job that fails (here: past a 1 ms time limit) turns the progress
	// bar red with the server's reason, instead of leaving it running.
	step("failed simulation",
		chromedp.Navigate(failTS.URL+"/#simulate"),
		wait(`document.querySelectorAll("#sim-example option").length > 0`),
		chromedp.SetValue(chromedp.CSS(`#sim-max`), "2000"),
		chromedp.Click(chromedp.CSS(`#sim-run`)),
		wait(`document.getElementById("sim-progress").classList.contains("failed")`))
	failText, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.querySelector("#sim-progress span").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	failBar := eval(`document.querySelector("#sim-progress .bar").style.width === "100%" && !document.getElementById("sim-progress").hidden ? 1 : 0`)
	shot("web-simulate-failed.png")
	t.Logf("browser run took %s", time.Since(start).Round(time.Millisecond))
	if !strings.HasPrefix(failText, "failed: ") || !strings.Contains(failText, "limit") || failBar != 1 {
		t.Errorf("failed job: progress reads %q (full red bar %v), want \"failed: \" and the time limit", failText, failBar == 1)
	}
	if rfXTicks < 8 || rfYTicks < 4 || rfLabels != 2 {
		t.Errorf("roofline: %d x tick labels (want the 8 decades), %d y tick labels, %d phase labels (want 2)", rfXTicks, rfYTicks, rfLabels)
	}
	if runColours != 2 || wrongColour != 0 || runLines < 20 || runLegend != 2 {
		t.Errorf("two runs: %d colours, %d of %d run lines in another colour than their run's, %d legend entries", runColours, wrongColour, runLines, runLegend)
	}
	if splitParts < 2 || splitLegend != splitParts {
		t.Errorf("step split bar: %d parts, %d legend entries with a percentage", splitParts, splitLegend)
	}
	if swPoints != 3 || swLabels != swPoints || swOverlaps != 0 {
		t.Errorf("sweep chart: %d points, %d labels, %d overlapping or clipped labels", swPoints, swLabels, swOverlaps)
	}
	if n := 0; !strings.HasPrefix(dense, "0 overlaps, 3 front, ") || func() bool { fmt.Sscanf(dense[strings.LastIndex(dense, ", ")+2:], "%d", &n); return n >= 43 }() {
		t.Errorf("dense chart: %s; want no overlap, the 3 front labels, and not every optional one of 40 squeezed in", dense)
	}
	if swXTicks < 3 || swYTicks < 3 {
		t.Errorf("sweep chart: %d x and %d y tick labels on its log axes, want >= 3 each", swXTicks, swYTicks)
	}
	if swSLO != 1 || swNote != 1 {
		t.Errorf("sweep chart: TPOT SLO line drawn %v, SLO and target note %v", swSLO == 1, swNote == 1)
	}
	if heads != wantHeads || costHeads != 6 {
		t.Errorf("sweep table: headers\n%s\nwant the server's column_info\n%s\n%d of replicas, GPUs, $/h, $/Mtok, dp, ep shown", heads, wantHeads, costHeads)
	}
	// h100 has no fp4 peak: 5 of the 7 precisions draw a hollow circle.
	if spotPoints < 5 || okRows < 5 {
		t.Errorf("spot check drew %d points with %d supported rows, want >= 5", spotPoints, okRows)
	}
	if kpis < 7 || blankKPIs != 0 {
		t.Errorf("simulation summary: %d figures, %d of them blank", kpis, blankKPIs)
	}
	if tilesShown != len(tileKeys) || keyedTiles != len(tileKeys) {
		t.Errorf("simulation summary: %d of the %d metric tiles drawn, %d keyed tiles in all", tilesShown, len(tileKeys), keyedTiles)
	}
	if cdfPoints < 10 {
		t.Errorf("TTFT CDF has %d points", cdfPoints)
	}
	if poolRows != 2 || kvTiles != 1 || pdApplied != 1 {
		t.Errorf("disaggregated simulation: %d pool rows, %d KV transfer tiles, pools applied %v", poolRows, kvTiles, pdApplied == 1)
	}
	if layouts != 1 {
		t.Error("the sweep table's layout column does not read agg, 1P1D, 2P1D")
	}
	if generated < len(workload.DeploymentSettings()) || genApplied != 1 {
		t.Errorf("simulate form: %d generated fields (want one per setting), tp and replicas applied: %v", generated, genApplied == 1)
	}
	if profileTiles < 1 || profileHead != 1 {
		t.Errorf("GPU profile status: %d summary tiles, sweep column shown %v", profileTiles, profileHead == 1)
	}
	if gridHeads != 3 {
		t.Errorf("grid sweep table shows %d of the columns dp, ep, weights", gridHeads)
	}
	if sweepRows != 3 || recRows != 1 {
		t.Errorf("sweep table: %d rows, %d recommended; want 3 and 1", sweepRows, recRows)
	}
	if vaTables < 1 {
		t.Error("validation page drew no table")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(consoleErrs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(consoleErrs, "\n"))
	}
}
