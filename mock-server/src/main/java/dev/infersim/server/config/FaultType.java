package dev.infersim.server.config;

import java.util.Locale;

/**
 * Failures the mock can inject for gateway and client tests. Error faults answer before any token with the status a real
 * server would use; stream faults happen after {@link FaultSettings#afterTokens()} tokens of a stream.
 */
public enum FaultType {
    /** 429, as when a server's queue is full. */
    RATE_LIMIT(429),
    /** 500 internal server error. */
    SERVER_ERROR(500),
    /** 503, as a server that is overloaded or restarting. */
    SERVICE_UNAVAILABLE(503),
    /** 401, as a rejected API key. */
    AUTH(401),
    /** 400 with vLLM's context-length message. */
    CONTEXT_LENGTH(400),
    /** The connection is closed after some tokens (no finish chunk, no [DONE]). */
    DISCONNECT(0),
    /** Token delivery pauses for {@link FaultSettings#stallMs()} after some tokens, then resumes. */
    STALL(0),
    /** The first token is held back {@link FaultSettings#slowFirstTokenMs()} longer than the engine needed. */
    SLOW_FIRST_TOKEN(0),
    /**
     * The engine thread throws while producing the request's token after {@link FaultSettings#afterTokens()}: the
     * request fails (500, or an error event where its stream has begun) and the engine serves on.
     */
    ENGINE_ERROR(0);

    private final int status;

    FaultType(int status) {
        this.status = status;
    }

    /** HTTP status of an error fault; 0 for faults that act on the stream. */
    public int status() {
        return status;
    }

    public boolean isError() {
        return status != 0;
    }

    /** Lower-case flag/JSON name, e.g. {@code rate_limit}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a wire name; null when unknown. */
    public static FaultType byName(String name) {
        for (FaultType t : values()) {
            if (t.wireName().equals(name.trim().toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        return null;
    }
}
