package dev.infersim.engine;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Latencies changed while an engine runs ({@code POST /admin/config}), in virtual time: a new fixed timing or speed
 * factor holds for what is drawn or planned after the change, never for a token already due.
 */
class RuntimeTimingTest {
    private static final long MS = 1_000_000;

    private static EngineRequest request(long id, int output, long arrivalNanos) {
        return new EngineRequest(id, 64, null, output, 0, EngineRequest.NO_EOS, 0, arrivalNanos);
    }

    private static EngineCore fixed(FixedTiming timing) {
        Deployment d = EngineFixtures.h100Llama8b().maxNumSeqs(4).build();
        return EngineCore.fixed(d, KvCapacity.of(d), SchedulingPolicies.byName("fcfs"), timing, 42);
    }

    @Test
    void aNewFixedTimingTimesTheRequestsAfterIt() {
        EngineCore engine = fixed(FixedTiming.of(100, 50));
        EngineRequest before = request(1, 3, 0);
        Map<EngineRequest, List<Long>> first = FixedTimingTest.run(engine, List.of(before));
        assertEquals(List.of(100 * MS, 150 * MS, 200 * MS), first.get(before));
        engine.setFixedTiming(FixedTiming.of(300, 20));
        EngineRequest after = request(2, 3, 1_000 * MS);
        Map<EngineRequest, List<Long>> second = FixedTimingTest.run(engine, List.of(after));
        assertEquals(List.of(1_300 * MS, 1_320 * MS, 1_340 * MS), second.get(after));
        assertTrue(engine.fixedTiming());
    }

    @Test
    void aSpeedFactorOfAHalfDoublesEveryFixedLatencyDrawnAfterIt() {
        EngineCore engine = fixed(FixedTiming.of(100, 50));
        engine.setSpeedFactor(0.5);
        EngineRequest r = request(1, 2, 0);
        assertEquals(List.of(200 * MS, 300 * MS), FixedTimingTest.run(engine, List.of(r)).get(r));
    }

    @Test
    void aSpeedFactorScalesEveryCostModelStep() {
        EngineCore normal = EngineCore.create(EngineFixtures.h100Llama8b().build());
        EngineCore slow = EngineCore.create(EngineFixtures.h100Llama8b().build());
        slow.setSpeedFactor(0.25);
        assertFalse(slow.fixedTiming());
        normal.submit(request(1, 4, 0));
        slow.submit(request(1, 4, 0));
        StepPlan a = normal.planStep(0);
        long normalNanos = a.durationNanos();
        normal.completeStep(a);
        StepPlan b = slow.planStep(0);
        assertEquals(4 * normalNanos, b.durationNanos(), 4.0, "a quarter of the speed: four times as long a step");
        slow.completeStep(b);
        assertThrows(IllegalStateException.class, () -> slow.setFixedTiming(FixedTiming.of(1, 1)));
        assertThrows(dev.infersim.common.ConfigException.class, () -> slow.setSpeedFactor(0));
    }

    @Test
    void aSpeedFactorScalesTheGpusWorkButNotTheHostsTime() {
        HostTime host = EngineVersion.VLLM_V0.hostTime();
        EngineCore normal = EngineCore.create(EngineFixtures.h100Llama8b().engine(EngineVersion.VLLM_V0).build());
        EngineCore slow = EngineCore.create(EngineFixtures.h100Llama8b().engine(EngineVersion.VLLM_V0).build());
        slow.setSpeedFactor(0.25);
        normal.submit(request(1, 4, 0));
        slow.submit(request(1, 4, 0));
        long hostNanos = host.hostNanos(1, 1); // the step takes its one request in, in one pass
        long gpuNanos = normal.planStep(0).durationNanos() - hostNanos;
        assertTrue(gpuNanos > 0 && hostNanos > 0);
        assertEquals(4 * gpuNanos + hostNanos, slow.planStep(0).durationNanos(), 4.0,
                "a quarter of the GPU's speed: its work four times as long, the host's the same");
    }
}
