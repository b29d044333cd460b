package dev.infersim.cli.options;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.FixedTiming;
import picocli.CommandLine.Option;

import java.util.Locale;

/**
 * {@code --timing engine|fixed} and the fixed latencies, under llm-d-inference-sim's flag names. Shared by serve,
 * simulate and predict so a mock run, its simulation and its closed form are set alike.
 */
@OptionGroup.In(OptionGroup.TIMING)
public final class TimingOptions {

    @Option(names = "--timing", defaultValue = "engine", paramLabel = "engine|fixed",
            description = "engine: every step timed by the engine's cost model; fixed: each request on its own timeline of "
                    + "fixed latencies (the flags below), up to --max-num-seqs at once (default: ${DEFAULT-VALUE}).")
    String timing;

    @Option(names = "--time-to-first-token", paramLabel = "MS",
            description = "Fixed timing: TTFT after admission, ms (default: 100).")
    Double timeToFirstTokenMs;

    @Option(names = "--time-to-first-token-std-dev", paramLabel = "MS",
            description = "Fixed timing: standard deviation of TTFT (normal truncated at 0), ms (default: 0).")
    Double timeToFirstTokenStdDevMs;

    @Option(names = "--inter-token-latency", paramLabel = "MS",
            description = "Fixed timing: gap between output tokens, ms (default: 50).")
    Double interTokenLatencyMs;

    @Option(names = "--inter-token-latency-std-dev", paramLabel = "MS",
            description = "Fixed timing: standard deviation of each gap (normal truncated at 0), ms (default: 0).")
    Double interTokenLatencyStdDevMs;

    @Option(names = "--prefill-time-per-token", paramLabel = "MS",
            description = "Fixed timing: TTFT added per prompt token not in the prefix cache, ms (default: 0).")
    Double prefillTimePerTokenMs;

    @Option(names = "--time-factor-under-load", paramLabel = "F",
            description = "Fixed timing: latencies grow linearly with running requests, 1x alone to Fx at --max-num-seqs "
                    + "(default: 1).")
    Double timeFactorUnderLoad;

    /** The fixed latencies, or null for engine timing; a latency flag given without {@code --timing fixed} is an error. */
    public FixedTiming fixedTiming() {
        String mode = timing.toLowerCase(Locale.ROOT);
        ConfigException.check(mode.equals("engine") || mode.equals("fixed"), "--timing must be engine or fixed, got '%s'", timing);
        if (mode.equals("engine")) {
            String stray = timeToFirstTokenMs != null ? "--time-to-first-token"
                    : timeToFirstTokenStdDevMs != null ? "--time-to-first-token-std-dev"
                    : interTokenLatencyMs != null ? "--inter-token-latency"
                    : interTokenLatencyStdDevMs != null ? "--inter-token-latency-std-dev"
                    : prefillTimePerTokenMs != null ? "--prefill-time-per-token"
                    : timeFactorUnderLoad != null ? "--time-factor-under-load" : null;
            ConfigException.check(stray == null, "%s applies to --timing fixed only (the engine's cost model times steps)", stray);
            return null;
        }
        return new FixedTiming(or(timeToFirstTokenMs, 100), or(timeToFirstTokenStdDevMs, 0), or(interTokenLatencyMs, 50),
                or(interTokenLatencyStdDevMs, 0), or(prefillTimePerTokenMs, 0), or(timeFactorUnderLoad, 1));
    }

    private static double or(Double value, double fallback) {
        return value != null ? value : fallback;
    }
}
