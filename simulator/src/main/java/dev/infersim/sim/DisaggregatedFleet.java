package dev.infersim.sim;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.KvTransferLink;
import dev.infersim.engine.KvTransferListener;

/**
 * A fleet split into a prefill pool and a decode pool, each behind its own {@link Router}: prefill/decode
 * disaggregation as DistServe (Zhong et al., OSDI 2024) proposes and llm-d's routing sidecar runs it over vLLM's
 * NixlConnector (https://github.com/llm-d/llm-d-inference-scheduler/blob/05399b3df7c213f21a28cc7631b6f2382ed56da6/pkg/sidecar/proxy/connector_nixlv2.go).
 * A request goes first to a prefill replica with {@code max_tokens 1} and {@code do_remote_decode}: it prefills,
 * samples one token (which the proxy drops) and finishes holding its blocks. The proxy then sends the original
 * request, with the prefill's {@code kv_transfer_params}, to a decode replica, which pulls the prompt's KV over its
 * {@link KvTransferLink} and generates every output token the client sees. The prefill replica frees the held blocks
 * when the decode replica is done with them ({@link KvTransferListener}). The hand-off between the two takes no time
 * (a proxy on the decode pod's loopback).
 */
public final class DisaggregatedFleet {
    private final Replica[] prefill;
    private final Replica[] decode;
    private final Router prefillRouter;
    private final Router decodeRouter;
    private final Fleet fleet;

    /**
     * @param prefill       the prefill pool, serving from time 0
     * @param decode        the decode pool; their engines are connected to {@code link} here
     * @param link          what decode engines pull KV over
     */
    public DisaggregatedFleet(Replica[] prefill, Router prefillRouter, Replica[] decode, Router decodeRouter,
                              KvTransferLink link) {
        ConfigException.check(prefill.length >= 1, "--prefill-replicas must be >= 1, got %d", prefill.length);
        ConfigException.check(decode.length >= 1, "--decode-replicas must be >= 1, got %d", decode.length);
        this.prefill = prefill.clone();
        this.decode = decode.clone();
        this.prefillRouter = prefillRouter;
        this.decodeRouter = decodeRouter;
        KvTransferListener release = (r, now) -> ((Handoff) r.attachment()).release();
        for (Replica d : decode) {
            d.engine().connectKvTransfer(link, release);
        }
        Replica[] all = new Replica[prefill.length + decode.length];
        System.arraycopy(prefill, 0, all, 0, prefill.length);
        System.arraycopy(decode, 0, all, prefill.length, decode.length);
        this.fleet = Fleet.fixed(all);
    }

    /** Every replica of both pools, as one fixed fleet whose steps the simulation runs. */
    Fleet fleet() {
        return fleet;
    }

    public Replica[] prefillReplicas() {
        return prefill.clone();
    }

    public Replica[] decodeReplicas() {
        return decode.clone();
    }

    /** The prefill replica the prefill pool's router picks for {@code w}. */
    Replica routePrefill(RoutedRequest w) {
        return prefill[prefillRouter.route(w, prefill)];
    }

    /** The decode replica the decode pool's router picks for {@code w}. */
    Replica routeDecode(RoutedRequest w) {
        return decode[decodeRouter.route(w, decode)];
    }

    /** A request's prefill on its replica, which the decode request carries to free the held blocks by. */
    interface Handoff {
        /** The decode side no longer needs the prefill side's blocks. */
        void release();
    }

    /** Per-pool figures: replicas, GPUs, engine counters, and the KV moved between the pools. */
    Pools pools(double spanSeconds) {
        long transfers = 0;
        long tokens = 0;
        for (Replica r : decode) {
            transfers += r.engine().kvTransfers();
            tokens += r.engine().kvTransferredTokens();
        }
        KvTransferLink link = decode[0].engine().kvTransferLink();
        return new Pools(pool(prefill, spanSeconds), pool(decode, spanSeconds), transfers, tokens,
                tokens * decode[0].engine().capacity().kvBytesPerTokenPerGpu()
                        * decode[0].engine().deployment().tensorParallelSize(), link.gbps(), link.latencyMs());
    }

    private static Pool pool(Replica[] replicas, double spanSeconds) {
        long steps = 0;
        long preemptions = 0;
        long peakWaiting = 0;
        double peakKv = 0;
        int gpus = 0;
        for (Replica r : replicas) {
            EngineCore e = r.engine();
            steps += e.steps();
            preemptions += e.preemptions();
            peakWaiting = Math.max(peakWaiting, r.peakWaiting());
            peakKv = Math.max(peakKv, r.peakKvUsage());
            gpus += e.deployment().tensorParallelSize();
        }
        return new Pool(replicas.length, gpus, spanSeconds * gpus, steps, preemptions, peakWaiting, peakKv);
    }

    /** The pools of a disaggregated run as its result holds them ({@code infersim_disaggregation}). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Pools(Pool prefill, Pool decode, long kvTransfers, long kvTransferredTokens,
                        double kvTransferredBytes, double kvTransferGbps, double kvTransferLatencyMs) {
    }

    /** One pool: its replicas and GPUs, the GPU-seconds they held, and their engines' counters and peaks. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Pool(int replicas, int gpus, double gpuSeconds, long engineSteps, long enginePreemptions,
                       long waitingPeak, double kvCacheUsagePeak) {
    }

    /** Whether {@code r} is a prefill-pool request (its tokens are the proxy's, not the client's). */
    static boolean isPrefillRequest(EngineRequest r) {
        return r.disaggregation() == EngineRequest.Disaggregation.REMOTE_DECODE;
    }
}
