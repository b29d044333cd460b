package dev.infersim.result;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.infersim.common.ConfigException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Parsing --goodput as vllm bench serve takes it, with the mistakes that used to pass unnoticed. */
class GoodputSloTest {

    @Test
    void pairsQuotedTogetherInOneArgumentReadAsSeparatePairs() {
        GoodputSlo slo = GoodputSlo.parse(List.of("ttft:200  tpot:50", "e2el:900"));
        assertEquals(new GoodputSlo(200, 50, 900), slo);
        assertEquals(slo, GoodputSlo.parse(List.of("ttft:200", "tpot:50", "e2el:900")));
    }

    @Test
    void aMetricGivenTwiceIsRefusedRatherThanKeepingTheLastValue() {
        ConfigException twice = assertThrows(ConfigException.class,
                () -> GoodputSlo.parse(List.of("ttft:200", "ttft:100")));
        assertEquals("--goodput: ttft is given twice (200 and 100); give each metric once", twice.getMessage());
        assertThrows(ConfigException.class, () -> GoodputSlo.parse(List.of("tpot:5 TPOT:6")));
    }

    @Test
    void malformedPairsNameTheFlagAndThePair() {
        ConfigException number = assertThrows(ConfigException.class, () -> GoodputSlo.parse(List.of("ttft:fast")));
        assertTrue(number.getMessage().contains("'ttft:fast'"), number.getMessage());
        ConfigException empty = assertThrows(ConfigException.class, () -> GoodputSlo.parse(List.of(" ")));
        assertTrue(empty.getMessage().startsWith("--goodput: expected KEY:VALUE_MS"), empty.getMessage());
    }

    @Test
    void multiplesScaleTheLatencyOfOneRequestAloneAskedForOnce() {
        int[] asked = {0};
        GoodputSlo slo = GoodputSlo.parse(List.of("ttft:4x tpot:1.5x", "e2el:2000"), () -> {
            asked[0]++;
            return new GoodputSlo(100, 8, 1500);
        });
        assertEquals(new GoodputSlo(400, 12, 2000), slo);
        assertEquals(1, asked[0]);
        assertEquals(new GoodputSlo(Double.NaN, Double.NaN, 3000),
                GoodputSlo.parse(List.of("e2el:2x"), () -> new GoodputSlo(100, 8, 1500)));
    }

    @Test
    void plainMillisecondsNeverRunTheRequestAlone() {
        assertEquals(new GoodputSlo(300, 20, Double.NaN), GoodputSlo.parse(List.of("ttft:300 tpot:20"), () -> {
            throw new AssertionError("no multiple was given");
        }));
    }

    @Test
    void aMultipleWithoutAnEngineModelIsRefusedByName() {
        ConfigException noEngine = assertThrows(ConfigException.class, () -> GoodputSlo.parse(List.of("ttft:4x")));
        assertEquals("--goodput ttft:4x: a multiple of one request's latency alone needs the engine model (simulate); "
                + "give ms here", noEngine.getMessage());
        ConfigException negative = assertThrows(ConfigException.class,
                () -> GoodputSlo.parse(List.of("tpot:-1.5x"), () -> new GoodputSlo(100, 8, 1500)));
        assertEquals("--goodput tpot must be >= 0 times, got -1.5", negative.getMessage());
        ConfigException bare = assertThrows(ConfigException.class,
                () -> GoodputSlo.parse(List.of("ttft:x"), () -> new GoodputSlo(100, 8, 1500)));
        assertTrue(bare.getMessage().contains("a multiple such as 4x, got 'ttft:x'"), bare.getMessage());
    }
}
