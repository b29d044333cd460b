package dev.infersim.cli.options;

import dev.infersim.server.config.FaultSettings;
import picocli.CommandLine.Option;

/** {@code serve}'s fault injection: which requests fail, how ({@link FaultSettings}), and when in their stream. */
@OptionGroup.In(OptionGroup.FAULTS)
public final class FaultOptions {
    @Option(names = "--failure-rate", defaultValue = "0", description = "Probability in [0, 1] that a request gets a fault (default: ${DEFAULT-VALUE}).")
    double failureRate;

    @Option(names = "--failure-types", defaultValue = "", paramLabel = "LIST",
            description = "Faults to draw from: rate_limit, server_error, service_unavailable, auth, context_length, disconnect, "
                    + "stall, slow_first_token (comma-separated).")
    public String failureTypes;

    @Option(names = "--fault-after-tokens", defaultValue = "3", description = "Tokens streamed before a disconnect or stall (default: ${DEFAULT-VALUE}).")
    int faultAfterTokens;

    @Option(names = "--stall-ms", defaultValue = "1000", description = "Length of a mid-stream stall, wall ms (default: ${DEFAULT-VALUE}).")
    long stallMs;

    @Option(names = "--slow-first-token-ms", defaultValue = "2000", description = "Extra wall delay of a slow first token, ms (default: ${DEFAULT-VALUE}).")
    long slowFirstTokenMs;

    /** Throws {@link IllegalArgumentException} naming the bad flag. */
    public FaultSettings settings() {
        return new FaultSettings(failureRate, FaultSettings.parseTypes(failureTypes), faultAfterTokens, stallMs,
                slowFirstTokenMs);
    }
}
