package dev.infersim.result;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** vLLM's peak output rate and concurrency, in one-second bins, whatever the span a run covers. */
class PeakRatesTest {
    private static final long S = 1_000_000_000L;

    @Test
    void countsTokensPerSecondAndRequestsActiveInTheSameSecond() {
        PeakRates p = new PeakRates(0);
        p.recordTokens(S / 2, 3);
        p.recordTokens(S * 3 / 4, 4);
        p.recordTokens(2 * S, 5);
        p.recordRequest(0, S);
        p.recordRequest(S / 2, 3 * S);
        p.recordRequest(2 * S, 2 * S);
        assertEquals(7, p.maxOutputTokensPerS());
        assertEquals(2, p.maxConcurrentRequests());
    }

    @Test
    void aRunSpanningCenturiesCostsMemoryForWhatItRecordsNotForItsSpan() {
        PeakRates p = new PeakRates(0);
        long late = 3_000_000_000L * S; // 95 years: one bin per second would be 24 GB of arrays
        p.recordRequest(S, late);
        p.recordTokens(late, 9);
        p.recordTokens(late + S / 2, 2);
        p.recordRequest(late, late + S);
        assertEquals(11, p.maxOutputTokensPerS());
        assertEquals(2, p.maxConcurrentRequests());
    }
}
