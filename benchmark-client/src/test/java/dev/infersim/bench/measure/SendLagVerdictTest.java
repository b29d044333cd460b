package dev.infersim.bench.measure;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SendLagVerdictTest {
    private static final long MS = 1_000_000;

    @Test
    void withoutAScheduleSendLagIsNotJudgedAndTheSummarySaysSo() {
        SendLagVerdict v = SendLagVerdict.judge(false, 300 * MS, 300 * MS, -1, 0, -1, -1, MS, "--max-send-lag-ms");
        assertEquals(SendLagVerdict.Cause.NO_SCHEDULE, v.cause());
        assertFalse(v.invalid());
        assertTrue(v.message().contains("not judged") && v.message().contains("--request-rate inf"), v.message());
    }

    @Test
    void lagWithinTheLimitIsValid() {
        SendLagVerdict v = SendLagVerdict.judge(true, MS / 2, MS / 2, MS / 2, MS / 10, -1, -1, MS, "--max-send-lag-ms");
        assertEquals(SendLagVerdict.Cause.WITHIN_LIMIT, v.cause());
        assertFalse(v.invalid());
    }

    @Test
    void lagSpentWaitingForAConnectionIsTheServersAcceptAndLeavesTheRunValid() {
        SendLagVerdict v = SendLagVerdict.judge(true, 150 * MS, MS / 2, 150 * MS, MS / 10, -1, -1,
                MS, "--max-send-lag-ms");
        assertEquals(SendLagVerdict.Cause.CONNECTING, v.cause());
        assertFalse(v.invalid());
        assertTrue(v.message().contains("waiting for a connection"), v.message());
    }

    @Test
    void lagOnlyOnSendsPackedTogetherIsABurstTheScheduleAskedFor() {
        SendLagVerdict v = SendLagVerdict.judge(true, 5 * MS, 5 * MS, MS / 2, MS / 10, -1, -1, MS, "--max-send-lag-ms");
        assertEquals(SendLagVerdict.Cause.BURST, v.cause());
        assertTrue(v.invalid());
        assertTrue(v.message().contains("bursts") && v.message().contains("--burstiness"), v.message());
    }

    @Test
    void lagThatAnIdleProbeThreadSawTooIsTheMachinesNoiseAndLeavesTheRunValid() {
        SendLagVerdict v = SendLagVerdict.judge(true, 4 * MS, 4 * MS, 4 * MS, 3 * MS, -1, -1,
                MS, "the machine-fitted limit");
        assertEquals(SendLagVerdict.Cause.MACHINE_NOISE, v.cause());
        assertFalse(v.invalid());
        assertTrue(v.message().contains("scheduling noise") && v.message().contains("3.000 ms"), v.message());
    }

    @Test
    void lagTheMachineDoesNotExplainIsTheClientsAndInvalidatesTheRunNamingWhatToDo() {
        SendLagVerdict v = SendLagVerdict.judge(true, 4 * MS, 4 * MS, 4 * MS, MS / 10, -1, -1, MS, "--max-send-lag-ms");
        assertEquals(SendLagVerdict.Cause.CLIENT_BUSY, v.cause());
        assertTrue(v.invalid());
        assertTrue(v.message().startsWith("p99 send lag 4.000 ms exceeds --max-send-lag-ms 1.000 ms: the client was too busy")
                && v.message().contains("more cores"), v.message());
    }

    @Test
    void lagOfEventLoopsThatWaitedForACpuLongerThanTheyRanIsContentionAndLeavesTheRunValid() {
        SendLagVerdict v = SendLagVerdict.judge(true, 40 * MS, 40 * MS, 40 * MS, 3 * MS, 400 * MS, 2_000 * MS, MS,
                "the machine-fitted limit");
        assertEquals(SendLagVerdict.Cause.CPU_CONTENTION, v.cause());
        assertFalse(v.invalid());
        assertTrue(v.message().contains("not busy") && v.message().contains("ran 400 ms and waited 2000 ms"),
                v.message());
    }

    @Test
    void lagOfEventLoopsThatRanMoreThanTheyWaitedIsTheClientsEvenWhenTheyWaitedToo() {
        SendLagVerdict v = SendLagVerdict.judge(true, 40 * MS, 40 * MS, 40 * MS, 3 * MS, 9_000 * MS, 2_000 * MS, MS,
                "the machine-fitted limit");
        assertEquals(SendLagVerdict.Cause.CLIENT_BUSY, v.cause());
        assertTrue(v.invalid());
        assertTrue(v.message().contains("ran 9000 ms and waited 2000 ms"), v.message());
    }

    @Test
    void theFittedLimitIsTwiceTheCalibratedNoiseAndNeverUnderOneMillisecond() {
        assertEquals(MS, SendLagVerdict.limitFromCalibration(MS / 10));
        assertEquals(3 * MS, SendLagVerdict.limitFromCalibration(3 * MS / 2));
    }

    @Test
    void theNoiseProbeRecordsOneWakeUpLatenessPerSleep() {
        var noise = SchedulingNoise.calibrate(30 * MS);
        assertTrue(noise.count() > 0 && noise.count() <= 30, "at most one sample per 1 ms sleep: " + noise.count());
    }
}
