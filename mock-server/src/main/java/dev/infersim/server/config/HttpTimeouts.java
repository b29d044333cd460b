package dev.infersim.server.config;

import dev.infersim.server.http.ConnectionGuard;

/**
 * How long a connection may hold the server without a request in progress ({@link ConnectionGuard}) or without any
 * traffic at all. A timeout of 0 is none.
 *
 * @param keepAliveMs an idle connection between requests (or a new one that has sent nothing) is closed after this
 *                    (uvicorn's {@code timeout_keep_alive}; vLLM sets it from {@code VLLM_HTTP_TIMEOUT_KEEP_ALIVE},
 *                    5 s); by default nginx's 75 s, longer than the 60 s that gateways and load balancers keep idle
 *                    upstream connections, so the client side closes first and no request races a server-side close
 * @param headerMs    a request whose head has begun must be complete within this (nginx's and Node.js's 60 s), so a
 *                    client sending half a header holds its connection that long at most
 * @param idleMs      no byte read or written for this long closes the connection even with a request in progress
 *                    (Vert.x's idle timeout): long enough for a non-stream request that waits minutes for its tokens
 */
public record HttpTimeouts(long keepAliveMs, long headerMs, long idleMs) {
    /** nginx's keep-alive, Node.js's and nginx's header timeout, and 10 minutes of silence. */
    public static final HttpTimeouts DEFAULTS = new HttpTimeouts(75_000, 60_000, 600_000);

    public HttpTimeouts {
        if (keepAliveMs < 0 || headerMs < 0 || idleMs < 0) {
            throw new IllegalArgumentException("HTTP timeouts must be >= 0 (0: none), got keep-alive " + keepAliveMs
                    + " ms, header " + headerMs + " ms, idle " + idleMs + " ms");
        }
    }
}
