package dev.infersim.engine;

import dev.infersim.common.ConfigException;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Which vLLM engine serves the deployment ({@code --engine}), and so the {@link HostTime} each of its steps spends
 * outside the GPU profile's kernels. The GPU profiles model the kernels only (bench/calibration); the engines differ in
 * what the host does around them ("the kernels used for V0 and V1 are almost identical, the performance difference is
 * mainly due to the architectural improvements (reduced CPU overheads) in V1": vLLM V1 alpha release, blog.vllm.ai,
 * 2025-01-27). The fits are in bench/fidelity/README.md.
 */
public enum EngineVersion {
    /**
     * vLLM V1 (v0.14/v0.15, the engine the H100 and H200 profiles were fitted against): scheduling and input preparation
     * run one step ahead of the GPU (async scheduling, on by default) on a persistent batch, so they overlap its work.
     * The 20 published serving runs of v0.14/v0.15 are met within -7.9% to +8.3% with no host time past the GPU's step,
     * so none is carried: its steps are the GPU's.
     */
    VLLM_V1("vllm-v1", HostTime.NONE),
    /**
     * vLLM V0 (before V1; the CI latency runs and the v0.6.0 performance update): the scheduler, the input tensors
     * rebuilt every step and the output processing run between the GPU's steps, which wait for them. 0.6 ms a
     * schedule, 0.8 ms a forward pass (1.4 ms a step of one pass; a multi-step round of 10 pays the schedule once,
     * {@link MultiStepScheduler}) and 6.0 ms a new request, fitted to the CI's 7 latency points and the v0.6.0 update's
     * 8 chart values (its runs at {@code --num-scheduler-steps 10}).
     */
    VLLM_V0("vllm-v0", new HostTime(600, 800, 6000, false));

    private final String flagValue;
    private final HostTime hostTime;

    EngineVersion(String flagValue, HostTime hostTime) {
        this.flagValue = flagValue;
        this.hostTime = hostTime;
    }

    /** The name {@code --engine} takes. */
    public String flagValue() {
        return flagValue;
    }

    public HostTime hostTime() {
        return hostTime;
    }

    /** The engine {@code --engine} names; a ConfigException naming the flag and the choices otherwise. */
    public static EngineVersion parse(String flag, String value) {
        for (EngineVersion v : values()) {
            if (v.flagValue.equalsIgnoreCase(value)) {
                return v;
            }
        }
        throw new ConfigException(flag + ": unknown engine '" + value + "' (expected "
                + Arrays.stream(values()).map(EngineVersion::flagValue).collect(Collectors.joining(" or ")) + ")");
    }

    @Override
    public String toString() {
        return flagValue;
    }
}
