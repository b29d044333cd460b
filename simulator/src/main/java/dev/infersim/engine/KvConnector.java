package dev.infersim.engine;

import java.util.ArrayList;
import java.util.Objects;

/**
 * The decode side of prefill/decode disaggregation: remote-prefill requests pulling their prompt's KV, as vLLM's
 * scheduler runs a KV connector (NixlConnector) at
 * https://github.com/vllm-project/vllm/blob/9aaf83ef502fc37bc647f6e474314d48ba36cd1c/vllm/v1/core/sched/scheduler.py.
 * A {@link EngineRequest.Disaggregation#REMOTE_PREFILL} request, at the head of the waiting queue, takes its locally
 * cached prefix ({@code get_computed_blocks}) and is told the rest of its prompt is external
 * ({@code get_num_new_matched_tokens}: {@code len(prompt) - num_computed_tokens}, loaded asynchronously); blocks for the
 * whole prompt are allocated ({@code allocate_slots}, or the admission loop stops as for any request) and it waits in
 * {@code WAITING_FOR_REMOTE_KVS}, outside the running batch and the token budget, while the {@link KvTransferLink}
 * carries its KV ({@link #startPull}). Once it has arrived the request is cached and goes back to the front of the
 * waiting queue ({@code skipped_waiting}, served first under FCFS) with every prompt token computed but the last
 * ({@code _update_waiting_for_remote_kv}: "on a full prompt hit, we need to re-compute the last token"), so its first
 * step computes one token at the prompt's context and samples its first output ({@link #receive}).
 *
 * <p>Unconnected (no link), it pulls nothing and counts nothing.
 */
final class KvConnector {
    private final KvCacheManager kv;
    private final WaitingQueue waiting;
    private KvTransferLink link;
    private double kvBytesPerToken;
    private KvTransferListener listener;
    private long linkFreeNanos;
    /** Requests whose KV is in transit, in the order their pulls began. */
    private final ArrayList<EngineRequest> loading = new ArrayList<>();
    private long transfers;
    private long transferredTokens;
    private long externalQueries;

    KvConnector(KvCacheManager kv, WaitingQueue waiting) {
        this.kv = kv;
        this.waiting = waiting;
    }

    /** Pulls over {@code link} from now on, {@code kvBytesPerToken} per GPU; {@code listener} (or nobody) hears of arrivals. */
    void connect(KvTransferLink link, double kvBytesPerToken, KvTransferListener listener) {
        this.link = Objects.requireNonNull(link, "link");
        this.kvBytesPerToken = kvBytesPerToken;
        this.listener = listener;
    }

    /** The link pulls go over; null when unconnected. */
    KvTransferLink link() { return link; }

    /** Counts an admission's lookup: vLLM asks the connector for every token not found locally. */
    void recordQuery(EngineRequest r, int cachedTokens) {
        if (link != null) {
            externalQueries += r.totalTokens() - cachedTokens;
        }
    }

    /**
     * Starts pulling the head of the waiting queue's prompt KV: its cached prefix plus blocks for the rest of the prompt,
     * which the link brings; false (nothing changed) when the blocks do not fit. The request leaves the queue and waits
     * for its KV outside the running batch.
     */
    boolean startPull(EngineRequest r, long nowNanos) {
        int cachedBlocks = kv.findCachedBlocks(r);
        int cachedTokens = cachedBlocks * kv.blockSize();
        int tokens = r.promptTokens() - cachedTokens;
        if (!kv.allocateNew(r, cachedBlocks, tokens)) {
            return false;
        }
        waiting.poll();
        kv.recordQuery(r.totalTokens(), cachedTokens);
        externalQueries += r.totalTokens() - cachedTokens;
        r.cachedPromptTokens = cachedTokens;
        r.status = EngineRequest.Status.LOADING;
        r.kvPull = EngineRequest.KvPull.IN_FLIGHT;
        r.kvTransferTokens = tokens;
        r.kvTransferStartNanos = nowNanos;
        linkFreeNanos = Math.max(linkFreeNanos, nowNanos) + link.wireNanos(tokens, kvBytesPerToken);
        r.kvTransferEndNanos = linkFreeNanos + link.latencyNanos();
        loading.add(r);
        transfers++;
        transferredTokens += tokens;
        return true;
    }

    /**
     * Moves every request whose KV has arrived by {@code nowNanos} back to the front of the waiting queue, in the order
     * their pulls began, with its prompt computed but the last token (which it recomputes to sample), its blocks cached.
     */
    void receive(long nowNanos) {
        for (int i = loading.size() - 1; i >= 0; i--) { // back to front, so the earliest pull ends up first in the queue
            EngineRequest r = loading.get(i);
            if (r.kvTransferEndNanos > nowNanos) {
                continue;
            }
            loading.remove(i);
            r.computedTokens = r.promptTokens();
            kv.cacheComputedBlocks(r);
            r.computedTokens = r.promptTokens() - 1;
            noLongerNeeded(r, nowNanos);
            r.kvPull = EngineRequest.KvPull.ARRIVED;
            r.status = EngineRequest.Status.WAITING;
            waiting.addPreempted(r);
        }
    }

    /** Drops an aborted request whose KV is in transit (its blocks are the caller's to free). */
    void abortPull(EngineRequest r) {
        loading.remove(r);
    }

    /** Tells the listener the prefill side's blocks for this remote-prefill request may go, once. */
    void noLongerNeeded(EngineRequest r, long nowNanos) {
        if (listener != null && (r.kvPull == EngineRequest.KvPull.PENDING || r.kvPull == EngineRequest.KvPull.IN_FLIGHT)) {
            listener.remoteKvDone(r, nowNanos);
        }
    }

    /** When the earliest KV in transit arrives; {@code Long.MAX_VALUE} when none is. */
    long nextArrivalNanos() {
        long next = Long.MAX_VALUE;
        for (int i = 0; i < loading.size(); i++) {
            next = Math.min(next, loading.get(i).kvTransferEndNanos);
        }
        return next;
    }

    int loadingCount() { return loading.size(); }
    long transfers() { return transfers; }
    long transferredTokens() { return transferredTokens; }
    long externalQueries() { return externalQueries; }
}
