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
 * Hand-written result files of each harness against one hand-written truth log (resources/harness): the truth has a
 * warm-up request and three measured ones, "a" (TTFT 50, TPOT 10, E2EL 80 ms, 4 tokens), "b" (20, 10, 40, 3 tokens)
 * and "c" (30, 20, 110, 5 tokens), arriving at 2000, 2050 and 2060 ms with 0, 1 and 2 requests in flight.
 */
class HarnessCheckTest {
    private static final double EXACT = 1e-9;

    private static Path resource(String name) throws URISyntaxException {
        return Path.of(HarnessCheckTest.class.getResource("/harness/" + name).toURI());
    }

    private static Report check(Format format, String file, double rate) throws URISyntaxException {
        return HarnessCheck.check(HarnessResults.read(format, resource(file)), TruthTimeline.read(resource("truth.jsonl")), rate);
    }

    private static void assertSummary(ErrorSummary e, int n, double min, double p50, double p99, double max) {
        assertEquals(n, e.n());
        assertEquals(min, e.min(), EXACT);
        assertEquals(p50, e.p50(), EXACT);
        assertEquals(p99, e.p99(), EXACT);
        assertEquals(max, e.max(), EXACT);
    }

    @Test
    void vllmIsMatchedByOrderPastItsTestRequestAndItsPerChunkItlAndLateTtftAreNamed() throws Exception {
        Report r = check(Format.VLLM, "vllm.json", Double.NaN);
        assertEquals("request order and arrival order", r.matchedBy());
        assertEquals(3, r.matched());
        assertEquals(1, r.skippedTruth());
        // TTFT 52, 21, 34 ms against 50, 20, 30; E2EL is TTFT + the ITLs, so it carries the same errors.
        assertSummary(r.errors().get("ttft_ms"), 3, 1, 2, 3.96, 4);
        assertSummary(r.errors().get("e2el_ms"), 3, 1, 2, 3.96, 4);
        assertSummary(r.errors().get("tpot_ms"), 3, 0, 0, 0, 0);
        // "a" streamed its 4 tokens as 3 chunks: 2 ITLs of mean 15 ms for 3 gaps of 10.
        assertSummary(r.errors().get("itl_mean_ms"), 3, 0, 0, 4.9, 5);
        assertSummary(r.errors().get("itl_count"), 3, -1, 0, 0, 0);
        assertSummary(r.errors().get("output_tokens"), 3, 0, 0, 0, 0);
        assertSummary(r.errors().get("prompt_tokens"), 3, 0, 0, 0.98, 1);
        assertEquals(2 / 0.060, r.achievedRate(), 1e-9);
        assertEquals(50.0, r.targetRate());
        assertEquals(3, r.behaviours().size(), r.behaviours().toString());
        assertTrue(r.behaviours().get(0).startsWith("per-chunk ITL: 1 of 3 requests"), r.behaviours().get(0));
        // TTFT errors 2, 1, 4 against 0, 1, 2 requests in flight: r = 2 / sqrt(2 x 14/3).
        assertTrue(r.behaviours().get(1).startsWith("TTFT error grows with load (r = 0.65"), r.behaviours().get(1));
        assertTrue(r.behaviours().get(2).startsWith("rate under-delivery: the server saw 33.33 req/s against a target of "
                + "50.00 (67%)"), r.behaviours().get(2));
        assertTrue(HarnessCheck.render(r).contains("Seen: per-chunk ITL"));
    }

    @Test
    void aiperfIsMatchedByRequestIdSkippingWarmupAndFailedRecords() throws Exception {
        Report r = check(Format.AIPERF, "aiperf.jsonl", Double.NaN);
        assertEquals("request id", r.matchedBy());
        assertEquals(3, r.matched());
        assertEquals(1, r.failed());
        assertSummary(r.errors().get("ttft_ms"), 3, 0, 0, 0.49, 0.5);
        assertSummary(r.errors().get("e2el_ms"), 3, 0, 0.25, 0.495, 0.5);
        assertSummary(r.errors().get("tpot_ms"), 3, 0, 0, 0, 0);
        assertSummary(r.errors().get("itl_mean_ms"), 3, 0, 0, 0, 0);
        assertSummary(r.errors().get("itl_count"), 3, 0, 0, 0, 0);
        assertSummary(r.errors().get("output_tokens"), 3, 0, 0, 0.98, 1);
        assertEquals(List.of("output token counts: 1 of 3 requests differ from the server's"), r.behaviours());
        assertTrue(Double.isNaN(r.targetRate()));
    }

    @Test
    void guidellmIsMatchedByStartTimeAndHasNoItlList() throws Exception {
        Report r = check(Format.GUIDELLM, "guidellm.json", 30);
        assertEquals("order of start time and arrival", r.matchedBy());
        assertEquals(3, r.matched());
        assertEquals(1, r.failed());
        assertSummary(r.errors().get("ttft_ms"), 3, 1, 2, 2.98, 3);
        assertSummary(r.errors().get("e2el_ms"), 3, 1, 2, 2.98, 3);
        assertSummary(r.errors().get("tpot_ms"), 3, 0, 0, 0, 0);
        assertEquals(0, r.errors().get("itl_mean_ms").n());
        assertSummary(r.errors().get("prompt_tokens"), 3, 0, 0, 0, 0);
        // r = 1, but the spread (p99 - p50 = 0.98 ms) is too small to call; 33.3 req/s meets the target of 30.
        assertEquals(List.of(), r.behaviours());
    }
}
