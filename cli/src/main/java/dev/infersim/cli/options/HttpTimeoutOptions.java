package dev.infersim.cli.options;

import dev.infersim.server.config.HttpTimeouts;
import picocli.CommandLine.Option;

/** {@code serve}'s connection timeouts ({@link HttpTimeouts}), in seconds on the command line, 0 for never. */
@OptionGroup.In(OptionGroup.SERVER)
public final class HttpTimeoutOptions {
    @Option(names = "--keep-alive-timeout-s", defaultValue = "75", paramLabel = "SECONDS",
            description = "Close a connection idle this long between requests, or a new one that sends nothing (default: "
                    + "${DEFAULT-VALUE}, nginx's; vLLM's uvicorn uses 5, VLLM_HTTP_TIMEOUT_KEEP_ALIVE; 0: never).")
    double keepAliveTimeoutS;

    @Option(names = "--header-timeout-s", defaultValue = "60", paramLabel = "SECONDS",
            description = "Close a connection whose request head is not complete this long after it began (default: "
                    + "${DEFAULT-VALUE}, as nginx and Node.js; 0: never).")
    double headerTimeoutS;

    @Option(names = "--idle-timeout-s", defaultValue = "600", paramLabel = "SECONDS",
            description = "Close a connection that neither sends nor receives a byte for this long, even with a request in "
                    + "progress (default: ${DEFAULT-VALUE}; 0: never).")
    double idleTimeoutS;

    /** Throws {@link IllegalArgumentException} naming the flag out of range. */
    public HttpTimeouts timeouts() {
        return new HttpTimeouts(millis("--keep-alive-timeout-s", keepAliveTimeoutS), millis("--header-timeout-s", headerTimeoutS),
                millis("--idle-timeout-s", idleTimeoutS));
    }

    private static long millis(String flag, double seconds) {
        if (!(seconds >= 0) || seconds > 86_400) {
            throw new IllegalArgumentException(flag + " must be between 0 (never) and 86400 seconds, got " + seconds);
        }
        return Math.round(seconds * 1000);
    }
}
