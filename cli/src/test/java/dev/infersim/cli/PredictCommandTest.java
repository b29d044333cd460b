package dev.infersim.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PredictCommandTest {

    @TempDir
    Path dir;

    private static String field(CliRun r, String key) {
        return r.out().lines().filter(l -> l.startsWith(key + " ")).map(l -> l.substring(key.length()).trim())
                .findFirst().orElseThrow(() -> new AssertionError("no " + key + " in\n" + r.out()));
    }

    @Test
    void maxConcurrencyPredictsAClosedLoopWhoseThroughputTimesLatencyIsItsClients() {
        CliRun r = CliRun.of("predict", "--max-concurrency", "16", "--random-range-ratio", "0.5");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals("16", field(r, "max_concurrency"));
        assertEquals("inf", field(r, "request_rate"));
        double x = Double.parseDouble(field(r, "request_throughput"));
        double e2el = Double.parseDouble(field(r, "mean_e2el_ms")) / 1e3;
        assertEquals(16, x * e2el, 0.01, "Little's law");
        CliRun both = CliRun.of("predict", "--max-concurrency", "16", "--request-rate", "5");
        assertEquals(2, both.exitCode());
        assertTrue(both.err().startsWith("infersim: --max-concurrency with a finite --request-rate"), both.err());
        CliRun burst = CliRun.of("predict", "--request-rate", "inf", "--num-prompts", "50");
        assertEquals(0, burst.exitCode(), burst.err());
        assertTrue(burst.err().contains("predicted as a closed loop of 50 clients"), burst.err());
    }

    @Test
    void aClosedLoopSaysWhichRegimeItsClientsAreIn() {
        String[] ciShape = {"predict", "--max-concurrency", "8", "--random-input-len", "512", "--random-output-len", "256",
                "--ignore-eos", "--num-prompts", "1000"};
        CliRun lockStep = CliRun.of(ciShape);
        assertEquals(0, lockStep.exitCode(), lockStep.err());
        assertEquals("lock_step", field(lockStep, "infersim_closed_loop_regime"));
        assertEquals("1", field(lockStep, "infersim_lock_step_groups"));
        assertFalse(hasField(lockStep, "infersim_cohort_dissolves_at_round"), "a lock step never dissolves: no round");
        // the 8 prompts of a round prefilled together: what simulate gives (92.0 ms), not one prompt's prefill (14.5)
        assertEquals(92.0, Double.parseDouble(field(lockStep, "mean_ttft_ms")), 1.0);
        assertTrue(lockStep.out().contains("Lock step: equal lengths keep the 8 clients together"), lockStep.out());

        String[] varied = Arrays.copyOf(ciShape, ciShape.length + 2);
        varied[ciShape.length] = "--random-range-ratio";
        varied[ciShape.length + 1] = "0.5";
        CliRun dissolving = CliRun.of(varied);
        assertEquals("cohort", field(dissolving, "infersim_closed_loop_regime"));
        assertEquals(2.8, Double.parseDouble(field(dissolving, "infersim_cohort_dissolves_at_round")), 0.1);
        assertFalse(hasField(dissolving, "infersim_lock_step_groups"), "groups belong to the lock step");
        CliRun later = CliRun.of(append(varied, "--num-warmups", "24"));
        assertEquals("dissolved", field(later, "infersim_closed_loop_regime"));
        assertTrue(Double.parseDouble(field(later, "mean_ttft_ms")) < Double.parseDouble(field(dissolving, "mean_ttft_ms")),
                "the start's burst and clumps left out");
    }

    private static boolean hasField(CliRun r, String key) {
        return r.out().lines().anyMatch(l -> l.startsWith(key + " "));
    }

    private static String[] append(String[] args, String... more) {
        String[] all = Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, all, args.length, more.length);
        return all;
    }

    @Test
    void anOutputCapThatBindsIsPrintedWithTheFlagThatSetsIt() {
        CliRun r = CliRun.of("predict", "--request-rate", "5", "--eos-mean-tokens", "200");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.err().contains("--eos-mean-tokens 200 is clipped at each request's max_tokens (--random-output-len 128)"),
                r.err());
        CliRun lifted = CliRun.of("predict", "--request-rate", "5", "--eos-mean-tokens", "200", "--random-output-len", "4096");
        assertEquals(0, lifted.exitCode(), lifted.err());
        assertTrue(lifted.err().isEmpty(), lifted.err());
    }

    @Test
    void nearSaturationThePredictionSaysHowFarItWasFoundOff() {
        CliRun r = CliRun.of("predict", "--request-rate", "1");
        double saturation = Double.parseDouble(field(r, "infersim_saturation_rate_per_s"));
        CliRun near = CliRun.of("predict", "--request-rate", String.valueOf(0.95 * saturation));
        assertEquals(0, near.exitCode(), near.err());
        assertTrue(near.err().contains("mean TTFT came out 18% and p99 TTFT 53% short"), near.err());
        assertTrue(field(near, "infersim_trust_note").startsWith("at 95% of the saturation rate"));
        assertTrue(CliRun.of("predict", "--request-rate", String.valueOf(0.9 * saturation)).err().isEmpty());
    }

    @Test
    void aWorkloadProfilePredictsAtItsOwnRateLikeSimulate() {
        CliRun r = CliRun.of("predict", "--workload", "matrix-row-e");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals("4.000", field(r, "request_rate"));
        assertEquals("10.000", field(CliRun.of("predict", "--workload", "chat"), "request_rate"),
                "a profile without a rate gets predict's default");
    }

    @Test
    void aTracePredictsAtItsMeanRateWithoutARateFlag() throws IOException {
        Path trace = dir.resolve("trace.jsonl");
        Files.writeString(trace, """
                {"timestamp_ms": 1000, "input_len": 800, "output_len": 100}
                {"timestamp_ms": 1250, "input_len": 1200, "output_len": 300}
                {"timestamp_ms": 1500, "input_len": 1000, "output_len": 200}
                """);
        CliRun r = CliRun.of("predict", "--dataset-name", "trace", "--dataset-path", trace.toString());

        assertEquals(0, r.exitCode(), r.err());
        assertEquals("4.000", field(r, "request_rate"), "2 gaps in 0.5 s");
        assertEquals("1000.000", field(r, "infersim_mean_prompt_tokens"));
    }

    @Test
    void theSavedResultHasVllmsFileNameAndLoads() throws IOException {
        CliRun r = CliRun.of("predict", "--request-rate", "5", "--save-result", "--result-dir", dir.toString());

        assertEquals(0, r.exitCode(), r.err());
        try (var files = Files.list(dir)) {
            Path saved = files.findFirst().orElseThrow();
            assertTrue(saved.getFileName().toString().startsWith("infersim-predict-5.0qps-Llama-3.1-8B-Instruct-"), saved.toString());
            assertEquals(5.0, new ObjectMapper().readTree(saved.toFile()).get("request_rate").asDouble());
        }
    }

    @Test
    void theCapacityPlanCountsThePrefillInTtftAsTheReportedTtftDoes() {
        CliRun tight = CliRun.of("predict", "--slo-ttft-ms", "10");
        assertEquals(0, tight.exitCode(), tight.err());
        assertTrue(Double.parseDouble(field(tight, "mean_ttft_ms")) > 10);
        assertEquals("0.000", field(tight, "infersim_max_rate_meeting_slo_per_s"), "no rate meets a TTFT below the prefill");

        CliRun loose = CliRun.of("predict", "--slo-ttft-ms", "35");
        String maxRate = field(loose, "infersim_max_rate_meeting_slo_per_s");
        CliRun atMax = CliRun.of("predict", "--request-rate", maxRate);
        assertTrue(Double.parseDouble(field(atMax, "mean_ttft_ms")) <= 35.5, atMax.out());
    }

    @Test
    void aBatchOfOnePredicts() {
        CliRun r = CliRun.of("predict", "--max-num-seqs", "1", "--max-num-batched-tokens", "2048", "--request-rate", "0.5");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals("1", field(r, "infersim_batch_limit"));
    }

    @Test
    void burstyArrivalsWaitLongerThanPoissonOnes() {
        String[] oneAtATime = {"predict", "--max-num-seqs", "1", "--max-num-batched-tokens", "2048", "--request-rate", "0.5"};
        CliRun poisson = CliRun.of(oneAtATime);
        CliRun bursty = CliRun.of(concat(oneAtATime, "--burstiness", "0.25"));

        assertEquals(0, bursty.exitCode(), bursty.err());
        assertTrue(Double.parseDouble(field(bursty, "infersim_mean_queue_time_ms"))
                > 2 * Double.parseDouble(field(poisson, "infersim_mean_queue_time_ms")), bursty.out());
    }

    @Test
    @org.junit.jupiter.api.Timeout(120)
    void burstyArrivalsPlanCapacityForAnSlo() {
        // the planner probes rates within rounding of saturation, where the GI/M/1 root's bracket search once never ended
        CliRun r = CliRun.of("predict", "--request-rate", "20", "--burstiness", "0.25", "--slo-ttft-ms", "500");
        assertEquals(0, r.exitCode(), r.err());
        double rate = Double.parseDouble(field(r, "infersim_max_rate_meeting_slo_per_s"));
        assertTrue(rate > 0 && rate < Double.parseDouble(field(r, "infersim_saturation_rate_per_s")), r.out());
    }

    @Test
    void explainNamesTheFormulaAndTheVerdictAboveCapacity() {
        CliRun md1 = CliRun.of("predict", "--max-num-seqs", "1", "--max-num-batched-tokens", "2048", "--request-rate", "0.5",
                "--explain");
        assertEquals(0, md1.exitCode(), md1.err());
        assertTrue(md1.out().contains("M/D/1") && md1.out().contains("Pollaczek-Khinchine"), md1.out());
        assertTrue(md1.out().contains("p99"), md1.out());

        CliRun batching = CliRun.of("predict", "--request-rate", "5", "--explain");
        assertTrue(batching.out().contains("birth-death chain") && batching.out().contains("TTFT = admission wait")
                && batching.out().contains("Batch spread:"), batching.out());

        CliRun budget = CliRun.of("predict", "--max-num-batched-tokens", "512", "--random-input-len", "2048",
                "--random-output-len", "96", "--request-rate", "8", "--explain");
        assertTrue(budget.out().contains("Requests complete fastest with n = "), budget.out());

        CliRun overload = CliRun.of("predict", "--request-rate", "1000", "--explain");
        assertEquals(0, overload.exitCode(), overload.err());
        assertEquals("true", field(overload, "infersim_saturated"));
        assertTrue(field(overload, "infersim_saturation_reason").startsWith("unstable: queue grows without bound"), overload.out());
        assertTrue(overload.out().contains("Verdict: unstable: queue grows without bound"), overload.out());
    }

    @Test
    void percentilesOfEveryLatencyAreReported() {
        CliRun r = CliRun.of("predict", "--request-rate", "5", "--metric-percentiles", "50,99");
        for (String metric : new String[] {"ttft", "tpot", "itl", "e2el"}) {
            double median = Double.parseDouble(field(r, "median_" + metric + "_ms"));
            double p99 = Double.parseDouble(field(r, "p99_" + metric + "_ms"));
            assertTrue(median > 0 && p99 >= median, metric + "\n" + r.out());
        }
    }

    private static String[] concat(String[] a, String... b) {
        String[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test
    void flagsTheClosedFormCannotHonourAreOneLineNamingThem() {
        assertOneLineError(CliRun.of("predict", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1",
                "--ramp-up-end-rps", "5"), "--ramp-up-strategy");
        assertOneLineError(CliRun.of("predict", "--save-detailed"), "--save-detailed");
        assertOneLineError(CliRun.of("predict", "--goodput", "ttft:100"), "--goodput");
        assertOneLineError(CliRun.of("predict", "--max-model-len", "1000"), "--max-model-len");
        assertOneLineError(CliRun.of("predict", "--slo-ttft-ms", "-5"), "--slo-ttft-ms");
        assertOneLineError(CliRun.of("predict", "--slo-tpot-ms", "0"), "--slo-tpot-ms");
        assertOneLineError(CliRun.of("predict", "--slo-queue-p99-ms", "-1"), "--slo-queue-p99-ms");
    }

    private static void assertOneLineError(CliRun r, String flag) {
        assertEquals(2, r.exitCode(), r.out() + r.err());
        String err = r.err().strip();
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.contains(flag), err);
    }
}
