package dev.infersim.engine;

import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import static dev.infersim.engine.EngineFixtures.engine;
import static dev.infersim.engine.EngineFixtures.h100Llama8b;
import static dev.infersim.engine.EngineFixtures.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostTimeTest {
    private static final Deployment V1 = h100Llama8b().maxNumSeqs(8).build();
    private static final Deployment V0 = V1.toBuilder().engine(EngineVersion.VLLM_V0).build();
    private static final RooflineCostModel GPU = new RooflineCostModel(V1);

    @Test
    void theEarlierEngineAddsItsStepAndRequestCostsToTheGpuStep() {
        HostTime host = EngineVersion.VLLM_V0.hostTime();
        EngineCore engine = engine(V0, 1000, "fcfs");
        for (int i = 0; i < 3; i++) {
            engine.submit(request(i, 100, 4));
        }
        StepPlan prefill = engine.planStep(0);
        assertEquals(3, prefill.shape().newRequests());
        assertEquals(GPU.stepNanos(prefill.shape())
                        + Math.round((host.fixedUs() + host.perPassUs() + 3 * host.perRequestUs()) * 1e3),
                prefill.durationNanos());
        engine.completeStep(prefill);
        StepPlan decode = engine.planStep(prefill.endNanos());
        assertEquals(0, decode.shape().newRequests());
        assertEquals(GPU.stepNanos(decode.shape()) + Math.round((host.fixedUs() + host.perPassUs()) * 1e3),
                decode.durationNanos());
    }

    @Test
    void theDefaultEngineStepsAreTheGpuSteps() {
        assertSame(EngineVersion.VLLM_V1, h100Llama8b().build().engine());
        assertSame(GPU, EngineVersion.VLLM_V1.hostTime().over(GPU), "no host time: the GPU model itself");
        EngineCore engine = engine(V1, 1000, "fcfs");
        engine.submit(request(0, 100, 2));
        StepPlan prefill = engine.planStep(0);
        assertEquals(GPU.stepNanos(prefill.shape()), prefill.durationNanos());
    }

    @Test
    void overlappedHostTimeLastsTheLongerOfTheTwo() {
        HostTime overlapped = new HostTime(1500, 500, 500, true);
        BatchShape decode = new BatchShape().addDecode(100);
        assertEquals(2_000_000, overlapped.stepNanos(1_000_000, decode, 1), "host longer than the GPU's step");
        assertEquals(3_000_000, overlapped.stepNanos(3_000_000, decode, 1), "hidden under the GPU's step");
        assertEquals(6_500_000, new HostTime(1500, 500, 500, false).stepNanos(0, decode, 10),
                "a round of 10 passes: scheduled once, 10 passes driven");
        BatchShape admitting = new BatchShape().addPrefill(10, 0, true).addNewRequests(4);
        assertEquals(4_000_000, overlapped.stepNanos(1_000_000, admitting, 1));
        assertEquals(5_000_000, new HostTime(1500, 500, 500, false).stepNanos(1_000_000, admitting, 1));
        assertEquals(0, new HostTime(1500, 500, 500, false).over(GPU).stepNanos(new BatchShape()), "no step, no host time");
    }

    @Test
    void theEngineFlagNamesTheBadValueAndTheChoices() {
        assertSame(EngineVersion.VLLM_V0, EngineVersion.parse("--engine", "vllm-v0"));
        ConfigException e = assertThrows(ConfigException.class, () -> EngineVersion.parse("--engine", "vllm-v2"));
        assertTrue(e.getMessage().startsWith("--engine: unknown engine 'vllm-v2'"), e.getMessage());
        assertTrue(e.getMessage().contains("vllm-v1 or vllm-v0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new HostTime(0, -1, 0, false));
    }
}
