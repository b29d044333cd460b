package dev.infersim.engine;

import dev.infersim.engine.profile.Precision;
import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class StartupDelayTest {

    @Test
    void capturesVllmsDefaultBatchSizes() {
        // [1, 2, 4] + 8..248 step 8 (31 sizes) + 256..512 step 16 (17 sizes) at max_num_seqs 256.
        assertEquals(51, StartupDelay.captureSizes(256));
        // max_num_seqs 8 caps the sizes at 16: 1, 2, 4, 8, 16.
        assertEquals(5, StartupDelay.captureSizes(8));
        assertEquals(2, StartupDelay.captureSizes(1));
    }

    @Test
    void autoIsWeightBytesOverBandwidthPlusGraphCapture() {
        Deployment d = EngineFixtures.h100Llama8b().build();
        StartupDelay delay = StartupDelay.auto(d, 2.0);
        double weightBytes = d.model().totalParams() * 2.0;
        assertEquals(weightBytes / 2e9, delay.weightLoadNanos() / 1e9, 1e-6);
        assertEquals(51 * 32 * 0.005, delay.graphCaptureNanos() / 1e9, 1e-9);
        assertEquals(delay.weightLoadNanos() + delay.graphCaptureNanos(), delay.totalNanos());
    }

    @Test
    void fp8WeightsLoadInHalfTheTime() {
        Deployment bf16 = EngineFixtures.h100Llama8b().build();
        Deployment fp8 = EngineFixtures.h100Llama8b().dtype(Precision.FP8).build();
        assertEquals(StartupDelay.auto(bf16, 3).weightLoadNanos() / 2.0, StartupDelay.auto(fp8, 3).weightLoadNanos(), 1);
    }

    @Test
    void parsesAutoOrSeconds() {
        Deployment d = EngineFixtures.h100Llama8b().build();
        assertEquals(StartupDelay.auto(d, StartupDelay.DEFAULT_LOAD_BANDWIDTH_GBPS),
                StartupDelay.parse("auto", d, StartupDelay.DEFAULT_LOAD_BANDWIDTH_GBPS));
        assertEquals(2_500_000_000L, StartupDelay.parse("2.5", d, 1).totalNanos());
        assertEquals(StartupDelay.NONE, StartupDelay.parse("0", d, 1));
    }

    @Test
    void rejectsBadValuesNamingTheFlag() {
        Deployment d = EngineFixtures.h100Llama8b().build();
        assertEquals("--startup-delay must be auto or a number of seconds, got 'soon'",
                assertThrows(ConfigException.class, () -> StartupDelay.parse("soon", d, 1)).getMessage());
        assertThrows(ConfigException.class, () -> StartupDelay.parse("-1", d, 1));
        assertEquals("--load-bandwidth-gbps must be a positive number, got 0.0",
                assertThrows(ConfigException.class, () -> StartupDelay.auto(d, 0)).getMessage());
    }
}
