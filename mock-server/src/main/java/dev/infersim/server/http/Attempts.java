package dev.infersim.server.http;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.shareddata.Shareable;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How many times the servers of one Vert.x instance (a replica alone, or every replica of a fleet) were asked to answer
 * the same client request: a gateway that retries a 429, a 503 or a timed-out attempt on another replica sends the
 * request again, and the client only ever sees the last answer. A request is known by the {@code x-request-id} its
 * client sent (infersim bench sends a unique one per request), or else by a fingerprint of its route and body (so a
 * client that sends the same body twice without an id is counted as one request attempted twice). Every answer of an
 * inference route carries the count so far ({@code x-infersim-attempt}), and the ground truth its {@code attempt}.
 * Requests are remembered for {@value #KEPT_SECONDS} s after their last attempt, at most {@value #KEPT} of them.
 */
public final class Attempts implements Shareable {
    public static final String HEADER = "x-infersim-attempt";
    static final int KEPT = 65_536;
    static final long KEPT_SECONDS = 300;
    /** Bytes of a body that its fingerprint reads, at most: enough to tell prompts apart, cheap on an event loop. */
    private static final int FINGERPRINT_BYTES = 64 * 1024;
    private static final String SHARED_MAP = "infersim.attempts";

    private record Seen(int attempts, long lastNanos) { }

    // guarded by this; insertion order, the oldest first (an entry moves to the end when seen again)
    private final LinkedHashMap<String, Seen> seen = new LinkedHashMap<>();

    /** The counter shared by every server on {@code vertx}. */
    public static Attempts of(Vertx vertx) {
        return (Attempts) vertx.sharedData().getLocalMap(SHARED_MAP).computeIfAbsent("attempts", k -> new Attempts());
    }

    /**
     * The request's key: {@code "id:" + x-request-id} when the client sent one, else {@code "body:"} and a 64-bit
     * FNV-1a hash of {@code route}, the body's length and its first {@value #FINGERPRINT_BYTES} bytes.
     */
    public static String key(String clientRequestId, String route, Buffer body) {
        if (clientRequestId != null && !clientRequestId.isBlank()) {
            return "id:" + clientRequestId;
        }
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < route.length(); i++) {
            h = (h ^ route.charAt(i)) * 0x100000001b3L;
        }
        int length = body == null ? 0 : body.length();
        h = (h ^ length) * 0x100000001b3L;
        for (int i = 0, n = Math.min(length, FINGERPRINT_BYTES); i < n; i++) {
            h = (h ^ (body.getByte(i) & 0xff)) * 0x100000001b3L;
        }
        return "body:" + Long.toHexString(h);
    }

    /** Counts one more attempt of request {@code key} at {@code nowNanos} (System.nanoTime); returns its number, from 1. */
    public synchronized int count(String key, long nowNanos) {
        Seen before = seen.remove(key);
        int n = before != null && nowNanos - before.lastNanos() <= KEPT_SECONDS * 1_000_000_000L ? before.attempts() + 1 : 1;
        seen.put(key, new Seen(n, nowNanos));
        Iterator<Map.Entry<String, Seen>> oldest = seen.entrySet().iterator();
        while (oldest.hasNext()) {
            Seen s = oldest.next().getValue();
            if (seen.size() <= KEPT && nowNanos - s.lastNanos() <= KEPT_SECONDS * 1_000_000_000L) {
                break;
            }
            oldest.remove();
        }
        return n;
    }
}
