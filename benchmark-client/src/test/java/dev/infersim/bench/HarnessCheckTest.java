package dev.infersim.bench;

import dev.infersim.bench.HarnessCheck.ErrorSummary;
import dev.infersim.bench.HarnessCheck.Report;
import dev.infersim.bench.HarnessResults.Format;
import org.junit.jupiter.api.Test;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * check-harness on real result files (resources/harness/*: each harness run against {@code infersim serve --truth-log},
 * 200 requests, with the truth log it produced) and on hand-written ones (resources/harness/*.json*, one truth log of a
 * warm-up and three requests, for what the real runs do not show).
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
    void vllmBenchmarkServingIsMatchedInFullWithoutAnIdAndOnlyItsOwnTtftTimeIsNamed() throws Exception {
        // vLLM 0.6.1's benchmark_serving.py, Poisson at 20 req/s: no id, no instant; a test request before the run.
        Report r = check(Format.VLLM, "vllm-0.6.1-poisson-20", "result.json.gz");
        assertEquals("assignment on send order, decode span and token counts", r.matching().method());
        assertEquals(200, r.matching().matched());
        assertEquals(0, r.matching().ambiguous());
        assertEquals(0, r.matching().matchingErrors());
        assertEquals(1, r.matching().truthBeforeFirst());
        assertEquals(0, r.matching().unmatched());
        assertEquals(HarnessTarget.Process.POISSON, r.target().process());
        assertEquals(20.0, r.target().rateReqPerS());
        // Counts and per-token ITLs are exact: no token, count or ITL finding.
        assertExact(r.errors().get("output_tokens"), 200);
        assertExact(r.errors().get("prompt_tokens"), 200);
        assertExact(r.errors().get("itl_count"), 200);
        assertEquals(List.of("ttft_error"), ids(r));
        HarnessFinding ttft = finding(r, "ttft_error");
        assertEquals(r.errors().get("ttft_ms").p50(), ttft.evidence().get("ttft_error_p50_ms"), EXACT);
        assertEquals(r.errors().get("ttft_ms").p99(), ttft.evidence().get("ttft_error_p99_ms"), EXACT);
        assertTrue(r.errors().get("ttft_ms").min() > 0, "the harness never saw a first token before the server sent it");
    }

    @Test
    void guidellmPoissonRunShowsItsRepeatedSeedInRateArrivalsAndSchedule() throws Exception {
        // GuideLLM 0.7.3, Poisson at 10 req/s: every worker process draws the same gaps from seed 42.
        Report r = check(Format.GUIDELLM, "guidellm-0.7.3-poisson-10", "result.json.gz");
        assertEquals("request id", r.matching().method());
        assertEquals(200, r.matching().matched());
        assertEquals(0, r.matching().ambiguous());
        assertEquals(HarnessTarget.Process.POISSON, r.target().process());
        assertEquals(10.0, r.target().rateReqPerS());
        HarnessFinding rate = finding(r, "rate_off_target");
        assertEquals(10.0, rate.evidence().get("requested_rate_per_s"));
        assertEquals(103.09, rate.evidence().get("achieved_rate_per_s"), 0.01);
        assertEquals(r.achievedRate(), rate.evidence().get("achieved_rate_per_s"), EXACT);
        HarnessFinding arrivals = finding(r, "arrival_process_off");
        assertTrue(arrivals.evidence().get("p_value") < ArrivalFit.ALPHA, arrivals.summary());
        assertEquals(199, arrivals.evidence().get("gaps"));
        HarnessFinding repeats = finding(r, "repeated_schedule_gaps");
        assertEquals(2.533, repeats.evidence().get("most_repeated_gap_ms"), EXACT);
        assertEquals(9, repeats.evidence().get("most_repeated_count"));
        assertTrue(repeats.summary().contains("102.006 ms x7"), repeats.summary());
        assertTrue(!ids(r).contains("output_tokens_differ") && !ids(r).contains("prompt_tokens_differ"), ids(r).toString());
    }

    @Test
    void guidellmConstantRunKeepsItsRateAndCountsAndShowsWhereItsTtftTimeGoes() throws Exception {
        Report r = check(Format.GUIDELLM, "guidellm-0.7.3-constant-10", "result.json.gz");
        assertEquals(200, r.matching().matched());
        assertEquals(0, r.matching().ambiguous());
        assertEquals(HarnessTarget.Process.CONSTANT, r.target().process());
        assertEquals(10.02, r.achievedRate(), 0.01);
        assertExact(r.errors().get("output_tokens"), 200);
        assertExact(r.errors().get("prompt_tokens"), 200);
        // Its TTFT error, split by its own instants: both parts did happen, and are the report's own rows.
        assertEquals(List.of("ttft_before_send", "ttft_after_first_token"), ids(r));
        assertEquals(r.errors().get("ttft_before_send_ms").p99(),
                finding(r, "ttft_before_send").evidence().get("before_send_p99_ms"), EXACT);
        assertEquals(r.errors().get("ttft_after_first_token_ms").p99(),
                finding(r, "ttft_after_first_token").evidence().get("after_first_token_p99_ms"), EXACT);
        assertTrue(r.errors().get("ttft_before_send_ms").min() > 0 && r.errors().get("ttft_after_first_token_ms").min() > 0);
    }

    @Test
    void infersimsOwnBenchIsMatchedByTheRequestIdsInItsDetailFile() throws Exception {
        Report r = check(Format.VLLM, "infersim-bench-poisson-20", "bench.json.gz");
        assertEquals("request id", r.matching().method());
        assertEquals(200, r.matching().matched());
        assertEquals(0, r.matching().matchingErrors());
        assertExact(r.errors().get("itl_count"), 200);
        assertExact(r.errors().get("output_tokens"), 200);
        assertTrue(!ids(r).contains("rate_off_target") && !ids(r).contains("arrival_process_off")
                && !ids(r).contains("repeated_schedule_gaps"), ids(r).toString());
        // This run's client read 206 token gaps bunched after a stall (its JSONL shows the zero gaps).
        HarnessFinding stalls = finding(r, "event_loop_stalls");
        assertEquals(206, stalls.evidence().get("bunched_gaps"));
        assertEquals(3000, stalls.evidence().get("compared_gaps"));
    }

    @Test
    void aiperfIsMatchedByItsRequestIdsLeavesItsWarmupsOutAndReportsThePromptItGeneratedNotTheOneSent() throws Exception {
        Report r = check(Format.AIPERF, "aiperf-poisson-10", "profile_export.jsonl.gz");
        assertEquals("request id", r.matching().method());
        assertEquals(200, r.matching().matched());
        assertEquals(0, r.matching().matchingErrors());
        assertEquals(new HarnessTarget(10, HarnessTarget.Process.POISSON, 1, 0, 5), r.target());
        assertEquals(5, r.matching().truthBeforeFirst());
        assertExact(r.errors().get("output_tokens"), 200);
        assertExact(r.errors().get("itl_count"), 200);
        // It reports the 32 tokens of text it generated; the server counted 40 with the chat template around them.
        assertEquals(List.of("prompt_tokens_differ"), ids(r));
        assertEquals(0.8, finding(r, "prompt_tokens_differ").evidence().get("harness_over_server"), EXACT);
    }

    @Test
    void handWrittenVllmFileShowsPerChunkItlCoalescingAndAnotherTokenizersPromptCount() throws Exception {
        HarnessResults.Results results = HarnessResults.read(Format.VLLM, resource("vllm.json"));
        Report r = HarnessCheck.check(results, TruthTimeline.read(resource("truth.jsonl")), results.target());
        assertEquals(3, r.matching().matched());
        assertEquals(1, r.matching().truthBeforeFirst());
        // "a" streamed its 4 tokens as 3 chunks: 2 ITLs of mean 15 ms for 3 gaps of 10; "c" has 9 prompt tokens, not 8.
        assertEquals(List.of("token_coalescing", "per_chunk_itl", "prompt_tokens_differ"), ids(r));
        assertEquals(5.0, finding(r, "per_chunk_itl").evidence().get("mean_itl_excess_ms"), EXACT);
        assertEquals(4 / 3.0, finding(r, "token_coalescing").evidence().get("tokens_per_chunk"), EXACT);
        assertEquals(1, finding(r, "prompt_tokens_differ").evidence().get("requests_differ"));
        assertEquals(2 / 0.060, r.achievedRate(), 1e-9);
    }

    @Test
    void aiperfIsMatchedByRequestIdSkippingWarmupAndFailedRecords() throws Exception {
        HarnessResults.Results results = HarnessResults.read(Format.AIPERF, resource("aiperf.jsonl"));
        Report r = HarnessCheck.check(results, TruthTimeline.read(resource("truth.jsonl")), results.target());
        assertEquals("request id", r.matching().method());
        assertEquals(3, r.matching().matched());
        assertEquals(1, r.matching().failed());
        assertEquals(HarnessTarget.Process.UNKNOWN, r.target().process());
        assertEquals(0.5, r.errors().get("ttft_ms").max(), EXACT);
        assertEquals(0.25, r.errors().get("ttft_before_send_ms").max(), EXACT);
        assertEquals(0.25, r.errors().get("ttft_after_first_token_ms").max(), EXACT);
        assertEquals(List.of("output_tokens_differ"), ids(r));
    }

    @Test
    void theJsonReportCarriesTheFindingsWithTheirEvidenceAndNoNaN() throws Exception {
        Report r = check(Format.GUIDELLM, "guidellm-0.7.3-poisson-10", "result.json.gz");
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(HarnessCheck.toJson(r));
        assertEquals(200, json.path("matching").path("matched").asInt());
        assertEquals("poisson", json.path("target").path("process").asText());
        assertEquals("rate_off_target", json.path("findings").path(0).path("id").asText());
        assertEquals(r.achievedRate(), json.path("findings").path(0).path("evidence").path("achieved_rate_per_s").asDouble(),
                EXACT);
        assertTrue(json.path("errors").path("itl_mean_ms").path("p50").isNull());
        assertTrue(!json.path("findings").path(0).path("cause").asText().isEmpty());
    }
}
