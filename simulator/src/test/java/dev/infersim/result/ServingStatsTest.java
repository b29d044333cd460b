package dev.infersim.result;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ServingStatsTest {
    private static final long MS = 1_000_000;

    private static RequestRecord ok(long index, long sendMs, long ttftMs, long e2elMs, int outputTokens) {
        return new RequestRecord(index, "chat", sendMs * MS, sendMs * MS, (sendMs + ttftMs) * MS, (sendMs + e2elMs) * MS,
                100, outputTokens, 0, -1, -1, -1, "length", null);
    }

    @Test
    void computesVllmMetricsAndGoodput() {
        ServingStats stats = new ServingStats(GoodputSlo.parse(List.of("ttft:100", "tpot:10")), 0);
        stats.recordRequest(ok(0, 0, 50, 1050, 101));      // TPOT 10 ms: good
        stats.recordRequest(ok(1, 0, 150, 1150, 101));     // TTFT too slow
        stats.recordRequest(ok(2, 0, 50, 50, 1));          // single token: TPOT 0, not in the TPOT stats
        stats.recordRequest(new RequestRecord(3, "chat", 0, 0, -1, -1, 100, 0, -1, -1, -1, -1, null, "prompt too long"));

        assertEquals(3, stats.completed());
        assertEquals(1, stats.failed());
        assertEquals(2, stats.goodRequests());
        assertEquals(2, stats.tpot().count());
        assertEquals(10.0, stats.tpot().meanMs(), 1e-9);
        assertEquals(250.0 / 3, stats.ttft().meanMs(), 1e-9);
        assertEquals(300, stats.inputTokens());
        assertEquals(203, stats.outputTokens());

        ServingResult<Void> result = ServingResult.of(new RunInfo("20260101-000000", "infersim", "org/model", "org/model", 4,
                Double.POSITIVE_INFINITY, 1, 0, List.of("ttft", "tpot", "itl", "e2el"), List.of(50.0, 99.9)), stats,
                2_000_000_000L, null);
        JsonNode f = ResultJson.tree(result);
        assertEquals("inf", f.get("request_rate").asText());
        assertTrue(f.get("max_concurrency").isNull());
        assertEquals(1.5, result.totals().requestThroughput(), 1e-12);
        assertEquals(1.0, result.totals().requestGoodput(), 1e-12);
        assertEquals(List.of("date", "backend", "model_id", "tokenizer_id", "num_prompts", "request_rate", "burstiness",
                "max_concurrency", "duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
                "request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
                "max_output_tokens_per_s", "max_concurrent_requests", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms",
                "p50_ttft_ms", "p99.9_ttft_ms"), iterable(f.fieldNames()).stream().limit(24).toList());
        assertEquals(3, stats.peaks().maxConcurrentRequests());
    }

    @Test
    void chunkGapsAppearOnlyWhenAClientRecordsThem() {
        RunInfo info = new RunInfo("d", "vllm", "m", "m", 1, 10, 1, 0, List.of("itl"), List.of(99.0));
        ServingStats simulated = new ServingStats(GoodputSlo.NONE, 0);
        simulated.recordRequest(ok(0, 0, 50, 150, 3));
        ServingStats measured = new ServingStats(GoodputSlo.NONE, 0);
        measured.recordRequest(ok(0, 0, 50, 150, 3));
        measured.recordIcl(100 * MS);
        measured.recordItl(50 * MS, 2);

        ServingResult<Void> sim = ServingResult.of(info, simulated, MS, null);
        ServingResult<Void> client = ServingResult.of(info, measured, MS, null);
        assertNull(sim.serverLatency("icl"));
        assertFalse(ResultJson.tree(sim).has("infersim_mean_icl_ms"));
        assertEquals(100.0, client.serverLatency("icl").meanMs(), 1e-9);
        assertEquals(100.0, ResultJson.tree(client).get("infersim_mean_icl_ms").asDouble(), 1e-9);
        assertEquals(50.0, client.metric("itl").meanMs(), 1e-9);
    }

    @Test
    void peaksCountTokensPerSecondAndRequestsActiveInEachSecond() {
        PeakRates peaks = new PeakRates(0);
        peaks.recordTokens(100 * MS, 5);
        peaks.recordTokens(900 * MS, 5);
        peaks.recordTokens(1_100 * MS, 3);
        peaks.recordRequest(0, 1_500 * MS);
        peaks.recordRequest(1_200 * MS, 2_500 * MS);
        peaks.recordRequest(3_000 * MS, 3_100 * MS);
        assertEquals(10, peaks.maxOutputTokensPerS());
        assertEquals(2, peaks.maxConcurrentRequests());
    }

    private static List<String> iterable(Iterator<String> names) {
        List<String> out = new ArrayList<>();
        names.forEachRemaining(out::add);
        return out;
    }
}
