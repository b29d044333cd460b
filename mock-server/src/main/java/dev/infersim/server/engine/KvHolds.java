package dev.infersim.server.engine;

import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The KV blocks a prefill engine keeps for decode sides, as vLLM's NixlConnector does on the prefill side
 * ({@code do_remote_decode}; see {@link KvTransferParams}): a finished prefill's blocks stay allocated until the decode
 * side says it has read them or its lease runs out, in model time from the prefill's finish, extended by the decode
 * side's heartbeats. Engine thread only.
 */
final class KvHolds {
    private final EngineCore engine;
    private final int rank;
    private final ModelClock clock;
    /** The connector; null without one, when nothing is ever held. */
    private final KvTransferConnector kv;
    /** Finished prefills holding their blocks, by remote_request_id, and their leases' ends (model ns). */
    private final HashMap<String, Choice> held = new HashMap<>();
    private final HashMap<String, Long> leaseEnds = new HashMap<>();

    KvHolds(EngineCore engine, int rank, ModelClock clock, KvTransferConnector kv) {
        this.engine = engine;
        this.rank = rank;
        this.clock = clock;
        this.kv = kv;
    }

    /** A finished prefill's blocks wait for the decode side, its lease running from its finish. */
    void hold(Choice c, long finishedNanos) {
        EngineRequest r = c.request;
        String id = c.kvRequestId;
        c.holdKv(kv.held(r, rank, id));
        held.put(id, c);
        leaseEnds.put(id, finishedNanos + kv.config().leaseNanos());
        kv.metrics(rank).held(held.size());
    }

    /** A decode side has read a hold (its blocks go now) or renews its lease. */
    void apply(KvTransferConnector.Notice notice) {
        if (notice.heartbeat()) {
            long until = clock.modelNow() + kv.config().leaseExtensionNanos();
            leaseEnds.computeIfPresent(notice.requestId(), (id, end) -> Math.max(end, until));
            return;
        }
        Choice c = held.remove(notice.requestId());
        if (c == null) {
            kv.metrics(rank).unknownNotice(); // expired already, or never held here (vLLM logs a warning)
            return;
        }
        leaseEnds.remove(notice.requestId());
        engine.releaseKv(c.request);
        kv.metrics(rank).held(held.size());
    }

    /** Frees the blocks of every hold whose lease ended by {@code nowNanos} (vLLM's P side counts them expired). */
    void expire(long nowNanos) {
        if (leaseEnds.isEmpty()) {
            return;
        }
        for (Iterator<Map.Entry<String, Long>> it = leaseEnds.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> lease = it.next();
            if (lease.getValue() <= nowNanos) {
                it.remove();
                engine.releaseKv(held.remove(lease.getKey()).request);
                kv.metrics(rank).expired();
                kv.metrics(rank).held(held.size());
            }
        }
    }

    /** Model time of the first lease to end; {@code Long.MAX_VALUE} when nothing is held. */
    long nextLeaseEnd() {
        long next = Long.MAX_VALUE;
        for (long end : leaseEnds.values()) {
            next = Math.min(next, end);
        }
        return next;
    }
}
