package dev.infersim.bench.report;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.bench.FakeStreamingServer;
import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.measure.ClientKeys;
import dev.infersim.engine.Deployment;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.StartupDelay;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.ResultJson;
import dev.infersim.result.RunInfo;
import dev.infersim.result.ServingResult;
import dev.infersim.sim.AutoscaleMetric;
import dev.infersim.sim.Autoscaler;
import dev.infersim.sim.AutoscalerSpec;
import dev.infersim.sim.Autoscalers;
import dev.infersim.sim.Fleet;
import dev.infersim.sim.LeastOutstandingRequestsRouter;
import dev.infersim.sim.Replica;
import dev.infersim.sim.ReplicaSeries;
import dev.infersim.sim.Simulation;
import dev.infersim.sim.SimulationOptions;
import dev.infersim.sim.SimulationResult;
import dev.infersim.sim.SimulatorKeys;
import dev.infersim.workload.arrival.RampStrategy;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadSpec;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The HTML reports opened in headless Chromium, as a user opens them: every chart the report should hold is drawn with
 * every series it lists, no script failed, and the metadata a benchmark report must carry is on the page. Real runs
 * against a scripted streaming server make the reports: a run with scraped server metrics, a two-point sweep, a
 * one-request run as a one-point sweep, and a run where every request failed; a simulated autoscaled fleet makes one; one more page is broken on purpose to
 * prove a failing chart is seen.
 */
class HtmlReportBrowserTest {
    private static final String VERSION = "9.8.7-test";
    private static final List<String> RUN_CHARTS = List.of("Latency distribution (value at percentile)",
            "Latency over time (mean of requests finishing each second)", "Throughput over time");
    private static final List<String> SWEEP_CHARTS = List.of("Latency vs offered load (bands: 95% confidence intervals)", "Throughput vs latency",
            "Achieved vs offered load");

    @TempDir
    static Path dir;
    private static String baseUrl;
    private static BenchResult normal;
    private static Map<String, RenderedReport> pages;
    private static ServingResult<SimulatorKeys> simulated;

    @BeforeAll
    static void writeAndRenderReports() throws Exception {
        assumeTrue(HeadlessChromium.available(), HeadlessChromium.BINARY + " is not installed");
        BenchResult slow;
        BenchResult one;
        BenchResult failed;
        ObjectNode meta = ResultJson.mapper().createObjectNode().put("infersim_version", VERSION)
                .put("infersim_workload", "random 16 in, 8 out");
        try (FakeStreamingServer server = new FakeStreamingServer(10, 5, 1, 0, 0, 0)) {
            baseUrl = server.baseUrl();
            // the query string puts an '&' into a chart title: it must show as '&', not '&amp;'
            BenchConfig config = new BenchConfig(baseUrl, "/v1/completions", "m", null, true, 10_000, 1_000_000_000L, 0,
                    new GoodputSlo(Double.NaN, 50, Double.NaN), List.of("ttft", "tpot", "itl", "e2el"),
                    List.of(50.0, 99.0), 100, baseUrl + "/metrics?a=1&b=2", 100);
            try (BenchmarkClient client = new BenchmarkClient(config)) {
                normal = client.run(workload(44, 40), 4, 0, 0, meta);
                slow = client.run(workload(10, 20), 0, 0, 0, meta);
                one = client.run(workload(1, 10), 0, 0, 0, meta);
                server.failFrom.set(server.received.get() + 2); // the initial test request passes, then all fail
                failed = client.run(workload(5, 50), 0, 0, 0, meta);
            }
        }
        Path run = dir.resolve("run.html");
        HtmlReport.writeRun(run, normal.result());
        Path sweep = dir.resolve("sweep.html");
        // the sweeps' validity is the test's: a busy machine may flag a live run invalid, which these pages draw apart
        ServingResult<ClientKeys> slowValid = judged(slow, null);
        ServingResult<ClientKeys> normalValid = judged(normal, null);
        HtmlReport.writeSweep(sweep, analyze(Map.of(20.0, slowValid, 40.0, normalValid)), List.of(slowValid, normalValid));
        Path invalidSweep = dir.resolve("sweep-invalid.html");
        ServingResult<ClientKeys> flagged = judged(slow, "a planted reason");
        HtmlReport.writeSweep(invalidSweep, analyze(Map.of(20.0, flagged, 40.0, normalValid)),
                List.of(flagged, normalValid));
        Path onePoint = dir.resolve("one-request.html");
        HtmlReport.writeSweep(onePoint, analyze(Map.of(10.0, one.result())), List.of(one.result()));
        Path allFailed = dir.resolve("all-failed.html");
        HtmlReport.writeSweep(allFailed, analyze(Map.of(50.0, failed.result())), List.of(failed.result()));
        simulated = simulatedFleet();
        Path fleet = dir.resolve("fleet.html");
        HtmlReport.writeRun(fleet, simulated);
        Path broken = dir.resolve("broken.html");
        HtmlReport.writeRun(broken, Map.of("completed", 1, "infersim_percentile_curves", Map.of("percentiles", List.of(50))));
        pages = HeadlessChromium.render(dir, List.of(run, sweep, invalidSweep, onePoint, allFailed, fleet, broken));
    }

    /** A simulated fleet that an HPA scales through a ramp, with a TTFT SLO: the report simulate --html writes. */
    private static ServingResult<SimulatorKeys> simulatedFleet() {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).build();
        Autoscaler hpa = Autoscalers.byName("hpa", AutoscalerSpec.of(AutoscaleMetric.NUM_REQUESTS_WAITING, 2, 1, 4));
        Fleet fleet = new Fleet(new Replica[] {new Replica(0, EngineCore.create(d))}, () -> EngineCore.create(d), hpa,
                StartupDelay.ofSeconds(10), 0);
        WorkloadSpec spec = WorkloadSpec.builder().numPrompts(3000).randomInputLen(1024).randomOutputLen(128)
                .rampUp(RampStrategy.LINEAR, 2, 60).seed(2).build();
        SimulationResult result = new Simulation(fleet, new LeastOutstandingRequestsRouter(),
                SimulationOptions.defaults().withSlo(new GoodputSlo(500, Double.NaN, Double.NaN)), null)
                .run(Workload.open(spec));
        RunInfo info = new RunInfo("20260101-000000", "infersim", "m", "m", 3000, Double.POSITIVE_INFINITY, 1, 0,
                List.of("ttft"), List.of(99.0), spec.load().rampUp());
        return result.report(info).result();
    }

    private static Workload workload(long n, double rate) {
        return Workload.open(WorkloadSpec.builder().numPrompts(n).randomInputLen(16).randomOutputLen(8)
                .requestRate(rate).ignoreEos(true).seed(3).build());
    }

    /** A run's result judged valid ({@code reason} null) or invalid for {@code reason}, whatever the machine made of it. */
    private static ServingResult<ClientKeys> judged(BenchResult run, String reason) {
        ObjectNode tree = run.tree();
        tree.put("infersim_valid", reason == null);
        var reasons = tree.putArray("infersim_invalid_reasons");
        if (reason != null) {
            reasons.add(reason);
        }
        return ClientKeys.read(tree);
    }

    private static LoadSweep.Summary analyze(Map<Double, ServingResult<ClientKeys>> byLoad) {
        return LoadSweep.analyze(LoadSweep.Mode.REQUEST_RATE, byLoad.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .map(e -> LoadSweep.Point.of(e.getKey(), e.getValue())).toList(), 0.9);
    }

    private static List<String> runCharts() {
        List<String> titles = new java.util.ArrayList<>(RUN_CHARTS);
        titles.add("Server metrics (" + baseUrl + "/metrics?a=1&b=2)");
        return titles;
    }

    /** Drawn in full and with nothing failed, as every page but the broken one must be. */
    private static RenderedReport clean(String name) {
        RenderedReport page = pages.get(name);
        assertEquals(List.of(), page.errorLines(), name + ": the report's own error lines");
        assertEquals(List.of(), page.consoleErrors(), name + ": uncaught errors in the console");
        assertEquals(List.of(), page.undrawn(), name + ": charts or series that drew nothing");
        assertFalse(page.html().contains("NaN"), name + " shows NaN");
        assertEquals(List.of(), page.layoutProblems(), name + ": what a reader would see wrong");
        return page;
    }

    @Test
    void runReportDrawsEveryChartAndCarriesTheRunsMetadata() {
        RenderedReport page = clean("run.html");
        assertEquals(runCharts(), page.chartTitles());
        assertEquals(List.of(), page.noDataNotes());
        Map<String, String> rows = page.rows();
        Map<String, Object> normalJson = ResultJson.mapper().convertValue(normal.tree(),
                new TypeReference<Map<String, Object>>() { });
        Map<String, Object> expected = new LinkedHashMap<>();
        for (String key : List.of("date", "model_id", "infersim_base_url", "infersim_endpoint", "num_prompts",
                "request_rate", "burstiness", "max_concurrency", "infersim_load_mode", "infersim_max_send_lag_ms",
                "completed", "failed", "total_input_tokens", "total_output_tokens", "infersim_workload", "infersim_version")) {
            expected.put(key, normalJson.get(key));
        }
        expected.forEach((key, value) -> assertEquals(shown(value), rows.get(key), key));
        assertEquals(VERSION, rows.get("infersim_version"));
        assertEquals("40", rows.get("request_rate"));
        for (String warmup : List.of("requests: 4", "failed: 0", "duration_s: ")) {
            assertTrue(rows.get("infersim_warmup").contains(warmup), rows.get("infersim_warmup"));
        }
        String machine = rows.get("infersim_machine");
        assertTrue(machine.contains("cpus: " + Runtime.getRuntime().availableProcessors())
                && machine.contains("java: ") && machine.contains("os: "), machine);
        assertTrue(rows.get("infersim_send_lag_ms").contains("samples: 40"), rows.get("infersim_send_lag_ms"));
        assertTrue(rows.get("p99_ttft_ms").matches("[0-9.]+ \\(95% CI [0-9.]+-([0-9.]+|\\?)\\)"),
                "each percentile with its interval: " + rows.get("p99_ttft_ms"));
    }

    /** As the page writes a number: integers whole, others to three decimals, missing as '-'. */
    private static String shown(Object value) {
        if (value instanceof Number n) {
            double d = n.doubleValue();
            return d == Math.rint(d) && !Double.isInfinite(d) ? Long.toString((long) d)
                    : String.format(Locale.ROOT, "%.3f", d);
        }
        return value == null ? "-" : value.toString();
    }

    @Test
    void sweepReportDrawsTheSweepCurvesAndEveryPointsCharts() {
        RenderedReport page = clean("sweep.html");
        List<String> titles = new java.util.ArrayList<>(SWEEP_CHARTS);
        titles.addAll(runCharts());
        titles.addAll(runCharts());
        assertEquals(titles, page.chartTitles());
        String latency = page.charts().get(0);
        assertTrue(latency.contains("fill-opacity=\"0.16\""), "the latency curves carry their intervals as shaded bands");
        assertTrue(page.html().contains("Saturation knee: ") && page.html().contains("(95%: between "), page.html());
    }

    /**
     * A point flagged invalid is drawn as such (an open grey circle, named in the legend and in the words), and left
     * out of the lines, goodput included: one point is left on each line, drawn by its symbol.
     */
    @Test
    void aSweepPointFlaggedInvalidIsDrawnAsSuchAndLeftOutOfGoodput() {
        RenderedReport page = clean("sweep-invalid.html");
        assertTrue(page.html().contains("Runs flagged invalid (1, at 20) are drawn as open grey circles and left out of "
                + "the lines and of goodput."), page.html());
        String achieved = page.charts().get(2);
        assertTrue(achieved.contains(">run flagged invalid<"), "the legend names the invalid point: " + achieved);
        assertFalse(sweepPointJoined(page.charts().get(0)), "no line joins the invalid point to the valid one");
    }

    /** Whether the chart draws a line segment (a path from one point to another) in a latency curve's colour. */
    private static boolean sweepPointJoined(String svg) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "<path d=\"(M[^\"]*)\" fill=\"none\" stroke=\"#(5470c6|91cc75|fac858|ee6666)\"").matcher(svg);
        while (m.find()) {
            if (m.group(1).contains("L")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void oneRequestAndOnePointStillShowTheirPoints() {
        // A lone point draws no line segment, so it is only seen through its symbol (undrawn() checks for either).
        RenderedReport page = clean("one-request.html");
        List<String> titles = new java.util.ArrayList<>(SWEEP_CHARTS);
        titles.addAll(runCharts());
        assertEquals(titles, page.chartTitles());
    }

    @Test
    void runWhereEveryRequestFailedSaysSoInsteadOfPlottingZeroLatencies() {
        RenderedReport page = clean("all-failed.html");
        // a latency that does not exist is neither plotted nor tabulated as 0 ms
        assertEquals(List.of("Latency vs offered load (bands: 95% confidence intervals): nothing to plot.", "Throughput vs latency: nothing to plot.",
                "Latency over time (mean of requests finishing each second): nothing to plot."), page.noDataNotes());
        List<String> titles = new java.util.ArrayList<>(List.of("Achieved vs offered load",
                "Latency distribution (value at percentile)", "Throughput over time"));
        titles.add(runCharts().get(3));
        assertEquals(titles, page.chartTitles(), "the send lag, the sends and the server were still measured");
        assertTrue(page.html().contains("No request completed (5 failed)"), page.html());
        assertEquals("-", page.rows().get("median_ttft_ms"));
        assertEquals("0", page.rows().get("request_throughput"));
    }

    @Test
    void simulatedFleetReportPlotsReplicasLatencyAndSloAttainmentOnOneTimeAxis() {
        RenderedReport page = clean("fleet.html");
        assertEquals(List.of("Replicas and latency over time"), page.chartTitles());
        ReplicaSeries.Points replicas = simulated.producer().replicas();
        assertTrue(replicas.desired().length > 1, "the HPA scaled: " + Arrays.toString(replicas.desired()));
        assertFalse(page.html().contains("INVALID"), "a simulated run claims no validation it did not have");
        assertFalse(page.html().contains("No server metrics scraped"), "a simulated run scrapes no server");
    }

    @Test
    void aChartThatFailsLeavesAVisibleErrorLine() {
        RenderedReport page = pages.get("broken.html");
        assertEquals(1, page.errorLines().size(), page.html());
        assertTrue(page.errorLines().get(0).startsWith("Report error in run 1: "), page.errorLines().get(0));
    }
}
