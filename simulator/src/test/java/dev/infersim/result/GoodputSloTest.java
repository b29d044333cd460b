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
}
