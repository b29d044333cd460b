package dev.infersim.bench.harness;

import dev.infersim.bench.harness.HarnessCheck.ErrorSummary;
import dev.infersim.bench.harness.HarnessCheck.Report;
import dev.infersim.bench.harness.HarnessResults.Format;
import dev.infersim.bench.measure.ArrivalFit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * check-harness on real result files from before the truth log had text keys and wire instants (resources/harness/*:
 * each harness run against {@code infersim serve --truth-log}, 200 requests, with the truth log it produced) and on
 * hand-written ones (resources/harness/*.json*, one truth log of a warm-up and three requests, for what the real runs
 * do not show). The corpus of planted bugs is {@link HarnessCorpusTest}'s.
 */
class HarnessCheckTest {
    private static final double EXACT = 1e-9;

    static Path resource(String name) throws URISyntaxException {
        return Path.of(HarnessCheckTest.class.getResource("/harness/" + name).toURI());
    }

    private static Report check(Format format, String dir, String result) throws URISyntaxException {
        HarnessResults.Results results = HarnessResults.read(format, resource(dir).resolve(result));
        return HarnessCheck.check(results, TruthTimeline.read(resource(dir).resolve("truth.jsonl.gz")), results.target());
    }

    private static List<String> ids(Report r) {
        return r.findings().stream().map(HarnessFinding::id).toList();
    }

    private static HarnessFinding finding(Report r, String id) {
        return r.findings().stream().filter(f -> f.id().equals(id)).findFirst().orElseThrow(() -> new AssertionError(
                id + " not among " + ids(r)));
    }

    private static void assertExact(ErrorSummary e, int n) {
        assertEquals(n, e.n());
        assertEquals(0, e.min(), EXACT);
        assertEquals(0, e.max(), EXACT);
    }

    @Test
    void vllmBenchmarkServingIsMatchedWithoutAnIdOrATextKeyAndItsOwnTtftTailIsNoFinding() throws Exception {
        // vLLM 0.6.1's benchmark_serving.py, Poisson at 20 req/s, against a truth log from before text keys and wire
        // instants: no id, no instant, a test request before the run.
        Report r = check(Format.VLLM, "vllm-0.6.1-poisson-20", "result.json.gz");
        assertEquals(200, r.matching().byAssignment());
        assertEquals(200, r.matching().matched());
        assertEquals(2, r.matching().ambiguous());
        assertEquals(0, r.matching().matchingErrors());
        assertEquals(1, r.matching().truthBeforeFirst());
        assertEquals(0, r.matching().unmatched());
        assertEquals(HarnessTarget.Process.POISSON, r.target().process());
        assertEquals(20.0, r.target().rateReqPerS());
        // Counts and per-token ITLs are exact.
        assertExact(r.errors().get("output_tokens"), 198);
        assertExact(r.errors().get("itl_count"), 198);
        assertEquals(1.0, r.counts().output().scale());
        assertEquals(1.0, r.counts().prompt().scale());
        // Its TTFT error's tail (a new connection a request, one event loop) is not a clock started early: its floor is
        // a millisecond.
        assertEquals(List.of(), ids(r));
        assertEquals(HarnessCheck.Verdict.CLEAN, r.verdict());
        assertTrue(r.errors().get("ttft_ms").min() > 0, "the harness never saw a first token before the server sent it");
    }

    @Test
    void guidellmPoissonRunShowsItsRepeatedSeedInRateArrivalsAndSchedule() throws Exception {
        // GuideLLM 0.7.3, Poisson at 10 req/s: every worker process draws the same gaps from seed 42.
        Report r = check(Format.GUIDELLM, "guidellm-0.7.3-poisson-10", "result.json.gz");
        assertEquals(200, r.matching().byId());
        assertEquals(0, r.matching().ambiguous());
        assertEquals(HarnessTarget.Process.POISSON, r.target().process());
        assertEquals(10.0, r.target().rateReqPerS());
        assertEquals(List.of("rate_off_target", "arrival_process_off", "repeated_schedule_gaps"), ids(r));
        assertEquals(HarnessCheck.Verdict.FINDINGS, r.verdict());
        HarnessFinding rate = finding(r, "rate_off_target");
        assertEquals(10.0, rate.evidence().get("requested_rate_per_s"));
        assertEquals(103.09, rate.evidence().get("achieved_rate_per_s"), 0.01);
        assertEquals(r.rate().perS(), rate.evidence().get("achieved_rate_per_s"), EXACT);
        assertTrue(r.rate().low() > 10, "the requested rate lies outside the interval: " + r.rate());
        HarnessFinding arrivals = finding(r, "arrival_process_off");
        assertTrue(arrivals.evidence().get("p_value") < ArrivalFit.ALPHA, arrivals.summary());
        assertEquals(199, arrivals.evidence().get("gaps"));
        HarnessFinding repeats = finding(r, "repeated_schedule_gaps");
        assertEquals(2.533, repeats.evidence().get("most_repeated_gap_ms"), EXACT);
        assertEquals(9, repeats.evidence().get("most_repeated_count"));
        assertTrue(repeats.summary().contains("102.006 ms x7"), repeats.summary());
    }

    @Test
    void guidellmConstantRunKeepsItsRateAndCountsAndItsTtftTimeIsTheMachinesTail() throws Exception {
        Report r = check(Format.GUIDELLM, "guidellm-0.7.3-constant-10", "result.json.gz");
        assertEquals(200, r.matching().matched());
        assertEquals(0, r.matching().ambiguous());
        assertEquals(HarnessTarget.Process.CONSTANT, r.target().process());
        assertEquals(10.02, r.rate().perS(), 0.01);
        assertTrue(r.rate().low() < 10 && r.rate().high() > 10, r.rate().toString());
        assertExact(r.errors().get("output_tokens"), 200);
        assertExact(r.errors().get("prompt_tokens"), 200);
        // Ten worker processes and the scheduler share two cores: its TTFT error's parts have a tail (p99 44 ms before
        // the send), but every one's floor is a few ms, so no clock started early.
        assertEquals(List.of(), ids(r));
        assertTrue(r.errors().get("ttft_before_send_ms").p99() > 20, r.errors().toString());
        assertTrue(r.errors().get("ttft_before_send_ms").min() > 0 && r.errors().get("ttft_after_first_token_ms").min() > 0);
    }

    @Test
    void infersimsOwnBenchIsMatchedByTheRequestIdsInItsDetailFile() throws Exception {
        Report r = check(Format.VLLM, "infersim-bench-poisson-20", "bench.json.gz");
        assertEquals(200, r.matching().byId());
        assertEquals(0, r.matching().matchingErrors());
        assertExact(r.errors().get("itl_count"), 200);
        assertExact(r.errors().get("output_tokens"), 200);
        // This run's client read 206 token gaps bunched after a stall (its JSONL shows the zero gaps); the server's
        // writes (planned instants, in a log from before the wire ones) bunched none.
        assertEquals(List.of("event_loop_stalls"), ids(r));
        HarnessFinding stalls = finding(r, "event_loop_stalls");
        assertEquals(206, stalls.evidence().get("bunched_gaps"));
        assertEquals(3000, stalls.evidence().get("compared_gaps"));
        assertEquals(0, stalls.evidence().get("server_bunched_share"));
    }

    @Test
    void aiperfIsMatchedByItsRequestIdsLeavesItsWarmupsOutAndItsPromptCountIsReportedNotJudged() throws Exception {
        Report r = check(Format.AIPERF, "aiperf-poisson-10", "profile_export.jsonl.gz");
        assertEquals(200, r.matching().byId());
        assertEquals(0, r.matching().matchingErrors());
        assertEquals(new HarnessTarget(10, HarnessTarget.Process.POISSON, 1, 0, 5), r.target());
        assertEquals(5, r.matching().truthBeforeFirst());
        assertExact(r.errors().get("output_tokens"), 200);
        assertExact(r.errors().get("itl_count"), 200);
        // It reports the 32 tokens of text it generated; the server counted 40 with the chat template around them: the
        // length it asked for, not a measurement.
        assertEquals(0.8, r.counts().prompt().scale(), EXACT);
        assertEquals(List.of(), ids(r));
    }

    @Test
    void aiperfTimesInTheUnitTheyDeclareAreReadInIt(@TempDir Path dir) throws Exception {
        // The same run with every time metric rewritten in seconds, "unit": "s": the same requests, the same check.
        Path run = resource("aiperf-poisson-10");
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        List<String> lines = new java.util.ArrayList<>();
        try (java.io.BufferedReader in = HarnessResults.open(run.resolve("profile_export.jsonl.gz"))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                com.fasterxml.jackson.databind.JsonNode record = json.readTree(line);
                record.path("metrics").forEach(m -> {
                    if ("ms".equals(m.path("unit").asText())) {
                        com.fasterxml.jackson.databind.node.ObjectNode o = (com.fasterxml.jackson.databind.node.ObjectNode) m;
                        com.fasterxml.jackson.databind.JsonNode v = o.get("value");
                        if (v.isArray()) {
                            com.fasterxml.jackson.databind.node.ArrayNode s = o.putArray("value");
                            v.forEach(x -> s.add(x.asDouble() / 1e3));
                        } else {
                            o.put("value", v.asDouble() / 1e3);
                        }
                        o.put("unit", "s");
                    }
                });
                lines.add(json.writeValueAsString(record));
            }
        }
        Files.write(dir.resolve("profile_export.jsonl"), lines);
        Files.copy(run.resolve("profile_export_aiperf.json.gz"), dir.resolve("profile_export_aiperf.json.gz"));
        HarnessResults.Results seconds = HarnessResults.read(Format.AIPERF, dir.resolve("profile_export.jsonl"));
        HarnessResults.Results millis = HarnessResults.read(Format.AIPERF, run.resolve("profile_export.jsonl.gz"));
        assertEquals(millis.requests().size(), seconds.requests().size());
        for (int i = 0; i < millis.requests().size(); i++) {
            assertEquals(millis.requests().get(i).ttftMs(), seconds.requests().get(i).ttftMs(), 1e-9);
            assertEquals(millis.requests().get(i).itlsMs()[0], seconds.requests().get(i).itlsMs()[0], 1e-9);
        }
        Report r = HarnessCheck.check(seconds, TruthTimeline.read(run.resolve("truth.jsonl.gz")), seconds.target());
        assertEquals(HarnessCheck.Verdict.CLEAN, r.verdict());
    }

    @Test
    void handWrittenVllmFileShowsCoalescingWithItsPerChunkItl() throws Exception {
        HarnessResults.Results results = HarnessResults.read(Format.VLLM, resource("vllm.json"));
        Report r = HarnessCheck.check(results, TruthTimeline.read(resource("truth.jsonl")), results.target());
        assertEquals(3, r.matching().matched());
        assertEquals(1, r.matching().truthBeforeFirst());
        // "a" streamed its 4 tokens as 3 chunks: 2 ITLs of mean 15 ms for 3 gaps of 10.
        assertEquals(List.of("token_coalescing"), ids(r));
        assertEquals(5.0, finding(r, "token_coalescing").evidence().get("mean_itl_excess_ms"), EXACT);
        assertEquals(4 / 3.0, finding(r, "token_coalescing").evidence().get("tokens_per_chunk"), EXACT);
        assertEquals(2 / 0.060, r.rate().perS(), 1e-9);
    }

    @Test
    void aiperfIsMatchedByRequestIdSkippingWarmupAndFailedRecords() throws Exception {
        HarnessResults.Results results = HarnessResults.read(Format.AIPERF, resource("aiperf.jsonl"));
        Report r = HarnessCheck.check(results, TruthTimeline.read(resource("truth.jsonl")), results.target());
        assertEquals(3, r.matching().byId());
        assertEquals(1, r.matching().failed());
        assertEquals(HarnessTarget.Process.UNKNOWN, r.target().process());
        assertEquals(0.5, r.errors().get("ttft_ms").max(), EXACT);
        assertEquals(0.25, r.errors().get("ttft_before_send_ms").max(), EXACT);
        assertEquals(0.25, r.errors().get("ttft_after_first_token_ms").max(), EXACT);
        // One request of three counts one output token more: the fitted scale is the server's.
        assertEquals(1.0, r.counts().output().scale());
        assertEquals(List.of(), ids(r));
    }

    @Test
    void theJsonReportCarriesTheVerdictAndTheFindingsWithTheirEvidenceAndNoNaN() throws Exception {
        Report r = check(Format.GUIDELLM, "guidellm-0.7.3-poisson-10", "result.json.gz");
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(HarnessCheck.toJson(r));
        assertEquals("findings", json.path("verdict").asText());
        assertEquals(200, json.path("matching").path("by_id").asInt());
        assertEquals(1.0, json.path("matching").path("trusted_share").asDouble());
        assertEquals("poisson", json.path("target").path("process").asText());
        assertEquals("rate_off_target", json.path("findings").path(0).path("id").asText());
        assertEquals(r.rate().perS(), json.path("findings").path(0).path("evidence").path("achieved_rate_per_s").asDouble(),
                EXACT);
        assertTrue(json.path("errors").path("itl_mean_ms").path("p50").isNull());
        assertTrue(!json.path("findings").path(0).path("cause").asText().isEmpty());
    }
}
