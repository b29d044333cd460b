package dev.infersim.server.model;

import dev.infersim.server.json.ApiException;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The token-id requests a server is answering, by request id, for vLLM's gRPC {@code Abort} (which names requests by
 * the {@code request_id} their {@code Generate} gave) and {@code GetServerInfo} (when the last one arrived). As vLLM's
 * output processor, a request id that is already running is refused ({@code "Request id X already running."}).
 */
public final class TokenRequests {
    /** A running request as Abort sees it. */
    public interface Running {
        String requestId();

        /** Ends the request now (its choices finish with {@code abort}); callable from any thread. */
        public void abort();
    }

    private final ConcurrentHashMap<String, Running> running = new ConcurrentHashMap<>();
    private final long startedEpochMillis = System.currentTimeMillis();
    private volatile long lastReceivedEpochMillis;

    /** A request arrived now (what GetServerInfo reports as last_receive_timestamp). */
    public void received() {
        lastReceivedEpochMillis = System.currentTimeMillis();
    }

    /** Registers a request about to run; 400 when its id is running already. */
    public void started(Running exchange) {
        if (running.putIfAbsent(exchange.requestId(), exchange) != null) {
            throw ApiException.badRequest(null, "Request id " + exchange.requestId() + " already running.");
        }
    }

    public void ended(Running exchange) {
        running.remove(exchange.requestId(), exchange);
    }

    /** Aborts the running request of this id, if any; whether there was one. */
    public boolean abort(String requestId) {
        Running e = running.get(requestId);
        if (e != null) {
            e.abort();
        }
        return e != null;
    }

    /** Unix seconds of the last request's arrival; 0 before any. */
    public double lastReceivedEpochSeconds() {
        return lastReceivedEpochMillis / 1000.0;
    }

    /** Seconds since the server started. */
    public double uptimeSeconds() {
        return (System.currentTimeMillis() - startedEpochMillis) / 1000.0;
    }
}
