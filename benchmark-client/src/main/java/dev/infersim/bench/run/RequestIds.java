package dev.infersim.bench.run;

import io.vertx.core.http.HttpClientRequest;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The {@code x-request-id} of each request of one lane: a prefix drawn once per lane and a count, so that every request
 * of a run has its own. A server that keeps the client's id (vLLM, the infersim mock) can then tell a request from its
 * retries: the infersim mock counts the attempts of each id it answered, across a fleet's replicas, and says which
 * attempt it answered in {@value #ATTEMPT_HEADER}, so that a gateway's hidden retry of a 429 or a 503 shows. Used on
 * its lane's event loop only.
 */
final class RequestIds {
    static final String HEADER = "x-request-id";
    static final String ATTEMPT_HEADER = "x-infersim-attempt";

    private final String prefix;
    private long next;

    RequestIds(String prefix) {
        this.prefix = prefix;
    }

    /** A lane's ids: {@code bench-} and 12 random hex digits, then {@code -N}. */
    static RequestIds random() {
        return new RequestIds(String.format("bench-%012x-", ThreadLocalRandom.current().nextLong() & 0xffff_ffff_ffffL));
    }

    /** Gives {@code request} the next id. */
    void name(HttpClientRequest request) {
        request.putHeader(HEADER, prefix + next++);
    }
}
