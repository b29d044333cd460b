package dev.infersim.result;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class LatencyStatsTest {

    @Test
    void meanAndStdAreExactAndPercentilesWithinHistogramPrecision() {
        SplittableRandom rng = new SplittableRandom(1);
        long[] samples = new long[100_000];
        LatencyStats stats = new LatencyStats();
        for (int i = 0; i < samples.length; i++) {
            samples[i] = 1_000_000_000L + (long) (-20e6 * Math.log(1 - rng.nextDouble())); // 1 s + exp(20 ms)
            stats.record(samples[i]);
        }
        double mean = Arrays.stream(samples).average().orElseThrow();
        double variance = Arrays.stream(samples).mapToDouble(x -> (x - mean) * (x - mean)).sum() / samples.length;
        Arrays.sort(samples);

        assertEquals(mean / 1e6, stats.meanMs(), 1e-9 * mean);
        assertEquals(Math.sqrt(variance) / 1e6, stats.stdMs(), 1e-6 * Math.sqrt(variance) / 1e6);
        double exactP99 = samples[(int) Math.ceil(0.99 * samples.length) - 1] / 1e6;
        assertEquals(exactP99, stats.percentileMs(99), 1e-3 * exactP99, "3 significant digits");
        assertEquals(samples[samples.length - 1] / 1e6, stats.maxMs(), 0);
    }

    @Test
    void noPercentileExceedsTheLargestSample() {
        // A histogram bucket's top lies above the samples in it; reported as is, p99 and p100 of a small run came out
        // above the max of the very samples they summarize (p99 send lag 9.568 ms against a max of 9.561 ms).
        LatencyStats stats = new LatencyStats();
        for (long nanos : new long[] {1_696_767, 3_200_000, 9_561_408}) {
            stats.record(nanos);
        }
        assertEquals(9.561408, stats.percentileMs(99), 0);
        assertEquals(9.561408, stats.percentileMs(100), 0);
        assertEquals(stats.maxMs(), stats.percentileMs(100), 0);
    }

    @Test
    void recordingWithACountEqualsRecordingOneByOne() {
        LatencyStats batched = new LatencyStats();
        LatencyStats single = new LatencyStats();
        batched.record(5_000_000, 3);
        batched.record(9_000_000, 2);
        for (long v : new long[] {5_000_000, 5_000_000, 5_000_000, 9_000_000, 9_000_000}) {
            single.record(v);
        }
        assertEquals(single.count(), batched.count());
        assertEquals(single.meanMs(), batched.meanMs(), 1e-12);
        assertEquals(single.stdMs(), batched.stdMs(), 1e-12);
        assertEquals(single.percentileMs(50), batched.percentileMs(50));
        assertEquals(6.6, batched.meanMs(), 1e-12);
    }

    @Test
    void emptyStatsReportZeroAndZeroSamplesStayZero() {
        LatencyStats stats = new LatencyStats();
        assertEquals(0, stats.meanMs());
        assertEquals(0, stats.percentileMs(99));
        stats.record(0);
        assertEquals(0, stats.percentileMs(50));
        assertThrows(IllegalArgumentException.class, () -> stats.record(-1));
    }

    @Test
    void shardsRestoredFromTheirHistogramLogsAddUpToOneRunOfAllTheirSamples(@org.junit.jupiter.api.io.TempDir
                                                                             java.nio.file.Path dir) {
        SplittableRandom random = new SplittableRandom(5);
        LatencyStats all = new LatencyStats();
        LatencyStats[] shards = {new LatencyStats(), new LatencyStats(), new LatencyStats()};
        for (int i = 0; i < 3000; i++) {
            long nanos = 1_000_000 + (long) (random.nextDouble() * random.nextDouble() * 400_000_000L) * (i % 3 + 1);
            all.record(nanos);
            shards[i % 3].record(nanos);
        }
        LatencyStats merged = new LatencyStats();
        for (int i = 0; i < shards.length; i++) {
            java.nio.file.Path log = dir.resolve("s" + i + ".hlog");
            LatencyLog.write(log, 1_700_000_000_000L, 1_700_000_060_000L, java.util.Map.of("ttft", shards[i]));
            merged.add(LatencyStats.restored(LatencyLog.read(log).get("ttft"), shards[i].meanMs(), shards[i].stdMs()));
        }
        assertEquals(all.count(), merged.count());
        assertEquals(all.meanMs(), merged.meanMs(), 1e-9 * all.meanMs());
        assertEquals(all.stdMs(), merged.stdMs(), 1e-9 * all.stdMs());
        for (double p : new double[] {1, 50, 90, 99, 99.9, 100}) {
            assertEquals(all.percentileMs(p), merged.percentileMs(p), 1e-3 * all.percentileMs(p), "p" + p);
        }
    }
}
